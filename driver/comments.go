package driver

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/weave-profiler/weave/parse"
)

// The -E step's comments.
//
// gcc's -Wimplicit-fallthrough (in -Wextra) takes a comment such as
// /* FALLTHROUGH */ before a case label for the statement that says so,
// and the compiler reads comments only in the text it preprocesses: a
// woven unit's comments are there only if the -E step keeps them (-C).
// But -C keeps every comment of every file, the system headers' too,
// which weave drops again before the parse: Lua's lapi.c is 112 KB of
// text without, 317 KB with, and its cc1 -E 14.5 against 20.0 ms of CPU
// (`perf stat -r 20`). So the -E step keeps the comments only where gcc
// could find such a comment in the unit: in the source file, looked at
// before the -E step, or in a header of the program the text names,
// looked at after it (then the -E step runs again, with -C). Whether a
// comment is one is gcc's regular expressions' (levels 2 to 4; see gcc's
// manual); a comment that only looks like one is taken as one, which
// costs only the time -C costs. At -Wimplicit-fallthrough=1 every
// comment is one: then -C, as before.

// fallthroughWord matches every comment gcc takes for a fallthrough
// comment at -Wimplicit-fallthrough=2, 3 or 4 (and some it does not):
// all of its expressions hold "fall", then "s", blanks or a dash, then
// "thru" or "through", in any case.
var fallthroughWord = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)falls?[ \t-]*thr(?:ough|u)`)
})

// preprocessC returns the preprocessed text of the C source in (its
// diagnostics in ppErr), with the comments kept where a fallthrough
// warning may need them (see above). flags are the -E step's; running
// is preprocessDirect's.
func (cfg *Config) preprocessC(c *cmdline, in *input, flags []string, stdinText []byte, ppErr *bytes.Buffer, running func()) ([]byte, error) {
	keep := c.fallthroughWarnings()
	check := false // the program's headers are to be looked at
	if keep && !c.anyCommentFallthrough() {
		src, err := stdinText, error(nil)
		if in.name != "-" {
			src, err = os.ReadFile(in.name)
		}
		if err == nil && !fallthroughComment(src) {
			keep, check = false, true
		}
	}
	withC := append(flags[:len(flags):len(flags)], "-CC")
	pp := flags
	if keep {
		pp = withC
	}
	text, err := cfg.preprocessDirect(pp, in.name, stdinText, ppErr, running)
	if err == nil && check && headerFallthrough(text, in.name) {
		keep = true
		ppErr.Reset()
		text, err = cfg.preprocessDirect(withC, in.name, stdinText, ppErr, running)
	}
	if keep && (err != nil || parse.CommentedDirective(text)) {
		// Under -C a comment before a # on its line makes the directive
		// text; the compiler obeys it: the unit is the text without -C.
		// A comment in a macro's argument pasted with ## fails the -E
		// step under -C alone.
		ppErr.Reset()
		return cfg.preprocessDirect(flags, in.name, stdinText, ppErr, running)
	}
	if err == nil && keep && ppErr.Len() > 0 {
		// -CC keeps a comment in a macro's body, so "#define X /* c */"
		// then "#define X" is a redefinition to gcc (zstd's units each
		// warned), where without comments it is none: the diagnostics
		// are those of the -E step without them.
		var pe bytes.Buffer
		if _, perr := cfg.preprocessDirect(flags, in.name, stdinText, &pe, running); perr == nil {
			ppErr.Reset()
			ppErr.Write(pe.Bytes())
		}
	}
	if err == nil && keep {
		if lits, commented := literals(text); commented {
			// A comment in a macro's argument (-C) or body (-CC) is in
			// its # string: S(a /* x */ b) is "a /* x */ b", not "a b".
			// The strings are taken from the text without comments.
			var pe bytes.Buffer
			plain, perr := cfg.preprocessDirect(flags, in.name, stdinText, &pe, running)
			if perr == nil {
				if merged, ok := stringsOf(text, lits, plain); ok {
					return merged, nil
				}
				ppErr.Reset()
				ppErr.Write(pe.Bytes())
				return plain, nil
			}
		}
	}
	return text, err
}

// stringsOf returns text, whose string literals are at lits, with those
// that hold a comment replaced by their counterparts in plain, the same
// unit preprocessed without comments; ok is false if the two differ
// otherwise in their string literals.
func stringsOf(text []byte, lits [][2]int, plain []byte) (out []byte, ok bool) {
	plits, _ := literals(plain)
	if len(plits) != len(lits) {
		return nil, false
	}
	start := 0
	for i, l := range lits {
		a, b := text[l[0]:l[1]], plain[plits[i][0]:plits[i][1]]
		if bytes.Equal(a, b) {
			continue
		}
		if !bytes.Contains(a, []byte("/*")) {
			return nil, false
		}
		out = append(append(out, text[start:l[0]]...), b...)
		start = l[1]
	}
	return append(out, text[start:]...), true
}

// literals returns where the string literals of preprocessed text are, in order
// (not its linemarkers' names), and whether one holds a comment's
// opening: under -C or -CC a comment in a stringized macro argument or
// body is part of the string.
func literals(text []byte) (lits [][2]int, commented bool) {
	for i := 0; i < len(text); i++ {
		k := bytes.IndexAny(text[i:], "\"'/#")
		if k < 0 {
			break
		}
		switch i += k; text[i] {
		case '#':
			if i == 0 || text[i-1] == '\n' {
				i = lineEnd(text, i)
			}
		case '"', '\'':
			if text[i] == '\'' && separator(text, i) {
				continue
			}
			q, start := text[i], i
			for i++; i < len(text) && text[i] != q && text[i] != '\n'; i++ {
				if text[i] == '\\' {
					i++
				}
			}
			if q == '"' && i < len(text) {
				lits = append(lits, [2]int{start, i + 1})
				commented = commented || bytes.Contains(text[start:i+1], []byte("/*")) // a // comment is stringized as /* */
			}
		case '/':
			if i+1 < len(text) && text[i+1] == '*' {
				end := bytes.Index(text[i+2:], []byte("*/"))
				if end < 0 {
					return lits, commented
				}
				i += end + 3
			} else if i+1 < len(text) && text[i+1] == '/' {
				i = lineEnd(text, i)
			}
		}
	}
	return lits, commented
}

// lineEnd returns the offset of the newline ending the line at i.
func lineEnd(text []byte, i int) int {
	if k := bytes.IndexByte(text[i:], '\n'); k >= 0 {
		return i + k
	}
	return len(text)
}

// anyCommentFallthrough reports whether the command line asks for
// -Wimplicit-fallthrough=1, where any comment is a fallthrough comment.
func (c *cmdline) anyCommentFallthrough() bool {
	for _, a := range c.args {
		if strings.Contains(a.flag, "implicit-fallthrough=1") && !strings.HasPrefix(a.flag, "-Wno-") {
			return true
		}
	}
	return false
}

// headerFallthrough reports whether a file the preprocessed text names,
// not a system header, has a fallthrough comment (or cannot be read).
// The source file itself, main, was looked at before. A file that is not
// there is a name from a #line (bison's grammar file): its text is in
// the file with the #line, looked at too.
func headerFallthrough(text []byte, main string) bool {
	files, system := sourceFiles(text)
	for _, f := range files {
		if f == main || system[f] {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil && !errors.Is(err, fs.ErrNotExist) || fallthroughComment(src) {
			return true
		}
	}
	return false
}

// fallthroughComment reports whether C source src has a comment that
// fallthroughWord matches. String and character literals are skipped (a
// digit separator is none); line splices are joined first, as the
// preprocessor joins them.
func fallthroughComment(src []byte) bool {
	if !hasFall(src) {
		return false
	}
	if bytes.Contains(src, []byte("\\\n")) || bytes.Contains(src, []byte("\\\r\n")) {
		src = bytes.ReplaceAll(bytes.ReplaceAll(src, []byte("\\\r\n"), nil), []byte("\\\n"), nil)
	}
	for i := 0; i < len(src); i++ {
		k := bytes.IndexAny(src[i:], `"'/`)
		if k < 0 {
			break
		}
		switch i += k; src[i] {
		case '"', '\'':
			if src[i] == '\'' && separator(src, i) {
				continue
			}
			q := src[i]
			for i++; i < len(src) && src[i] != q && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
		case '/':
			if i+1 >= len(src) {
				continue
			}
			var end int
			switch src[i+1] {
			case '*':
				end = bytes.Index(src[i+2:], []byte("*/"))
				if end < 0 {
					end = len(src)
				} else {
					end += i + 4
				}
			case '/':
				end = bytes.IndexByte(src[i:], '\n')
				if end < 0 {
					end = len(src)
				} else {
					end += i
				}
			default:
				continue
			}
			if hasFall(src[i:end]) && fallthroughWord().Match(src[i:end]) {
				return true
			}
			i = end - 1
		}
	}
	return false
}

// hasFall reports whether b holds "fall" in any case.
func hasFall(b []byte) bool {
	for i := 0; i+4 <= len(b); i++ {
		if b[i]|0x20 == 'f' && b[i+1]|0x20 == 'a' && b[i+2]|0x20 == 'l' && b[i+3]|0x20 == 'l' {
			return true
		}
	}
	return false
}

// separator reports whether the ' at src[i] is C23's digit separator
// (1'000, 0xff'ff), not a character constant's quote (L'x', u8'x').
func separator(src []byte, i int) bool {
	j := i
	for j > 0 && (isIdentByte(src[j-1]) || src[j-1] == '.' || src[j-1] == '\'') {
		j--
	}
	switch word := string(src[j:i]); {
	case word == "" || word == "L" || word == "u" || word == "U" || word == "u8":
		return false
	default:
		return word[0] >= '0' && word[0] <= '9' || word[0] == '.'
	}
}

func isIdentByte(b byte) bool {
	return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
}
