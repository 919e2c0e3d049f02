package goweave

import (
	"bufio"
	"bytes"
	"path/filepath"
	"strconv"
	"strings"
)

// An Escape names one allocation in the compiler's -m output: where the
// compiler reports it and what kind of expression it is. The kind tells
// apart expressions reported at one place: string([]byte{...}) is a
// conversion and a composite literal at the literal's brace, and the
// conversion may escape while the literal does not.
type Escape struct {
	Pos
	Kind string // one of the kind constants
}

// The kinds of allocation expression, as the compiler prints them.
const (
	kindNew     = "new"     // new(T)
	kindAddr    = "addr"    // &T{...}
	kindLit     = "lit"     // []T{...}, map[K]V{...}
	kindMake    = "make"    // make(...)
	kindAppend  = "append"  // append(...)
	kindConcat  = "concat"  // a + b
	kindConvert = "convert" // string(b), ([]byte)(s), ([]rune)(s)
)

// expressionKind is the kind of the expression a -m message names ("" for
// one that is not an allocation weave follows: a func literal, a value
// passed as an interface).
func expressionKind(expr string) string {
	switch {
	case strings.HasPrefix(expr, "make("):
		return kindMake
	case strings.HasPrefix(expr, "new("):
		return kindNew
	case strings.HasPrefix(expr, "append"):
		return kindAppend
	case strings.HasPrefix(expr, "&"):
		return kindAddr
	case strings.HasSuffix(expr, "}"):
		return kindLit
	case strings.Contains(expr, " + ") && !strings.HasPrefix(expr, "("):
		return kindConcat
	case strings.HasSuffix(expr, ")"): // string(b), ([]byte)(s), Name(b)
		return kindConvert
	}
	return ""
}

// ParseEscapes reads the compiler's -m output: for each allocation, whether
// it escapes to the heap ("... escapes to heap") or not ("... does not
// escape"). Relative file names are taken relative to dir.
func ParseEscapes(out []byte, dir string) map[Escape]bool {
	m := map[Escape]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var esc bool
		var expr string
		if e, ok := strings.CutSuffix(line, " escapes to heap"); ok {
			esc, expr = true, e
		} else if e, ok := strings.CutSuffix(line, " does not escape"); ok {
			expr = e
		} else {
			continue
		}
		p, ok := parsePos(line, dir)
		if !ok {
			continue
		}
		_, expr, _ = strings.Cut(expr, ": ")
		k := Escape{p, expressionKind(expr)}
		if esc || !m[k] { // an escape wins over a non-escape of the same kind at the same place
			m[k] = esc
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
