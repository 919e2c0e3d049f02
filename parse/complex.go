package parse

import "bytes"

// GNU C's complex integer types (_Complex unsigned char, unsigned long
// _Complex, ...) that cc/v4 does not know: it knows _Complex with char,
// short, int, long, long long, unsigned short and unsigned alone, and
// failed a type check on the others ("TODO missed/failed type check"),
// so a unit declaring one was built unwoven, with a warning (libffi's
// testsuite, complex_int.c). For the parse only, complexIntegers writes
// each such specifier sequence as one cc/v4 knows of the same size: the
// signedness goes, and int where another word names the size.

// complexWords are the words a specifier sequence around _Complex may
// hold.
var complexWords = map[string]bool{
	"char": true, "short": true, "int": true, "long": true,
	"signed": true, "__signed": true, "__signed__": true, "unsigned": true,
	"_Complex": true, "__complex": true, "__complex__": true,
	"const": true, "__const": true, "__const__": true, "volatile": true, "__volatile": true, "__volatile__": true,
	"static": true, "extern": true, "register": true, "auto": true, "typedef": true, "_Thread_local": true, "__thread": true,
	"inline": true, "__inline": true, "__inline__": true, "__extension__": true,
}

// complexIntegers returns text with every complex integer type's
// specifiers rewritten with same-length replacements: a copy if there is
// any, else text itself.
func complexIntegers(text []byte) []byte {
	out, copied := text, false
	for off := 0; ; {
		k := bytes.Index(text[off:], []byte("omplex"))
		if k < 0 {
			return out
		}
		w0, w1 := wordAround(text, off+k)
		off = w1
		if !isComplexWord(text[w0:w1]) {
			continue
		}
		words := [][2]int{{w0, w1}}
		for i := w0; ; { // the words before
			j := i
			for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t' || text[j-1] == '\n') {
				j--
			}
			a, b := wordAround(text, j-1)
			if b != j || a == b || !isSpecWord(text[a:b]) {
				break
			}
			words, i = append(words, [2]int{a, b}), a
		}
		for i := w1; ; { // the words after
			j := skipSpace(text, i)
			a, b := wordAround(text, j)
			if a != j || a == b || !isSpecWord(text[a:b]) {
				break
			}
			words, i = append(words, [2]int{a, b}), b
			off = b
		}
		if r := complexRewrite(text, words); r != nil {
			if !copied {
				out, copied = bytes.Clone(text), true
			}
			for _, e := range r {
				copy(out[e.at:], e.text)
			}
		}
	}
}

// A wordEdit writes text at offset at.
type wordEdit struct {
	at   int
	text []byte
}

// complexRewrite returns the edits that make the specifier words (spans
// of text) one cc/v4 knows, or nil if they are (no integer word, or only
// the size's).
func complexRewrite(text []byte, words [][2]int) []wordEdit {
	var sign, ints [][2]int
	sized := false // char, short or long
	for _, w := range words {
		switch s := string(text[w[0]:w[1]]); s {
		case "char", "short", "long":
			sized = true
		case "int":
			ints = append(ints, w)
		case "signed", "__signed", "__signed__", "unsigned":
			sign = append(sign, w)
		}
	}
	if len(sign) == 0 && (len(ints) == 0 || !sized) {
		return nil
	}
	var edits []wordEdit
	blank := func(w [2]int) { edits = append(edits, wordEdit{w[0], bytes.Repeat([]byte(" "), w[1]-w[0])}) }
	for _, w := range sign {
		blank(w)
	}
	for i, w := range ints {
		if i > 0 || sized {
			blank(w)
		}
	}
	if !sized && len(ints) == 0 {
		// _Complex unsigned: int in the first sign word's place.
		edits[0].text = append([]byte("int"), edits[0].text[3:]...)
	}
	return edits
}

// wordAround returns the span of the identifier-like word holding text[i]
// (an empty span at i if text[i] is no word byte).
func wordAround(text []byte, i int) (int, int) {
	if i < 0 || i >= len(text) || !isWordByte(text[i]) {
		return i, i
	}
	a, b := i, i
	for a > 0 && isWordByte(text[a-1]) {
		a--
	}
	for b < len(text) && isWordByte(text[b]) {
		b++
	}
	return a, b
}

func isComplexWord(w []byte) bool {
	s := string(w)
	return s == "_Complex" || s == "__complex" || s == "__complex__"
}

func isSpecWord(w []byte) bool { return complexWords[string(w)] }
