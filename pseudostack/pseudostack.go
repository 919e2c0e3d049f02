// Package pseudostack holds the weave runtime's pseudo-stack and
// calling-context tree: the woven-code ABI (weave.h) and the C parts
// behind it, which package runtime joins into the runtime.
//
// The files, in the order a reader follows a call:
//
//	weave.h    the ABI: what woven code calls, with the inline fast enter and leave
//	enter.c    the slow paths: set-up, stack growth, child lookup, setjmp resync
//	cct.c      the calling-context tree: nodes, the child hash, recursion folding
//	thread.c   per-thread set-up (root, pseudo-stack, bins) and thread exit
package pseudostack

import (
	"embed"
	"fmt"
	"strings"
)

// Files holds the C files of the package.
//
//go:embed *.c *.h
var Files embed.FS

// Header returns the text of weave.h, the interface between woven code and
// the runtime; the weaver pastes it at the top of every woven file.
func Header() string {
	b, err := Files.ReadFile("weave.h")
	if err != nil {
		panic(err)
	}
	return string(b)
}

// inlinePrefix starts the definition of each of weave.h's fast paths.
const inlinePrefix = "extern __inline __attribute__((__gnu_inline__, __always_inline__)) "

// OutOfLine returns the out-of-line definitions of weave.h's inline fast
// paths (__weave_enter, __weave_leave, __weave_cc_index, and the x86-64
// ones, which call the C ones: delegate), for code that
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
		fmt.Fprintf(&b, "#line %d %q\n%s", i+1, path, rest)
		if i+1 < len(lines) && strings.Contains(lines[i+1], "_x64(") {
			i++
			b.WriteString(delegate(lines[i], strings.HasPrefix(rest, "void ")))
			for ; i < len(lines) && strings.TrimRight(lines[i], "\r\n") != "}"; i++ {
			}
			continue
		}
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

// delegate returns the out-of-line definition of an x86-64 fast path, from
// the line "NAME_x64(PARAMS)" of its declarator: a call of NAME, the C
// fast path that does the same. Its asm stays in woven code, where the
// weaver knows the target and the assembler syntax; the runtime is
// compiled for whatever target, -masm=intel included.
func delegate(decl string, void bool) string {
	decl = strings.TrimRight(decl, "\r\n")
	open := strings.IndexByte(decl, '(')
	name := strings.TrimSuffix(decl[:open], "_x64")
	var args []string
	for _, p := range strings.Split(strings.TrimSuffix(decl[open+1:], ")"), ",") {
		f := strings.FieldsFunc(p, func(r rune) bool { return r == ' ' || r == '*' })
		args = append(args, f[len(f)-1])
	}
	call := name + "(" + strings.Join(args, ", ") + ");"
	if !void {
		call = "return " + call
	}
	return decl + "\n{\n\t" + call + "\n}\n"
}
