package parse

import (
	"bytes"
	"slices"
)

// C23 syntax gcc and clang accept in every C mode, which cc/v4 does not
// parse: attribute specifier sequences ([[__maybe_unused__]],
// [[gnu::cold]], [[fallthrough]];) and _Static_assert with no message.
// gnulib writes both since 2023 (sed 4.9, grep, coreutils: its
// _GL_ATTRIBUTE_* macros and static_assert), so each unit that includes
// its headers was built unwoven. For the parse only, c23Syntax blanks
// them (the woven text keeps them, as the compiler will read them): an
// attribute tells the weave nothing it needs, and a static assertion
// declares nothing.

// c23Syntax returns text with every span of c23Spans turned to spaces
// (newlines and linemarkers kept): a copy if there is any, else text itself.
func c23Syntax(text []byte) []byte {
	spans := c23Spans(text)
	if len(spans) == 0 {
		return text
	}
	out := bytes.Clone(text)
	for _, s := range spans {
		for k := s.from; k < s.to; k++ {
			if text[k] == '#' && text[k-1] == '\n' {
				k = skipNonCode(text, k) // a linemarker stays
			} else if text[k] != '\n' {
				out[k] = ' '
			}
		}
	}
	return out
}

// A c23Span is the place of an attribute specifier sequence or a
// message-less static assertion in a unit's text.
type c23Span struct {
	from, to int
	attr     bool // an attribute specifier sequence
}

// c23Spans returns, in order, the attribute specifier sequences and the
// one-argument _Static_assert or static_assert declarations (to their
// ';') outside literals, comments and linemarkers.
func c23Spans(text []byte) []c23Span {
	if !mayHoldC23(text) {
		return nil
	}
	var asserts []int // where a static assertion may start, in order
	for _, w := range []string{"_Static_assert", "static_assert"} {
		for off := 0; ; {
			k := bytes.Index(text[off:], []byte(w))
			if k < 0 {
				break
			}
			if off += k; off == 0 || !isWordByte(text[off-1]) {
				asserts = append(asserts, off)
			}
			off += len(w)
		}
	}
	slices.Sort(asserts)
	var spans []c23Span
	for i := 0; i < len(text); i++ {
		// To the next byte that may start a literal, comment, linemarker,
		// attribute or static assertion.
		next := len(text)
		for len(asserts) > 0 && asserts[0] < i {
			asserts = asserts[1:]
		}
		if len(asserts) > 0 {
			next = asserts[0]
		}
		if k := bytes.IndexAny(text[i:next], "\"'/#["); k >= 0 {
			next = i + k
		}
		if i = next; i >= len(text) {
			break
		}
		if n := skipNonCode(text, i); n > i {
			i = n - 1
			continue
		}
		end, attr := 0, false
		if text[i] == '[' {
			if j := skipSpace(text, i+1); j < len(text) && text[j] == '[' {
				end, attr = attributeEnd(text, j+1), true
			}
		} else if text[i] != '#' {
			end = staticAssertEnd(text, i)
		}
		if end > 0 {
			spans = append(spans, c23Span{i, end, attr})
			i = end - 1
		}
	}
	return spans
}

// AttributesBefore returns the start of the C23 attribute specifier
// sequences that end just before off (with only white space or comments
// between), or off if none does: where text inserted before a
// declaration must go, so that `[[noreturn]] void die(...)` keeps its
// attribute.
func (u *Unit) AttributesBefore(off int) int {
	u.c23Once.Do(func() { u.c23 = c23Spans(u.Text) })
	for k := len(u.c23) - 1; k >= 0; k-- {
		s := u.c23[k]
		if s.to > off {
			continue
		}
		if !s.attr || skipSpace(u.Text[:off], s.to) < off {
			break
		}
		off = s.from
	}
	return off
}

