package driver

import (
	"os"
	"strings"
)

// expandResponseFiles replaces each @file argument by the arguments the
// file holds, as gcc does: whitespace-separated, with single and double
// quotes and backslash escapes. An @file that cannot be read stays as it
// is (gcc then treats it as a file name).
func expandResponseFiles(args []string) []string {
	var out []string
	for _, a := range args {
		if len(a) < 2 || a[0] != '@' {
			out = append(out, a)
			continue
		}
		data, err := os.ReadFile(a[1:])
		if err != nil {
			out = append(out, a)
			continue
		}
		out = append(out, expandResponseFiles(SplitWords(string(data)))...)
	}
	return out
}

// SplitWords splits s into words as gcc reads a response file (and a
// shell would, without expanding anything): at white space, with single
// and double quotes and backslash escapes.
func SplitWords(s string) []string {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && i+1 < len(s) {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inArg = c, true
		case c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			inArg = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteByte(c)
			inArg = true
		}
	}
	if inArg {
		args = append(args, cur.String())
	}
	return args
}
