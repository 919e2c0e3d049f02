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