// mayHoldC23 reports whether text may hold what c23Syntax blanks: "[["
// (or "[ ["), or a static assertion; most units hold neither, and are not
// scanned.
func mayHoldC23(text []byte) bool {
	for i := 0; ; i++ {
		k := bytes.IndexByte(text[i:], '[')
		if k < 0 {
			// (Searching for "tatic_assert" takes 30 times as long: 't'
			// is common.)
			return bytes.Contains(text, []byte("_assert"))
		}
		if i += k; i+1 < len(text) && (text[i+1] == '[' || text[i+1] == ' ' && i+2 < len(text) && text[i+2] == '[') {
			return true
		}
	}
}

// skipNonCode returns the end of the string or character literal, comment
// or linemarker (a '#' first on its line) at i, or i if there is none.
func skipNonCode(text []byte, i int) int {
	switch c := text[i]; {
	case c == '"' || c == '\'':
		// To the closing quote, or the end of the line (an apostrophe
		// that starts no literal, such as C23's digit separator).
		for i++; i < len(text) && text[i] != c && text[i] != '\n'; i++ {
			if text[i] == '\\' {
				i++
			}
		}
		return min(i+1, len(text))
	case c == '/' && i+1 < len(text) && text[i+1] == '*':
		if end := bytes.Index(text[i+2:], []byte("*/")); end >= 0 {
			return i + 2 + end + 2
		}
		return len(text)
	case c == '/' && i+1 < len(text) && text[i+1] == '/', c == '#' && (i == 0 || text[i-1] == '\n'):
		if end := bytes.IndexByte(text[i:], '\n'); end >= 0 {
			return i + end
		}
		return len(text)
	}
	return i
}

// skipSpace returns the index of the first byte at or after i that is not
// white space, a comment or a linemarker (-E writes one inside a
// declaration whose macro comes from a system header).
func skipSpace(text []byte, i int) int {
	for i < len(text) {
		switch {
		case text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r' || text[i] == '\f' || text[i] == '\v':
			i++
		case text[i] == '/' && i+1 < len(text) && (text[i+1] == '*' || text[i+1] == '/'),
			text[i] == '#' && (i == 0 || text[i-1] == '\n'):
			i = skipNonCode(text, i)
		default:
			return i
		}
	}
	return i
}

// balancedEnd returns the end of the bracketed text from i, where depth
// brackets are open (after the bracket that closes the first), and
// whether a ',' is at depth 1 in it; 0 if a ';' or the end of the text
// comes first.
func balancedEnd(text []byte, i, depth int) (end int, comma bool) {
	for ; i < len(text); i++ {
		if n := skipNonCode(text, i); n > i {
			i = n - 1
			continue
		}
		switch text[i] {
		case '[', '(', '{':
			depth++
		case ']', ')', '}':
			if depth--; depth == 0 {
				return i + 1, comma
			}
		case ',':
			comma = comma || depth == 1
		case ';':
			return 0, false // never inside an attribute or an assertion
		}
	}
	return 0, false
}

// attributeEnd returns the end of the attribute specifier sequence whose
// second '[' ends before i (after its "]]"), or 0 if brackets do not
// balance.
func attributeEnd(text []byte, i int) int {
	end, _ := balancedEnd(text, i, 2)
	return end
}

// staticAssertEnd returns the end (after its ';') of the one-argument
// _Static_assert or static_assert declaration at i, or 0 if there is none
// there.
func staticAssertEnd(text []byte, i int) int {
	j := i
	for j < len(text) && isWordByte(text[j]) {
		j++
	}
	if w := string(text[i:j]); w != "_Static_assert" && w != "static_assert" {
		return 0
	}
	j = skipSpace(text, j)
	if j >= len(text) || text[j] != '(' {
		return 0
	}
	end, comma := balancedEnd(text, j+1, 1)
	if end == 0 || comma {
		return 0 // with a message, cc/v4 parses it
	}
	if j = skipSpace(text, end); j < len(text) && text[j] == ';' {
		return j + 1
	}
	return 0
}
