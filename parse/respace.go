package parse

import (
	"bytes"
	"os"
)

// Respacing.
//
// The preprocessor writes each line's tokens one space apart: a run of
// blanks or a comment between two tokens of a source line becomes one
// space (a tab of indentation one byte, as in the source). gcc names a
// diagnostic's column by the byte's place in the line it compiles, then
// reads the source line to turn it into a display column, so on the
// preprocessed text a warning after `int a = x;      int b;` or after
// `/* ... */` on its line named a column to the left of the plain
// build's (3:24 for 3:43). Respace puts each token of a line of the
// program's own files (not system headers) back at its byte in the
// source line, by inserting blanks between tokens, as long as the
// tokens are the source line's, in order: from the first that is not
// (a macro's expansion, a line the source no longer has) the line is
// left as it is, as are lines after a line splice in the source. Only
// blanks between tokens are added, so the tokens and their lines are
// the preprocessor's: nothing but columns changes.

// Respace returns text (preprocessed, with linemarkers) with the tokens
// of the program's own lines at their source columns, and text itself if
// none moves. read reads a source file named by a linemarker (nil:
// os.ReadFile); a file it cannot read is left as it is.
func Respace(text []byte, read func(string) ([]byte, error)) []byte {
	r := newLineRespacer(read)
	var out []byte // nil until a line moves
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		next := end + 1
		moved := r.respace(text[off:end])
		if moved != nil && out == nil {
			out = append(make([]byte, 0, len(text)+len(text)/16), text[:off]...)
		}
		if moved != nil {
			out = append(out, moved...)
			if end < len(text) {
				out = append(out, '\n')
			}
		} else if out != nil {
			out = append(out, text[off:min(next, len(text))]...)
		}
		off = next
	}
	if out == nil {
		return text
	}
	return out
}

// A lineRespacer respaces a text one line at a time, in order (Respace;
// the speculative parse respaces the compiler's output as it comes).
type lineRespacer struct {
	respacer
	file   string   // the linemarkers' current file
	lines  [][]byte // its lines, if it is the program's
	line   int      // the next line's number in it
	system bool     // it is a system header
}

// newLineRespacer returns a lineRespacer at the start of a text; read is
// Respace's.
func newLineRespacer(read func(string) ([]byte, error)) *lineRespacer {
	if read == nil {
		read = os.ReadFile
	}
	return &lineRespacer{respacer: respacer{read: read, files: map[string][][]byte{}}, system: true}
}

// respace takes the text's next line ln (without its newline) and returns
// it respaced, or nil if it stays as it is. The result is valid until the
// next call.
func (r *lineRespacer) respace(ln []byte) []byte {
	if len(ln) > 0 && ln[0] == '#' {
		if mk, ok := parseMarker(ln); ok {
			if mk.file != "\x00" && mk.file != r.file {
				r.file, r.lines = mk.file, nil
				if !mk.system && r.file != "" && r.file[0] != '<' {
					r.lines = r.source(r.file)
				}
			}
			r.line, r.system = mk.line, mk.system
			return nil
		}
	}
	var moved []byte
	if !r.system && r.line >= 1 && r.line <= len(r.lines) && len(ln) > 0 && ln[0] != '#' {
		if moved = respaceLine(ln, r.lines[r.line-1], r.buf[:0]); moved != nil {
			r.buf = moved
		}
	}
	r.line++
	return moved
}

// respacer holds Respace's source files, read once each, as lines.
type respacer struct {
	read  func(string) ([]byte, error)
	files map[string][][]byte
	buf   []byte
}

// source returns the lines of file (nil if it cannot be read); a line
// that ends in a splice is nil: what follows it is on the line after.
func (r *respacer) source(file string) [][]byte {
	if lines, ok := r.files[file]; ok {
		return lines
	}
	b, err := r.read(file)
	var lines [][]byte
	if err == nil {
		lines = bytes.Split(b, []byte("\n"))
		for i, l := range lines {
			l = bytes.TrimSuffix(l, []byte("\r"))
			if t := bytes.TrimRight(l, " \t"); len(t) > 0 && t[len(t)-1] == '\\' {
				l = nil
			}
			lines[i] = l
		}
	}
	r.files[file] = lines
	return lines
}

