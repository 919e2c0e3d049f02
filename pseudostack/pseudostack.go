// Package pseudostack holds the weave runtime's pseudo-stack and
// calling-context tree: the woven-code ABI (weave.h) and the C parts
// behind it, which package runtime joins into the runtime.
//
// The files, in the order a reader follows a call:
//
//	weave.h    the ABI: what woven code calls, with the inline fast enter and leave
//	enter.c    the slow paths: set-up, stack growth, child lookup, setjmp resync
//	cct.c      the calling-context tree: nodes, the child hash, recursion folding
//	known.c    the functions known not to allocate, for calls framed where made
//	timed.c    the timed push and pop (exact time, function tracepoints) and their clock
package pseudostack

import (
	"embed"
	"fmt"
	"strings"
	"sync"
)

// Files holds the C files of the package.
//
//go:embed *.c *.h
var Files embed.FS

// Header returns the text of weave.h, the interface between woven code and
// the runtime, with the guard variants generated from it (variants.go);
// the weaver pastes it at the top of every woven file.
func Header() string { return header() }

// header is Header's text, made once: a weave cc asks for it up to three
// times (the ABI number, the woven cache's key, the weave), and the guard
// variants take a few hundred kilobytes of garbage to generate.
var header = sync.OnceValue(func() string {
	b, err := Files.ReadFile("weave.h")
	if err != nil {
		panic(err)
	}
	return string(b) + GuardVariants(string(b))
})

// inlinePrefix starts the definition of each of weave.h's fast paths.
const inlinePrefix = "extern __inline __attribute__((__gnu_inline__, __always_inline__)) "

// OutOfLine returns the out-of-line definitions of weave.h's inline fast
// paths (__weave_enter, __weave_leave, __weave_cc_index; enter.c defines
// the x86-64 ones, NAME_x64, NAME_fsx64, NAME_lex64 and NAME_x64o, as calls of the
// C ones), for code that
// takes their address or is compiled without inlining: each definition
// copied from the header without its extern-inline prefix, behind a #line
// directive naming its place in path. Generated, so that the two cannot
// disagree.
func OutOfLine(header, path string) string {
	lines := strings.SplitAfter(header, "\n")
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		rest, ok := strings.CutPrefix(lines[i], inlinePrefix)
		if !ok {
			continue
		}
		if i+1 < len(lines) && strings.Contains(lines[i+1], "x64") {
			// enter.c defines them: its asm stays in woven code, where
			// the weaver knows the target and the assembler syntax.
			for ; i < len(lines) && strings.TrimRight(lines[i], "\r\n") != "}"; i++ {
			}
			continue
		}
		fmt.Fprintf(&b, "#line %d %q\n%s", i+1, path, rest)
		for i++; i < len(lines); i++ {
			b.WriteString(lines[i])
			if strings.TrimRight(lines[i], "\r\n") == "}" {
				break
			}
		}
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Trim returns header (Header's text) with the inline fast paths that
// neither uses(name) nor a kept fast path calls blanked, every byte but
// the line ends a space (the text keeps its length, lines and columns):
// the other guard variants' (variants.go), which a woven unit does not
// call. Such a definition is gnu_inline, never emitted, only compiled:
// about 1.2 ms of gcc's time a unit for nothing.
func Trim(header string, uses func(name string) bool) string {
	type def struct {
		name       string
		start, end int // header[start:end], from its prefix to its closing brace
	}
	var defs []def
	for off := 0; ; {
		i := strings.Index(header[off:], "\n"+inlinePrefix)
		if i < 0 {
			break
		}
		start := off + i + 1
		j := strings.Index(header[start:], "\n}")
		if j < 0 {
			break
		}
		_, sig, _ := strings.Cut(header[start:start+j], "\n")
		name, _, _ := strings.Cut(sig, "(")
		defs = append(defs, def{name, start, start + j + 2})
		off = start + j + 2
	}
	// What the unit uses, then what a kept definition calls, until
	// nothing more is kept: each definition's text searched once for the
	// calls of each, not again at every pass (0.3-0.8 ms a unit).
	keep := map[string]bool{}
	var kept []def
	for _, d := range defs {
		if !keep[d.name] && uses(d.name) {
			keep[d.name] = true
			kept = append(kept, d)
		}
	}
	for n := 0; n < len(kept); n++ {
		text := header[kept[n].start:kept[n].end]
		for _, d := range defs {
			if !keep[d.name] && strings.Contains(text, d.name+"(") {
				keep[d.name] = true
				kept = append(kept, d)
			}
		}
	}
	out := []byte(header)
	for _, d := range defs {
		if keep[d.name] {
			continue
		}
		for i := d.start; i < d.end; i++ {
			if out[i] != '\n' && out[i] != '\r' {
				out[i] = ' '
			}
		}
	}
	return string(out)
}
