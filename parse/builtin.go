package parse

import (
	"bytes"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// cc/v4's builtin declarations, pruned.
//
// cc.Builtin, which cc/v4 parses before every unit, declares some 170
// functions (__builtin_memcpy, __atomic_load, ...), one a line: they were
// three quarters of the parse of a unit that is pruned (prune.go). A
// unit is given only those whose name it spells, or the name without
// "__builtin_" (cc/v4 resolves an undeclared f to __builtin_f), or
// that cc.Builtin's own macros and other lines spell.

// A builtinDecl is one declaration line of cc.Builtin.
type builtinDecl struct {
	start, end int // the line, its newline excluded
	name       string
}

var builtinLines struct {
	once  sync.Once
	decls []builtinDecl
	used  map[string]bool // identifiers of its other lines
}

// parseBuiltin finds cc.Builtin's declaration lines: `T name(...);`.
func parseBuiltin() {
	b := &builtinLines
	b.used = map[string]bool{}
	text := cc.Builtin
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		line := text[off:end]
		name := ""
		if paren := strings.IndexByte(line, '('); paren > 0 && line[0] != '#' && strings.HasSuffix(line, ");") {
			head := strings.TrimRight(line[:paren], " ")
			i := len(head)
			for i > 0 && isIdentPart(head[i-1]) {
				i--
			}
			name = head[i:]
		}
		if name != "" {
			b.decls = append(b.decls, builtinDecl{off, end, name})
		} else {
			for _, w := range identifiers(line) {
				b.used[w] = true
			}
		}
		off = end + 1
	}
}

// identifiers returns the identifiers of a line (and of its comments and
// literals: more is harmless).
func identifiers(line string) []string {
	var r []string
	for i := 0; i < len(line); {
		if !isIdentStart(line[i]) || i > 0 && isIdentPart(line[i-1]) {
			i++
			continue
		}
		j := i + 1
		for j < len(line) && isIdentPart(line[j]) {
			j++
		}
		r = append(r, line[i:j])
		i = j
	}
	return r
}

// builtinFor returns cc.Builtin with the declarations a text whose
// identifiers are words cannot reach blanked.
func builtinFor(words map[string]int32) string {
	b := &builtinLines
	b.once.Do(parseBuiltin)
	out := []byte(cc.Builtin)
	for _, d := range b.decls {
		_, spelt := words[d.name]
		_, short := words[strings.TrimPrefix(d.name, "__builtin_")]
		if !spelt && !(short && strings.HasPrefix(d.name, "__builtin_")) && !b.used[d.name] {
			copy(out[d.start:d.end], bytes.Repeat([]byte{' '}, d.end-d.start))
		}
	}
	return string(out)
}
