package goweave

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
)

// ParseEscapes reads the compiler's -m output: for each position, whether
// the allocation there escapes to the heap ("... escapes to heap") or not
// ("... does not escape"). Relative file names are taken relative to dir.
func ParseEscapes(out []byte, dir string) map[Pos]bool {
	m := map[Pos]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var esc bool
		switch {
		case strings.HasSuffix(line, " escapes to heap"):
			esc = true
		case strings.HasSuffix(line, " does not escape"):
		default:
			continue
		}
		p, ok := parsePos(line, dir)
		if !ok {
			continue
		}
		if esc || !m[p] { // an escape wins over a non-escape at the same place
			m[p] = esc
		}
	}
	return m
}

// ParseInlinable reads the compiler's -m output: the positions of the
// functions it can inline ("can inline F"), each at the token after its
// func keyword (a function's name, a method's receiver) or, for a
// closure, at func.
func ParseInlinable(out []byte, dir string) map[Pos]bool {
	m := map[Pos]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if line := sc.Text(); strings.Contains(line, ": can inline ") {
			if p, ok := parsePos(line, dir); ok {
				m[p] = true
			}
		}
	}
	return m
}

// parsePos parses the "file:line:col: " that starts a compiler message.
func parsePos(msg, dir string) (Pos, bool) {
	i := strings.Index(msg, ": ")
	if i < 0 {
		return Pos{}, false
	}
	f := strings.Split(msg[:i], ":")
	if len(f) < 3 {
		return Pos{}, false
	}
	line, err1 := strconv.Atoi(f[len(f)-2])
	col, err2 := strconv.Atoi(f[len(f)-1])
	if err1 != nil || err2 != nil {
		return Pos{}, false
	}
	name := strings.Join(f[:len(f)-2], ":")
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	return Pos{name, line, col}, true
}
