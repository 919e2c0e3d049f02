// Package leakcheck decides which leaks of a profile fail a check: LeakSanitizer-style suppressions and the leaks left after them.
package leakcheck

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
)

// Suppression is one "leak:PATTERN" line of a suppressions file. The
// pattern's elements, separated by '>', match frames from the outer to the
// inner, each the direct caller of the next ("leak:outer>inner"); a single
// element matches any frame of the chain.
type Suppression struct {
	Elems []string
	File  string
	Line  int
	Used  uint64 // blocks it suppressed
}

// Suppressions is a parsed suppressions file.
type Suppressions []*Suppression

// ParseFile reads a suppressions file (LeakSanitizer's format).
func ParseFile(path string) (Suppressions, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: is a directory", path)
	}
	return Parse(f, path)
}

// Parse reads suppressions: one "leak:PATTERN" a line; blank lines and
// lines starting with '#' are skipped. Any other line is an error
// (file:line:col: message): in a CI gate, a suppression that silently
// matches nothing is worse than a failed check.
func Parse(r io.Reader, name string) (Suppressions, error) {
	var out Suppressions
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		typ, pat, ok := strings.Cut(line, ":")
		col := strings.Index(sc.Text(), line) + 1
		if !ok || typ != "leak" {
			return nil, fmt.Errorf("%s:%d:%d: not a leak suppression %q (want leak:PATTERN)", name, n, col, line)
		}
		elems := strings.Split(pat, ">")
		for _, e := range elems {
			if strings.TrimSpace(e) == "" {
				return nil, fmt.Errorf("%s:%d:%d: empty pattern in %q", name, n, col, line)
			}
		}
		for i := range elems {
			elems[i] = strings.TrimSpace(elems[i])
		}
		out = append(out, &Suppression{Elems: elems, File: name, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

// Frame is what a pattern element is matched against: a function's name,
// its source file and the object file it was linked into.
type Frame struct {
	Name, File, Module string
}

// Match returns the first suppression matching a chain (innermost frame
// first), or nil.
func (s Suppressions) Match(chain []Frame) *Suppression {
	for _, sp := range s {
		if sp.matches(chain) {
			return sp
		}
	}
	return nil
}

func (sp *Suppression) matches(chain []Frame) bool {
	k := len(sp.Elems)
	// chain[i] is called by chain[i+1]: the outer element matches the
	// higher index.
	for i := 0; i+k <= len(chain); i++ {
		ok := true
		for j := 0; j < k && ok; j++ {
			ok = frameMatch(sp.Elems[k-1-j], chain[i+j])
		}
		if ok {
			return true
		}
	}
	return false
}

func frameMatch(pat string, f Frame) bool {
	return TemplateMatch(pat, f.Name) || TemplateMatch(pat, f.File) || TemplateMatch(pat, f.Module)
}

// TemplateMatch is LeakSanitizer's pattern match: the pattern matches a
// substring of s; '*' matches any run of characters, a leading '^'
// anchors it at the start and a trailing '$' at the end. An empty s
// matches nothing.
func TemplateMatch(pat, s string) bool {
	if s == "" {
		return false
	}
	start := strings.HasPrefix(pat, "^")
	if start {
		pat = pat[1:]
	}
	star := false
	for pat != "" {
		switch pat[0] {
		case '*':
			pat, start, star = pat[1:], false, true
			continue
		case '$':
			return s == "" || star
		}
		if s == "" {
			return false
		}
		lit := pat
		if i := strings.IndexAny(pat, "*$"); i >= 0 {
			lit = pat[:i]
		}
		i := strings.Index(s, lit)
		if i < 0 || start && i != 0 {
			return false
		}
		s, pat = s[i+len(lit):], pat[len(lit):]
		start, star = false, false
	}
	return true
}
