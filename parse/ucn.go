package parse

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Extended identifiers.
//
// C99 allows universal character names in identifiers (caf\u00e9), gcc 10+
// and clang UTF-8 as well (café). clang's -E writes UTF-8, which cc/v4
// reads; gcc's writes every extended character of an identifier as a UCN
// (caf\U000000e9), which cc/v4 does not read. For the parse only (the woven
// text keeps the UCNs, as the compiler will read them), ucnIdentifiers
// turns the backslash of each into a '$', which keeps every byte offset
// and makes an identifier of the same name wherever the UCN occurs
// (gcc writes one form for one character). DisplayName turns both forms
// back into UTF-8 for people.

// ucnLen returns the length of the UCN at the start of b (\uXXXX or
// \UXXXXXXXX, after the backslash or the '$' standing for it), or 0.
func ucnLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	n := 0
	switch b[1] {
	case 'u':
		n = 6
	case 'U':
		n = 10
	default:
		return 0
	}
	if len(b) < n {
		return 0
	}
	for _, c := range b[2:n] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return 0
		}
	}
	return n
}

// ucnIdentifiers returns text with the backslash of every UCN outside
// string and character literals, comments and linemarkers replaced by '$'
// (a copy if there is any, else text itself).
func ucnIdentifiers(text []byte) []byte {
	if !bytes.Contains(text, []byte(`\u`)) && !bytes.Contains(text, []byte(`\U`)) {
		return text
	}
	out := text
	for i := 0; i < len(text); i++ {
		if n := skipNonCode(text, i); n > i {
			i = n - 1
			continue
		}
		if n := ucnLen(text[i:]); text[i] == '\\' && n > 0 {
			if &out[0] == &text[0] {
				out = append([]byte(nil), text...)
			}
			out[i] = '$'
			i += n - 1
		}
	}
	return out
}

// DisplayName returns an identifier (or a message, a type name) with the
// universal character names in it, in either form (\u00e9 or $u00e9, see
// ucnIdentifiers), written in UTF-8.
func DisplayName(s string) string {
	if !strings.Contains(s, `\u`) && !strings.Contains(s, `\U`) && !strings.Contains(s, `$u`) && !strings.Contains(s, `$U`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '\\' || s[i] == '$' {
			if n := ucnLen([]byte(s[i:min(len(s), i+10)])); n > 0 {
				r, err := strconv.ParseUint(s[i+2:i+n], 16, 32)
				if err == nil && utf8.ValidRune(rune(r)) && r >= 0xa0 {
					b.WriteRune(rune(r))
					i += n
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