// respaceLine returns ln (a preprocessed line) with blanks inserted so
// that each of its tokens that matches the source line src's, in order,
// is at its byte in src, in buf; nil if nothing moves.
func respaceLine(ln, src, buf []byte) []byte {
	if src == nil {
		return nil
	}
	out := buf
	moved := false
	i, j, done := 0, 0, 0 // ln's next byte, src's, ln's bytes copied to out
	for {
		ti := nextToken(ln, i)
		tj := nextToken(src, j)
		if ti >= len(ln) || tj >= len(src) {
			break
		}
		ei, ej := tokenEnd(ln, ti), tokenEnd(src, tj)
		if !bytes.Equal(ln[ti:ei], src[tj:ej]) {
			break
		}
		// ln[done:ti] precedes the token (blanks, a comment under -C):
		// the token starts after it, padded out to tj.
		if len(out)-len(buf)+ti-done > tj {
			break // already to the right: the rest as it is
		}
		out = append(out, ln[done:ti]...)
		for len(out)-len(buf) < tj {
			out = append(out, ' ')
			moved = true
		}
		out = append(out, ln[ti:ei]...)
		done, i, j = ei, ei, ej
	}
	if !moved {
		return nil
	}
	return append(out, ln[done:]...)
}

// nextToken returns the offset of the first token in s at or after i
// (len(s) if none): blanks and comments are skipped.
func nextToken(s []byte, i int) int {
	for i < len(s) {
		switch c := s[i]; {
		case c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r':
			i++
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			k := bytes.Index(s[i+2:], []byte("*/"))
			if k < 0 {
				return len(s)
			}
			i += 2 + k + 2
		case c == '/' && i+1 < len(s) && s[i+1] == '/':
			return len(s)
		default:
			return i
		}
	}
	return i
}

// tokenEnd returns the end of the token that starts at s[i]: an
// identifier or keyword, a preprocessing number, a string or character
// literal (with its prefix), or one byte of a punctuator (whose bytes
// are adjacent in both lines, so none is put apart).
func tokenEnd(s []byte, i int) int {
	c := s[i]
	switch {
	case isWordByte(c) && !(c >= '0' && c <= '9') || c >= 0x80:
		k := i
		for k < len(s) && (isWordByte(s[k]) || s[k] >= 0x80 || s[k] == '$') {
			k++
		}
		if k < len(s) && (s[k] == '"' || s[k] == '\'') && isLiteralPrefix(s[i:k]) {
			return literalEnd(s, k)
		}
		return k
	case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
		k := i + 1
		for k < len(s) {
			d := s[k]
			if e := s[k-1] | 0x20; (d == '+' || d == '-') && (e == 'e' || e == 'p') {
				k++
			} else if isWordByte(d) || d == '.' || d == '\'' && k+1 < len(s) && isWordByte(s[k+1]) {
				k++
			} else {
				break
			}
		}
		return k
	case c == '"' || c == '\'':
		return literalEnd(s, i)
	}
	return i + 1
}

// literalEnd returns the end of the string or character literal whose
// quote is s[i] (the line's end if it does not close).
func literalEnd(s []byte, i int) int {
	q := s[i]
	for k := i + 1; k < len(s); k++ {
		switch s[k] {
		case '\\':
			k++
		case q:
			return k + 1
		}
	}
	return len(s)
}

// isLiteralPrefix reports whether p is an encoding prefix (L, u, U, u8).
func isLiteralPrefix(p []byte) bool {
	switch string(p) {
	case "L", "u", "U", "u8":
		return true
	}
	return false
}
