package runtime

import (
	"embed"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/weave-profiler/weave/pseudostack"
)

// A part is one C file of the runtime, or generated text. Its text is
// read on first use (Source), not when the parts list is made at start-up:
// every weave process (a configure script starts hundreds) would pay for
// it.
type part struct {
	path string // from the module root, as #line directives name it
	text func() string
	gen  bool // generated: text carries its own #line directives
	size bool // compiled for size (forSize)
}

// forSize marks p as code that runs once or rarely (the exit writers, the
// leak scan's set-up and report, the control channel): GCC compiles it as
// with -Os. Every page of the runtime's code is resident by a program's
// exit (the kernel maps a file's cached pages 64 KiB around each fault,
// and the exit runs these parts), which for a small program is where its
// peak RSS is: -Os takes 22 KiB off the runtime's 199 KiB (code,
// read-only data, unwind tables) and changes nothing on the hot paths
// (TestForSize). The leak scan's passes (leakmark.c, leakscan.c) stay at
// -O2: -Os would save 8 KiB more and cost them 16% more instructions. Not with clang (it has no
// such pragma) or without optimisation (-O0 stays -O0).
func forSize(p part) part {
	p.size = true
	return p
}

// The lines around a forSize part, under a #line of their own. Not conditional on __OPTIMIZE_SIZE__,
// which gcc 12 leaves defined after the pragmas' pop.
const (
	sizeBegin = "#line 1 \"runtime/parts.go (for size)\"\n#if defined(__OPTIMIZE__) && !defined(__clang__) && defined(__GNUC__)\n" +
		"#pragma GCC push_options\n#pragma GCC optimize (\"Os\")\n#define WEAVE_FOR_SIZE_\n#endif\n"
	sizeEnd = "#line 1 \"runtime/parts.go (for size)\"\n#ifdef WEAVE_FOR_SIZE_\n#pragma GCC pop_options\n#undef WEAVE_FOR_SIZE_\n#endif\n"
)

func file(fsys embed.FS, dir, name string) part {
	return part{path: dir + "/" + name, text: sync.OnceValue(func() string {
		b, err := fsys.ReadFile(name)
		if err != nil {
			panic("runtime: " + err.Error())
		}
		return string(b)
	})}
}

// outOfLine is the generated part holding the out-of-line copies of the
// inline fast paths of header name.
func outOfLine(fsys embed.FS, dir, name string) part {
	h := file(fsys, dir, name)
	return part{path: h.path + " (out of line)", gen: true, text: sync.OnceValue(func() string {
		return pseudostack.OutOfLine(h.text(), h.path)
	})}
}

// guardVariants is the generated part holding the x86-64 guard variants
// generated from header name (pseudostack/variants.go).
func guardVariants(fsys embed.FS, dir, name string) part {
	h := file(fsys, dir, name)
	path := h.path + " (guard variants)"
	return part{path: path, gen: true, text: sync.OnceValue(func() string {
		return fmt.Sprintf("#line 1 %q\n", path) + pseudostack.GuardVariants(h.text())
	})}
}

// abiMark is the generated part defining the symbol of the ABI that
// header name states (pseudostack.ABIMark), never called.
func abiMark(fsys embed.FS, dir, name string) part {
	path := file(fsys, dir, name).path + " (ABI mark)"
	return part{path: path, gen: true, text: sync.OnceValue(func() string {
		return fmt.Sprintf("#line 1 %q\nvoid %s(void);\nvoid %s(void)\n{\n}\n", path, pseudostack.ABIMark(), pseudostack.ABIMark())
	})}
}

// Header returns the text of weave.h, the interface between woven code and
// the runtime.
func Header() string { return pseudostack.Header() }

// join joins ps into one C file: each part behind a #line directive naming
// it, a header's text in place of the first #include of it, later ones
// dropped (each part includes internal.h, for readers and editors).
func join(ps []part) (string, error) { return joinSize(ps, false) }

// joinSize is join, with the forSize parts compiled as the rest if noSize
// (TestForSize compares the two).
func joinSize(ps []part, noSize bool) (string, error) {
	headers := map[string]*part{}
	for i := range ps {
		if strings.HasSuffix(ps[i].path, ".h") {
			headers[path.Base(ps[i].path)] = &ps[i]
		}
	}
	done := map[string]bool{}
	var b strings.Builder
	var emit func(p *part) error
	emit = func(p *part) error {
		done[p.path] = true
		if p.gen {
			b.WriteString(p.text())
			return nil
		}
		fmt.Fprintf(&b, "#line 1 %q\n", p.path)
		text := p.text()
		lines := strings.SplitAfter(text, "\n")
		for i, l := range lines {
			name, ok := includeOf(l)
			if !ok {
				b.WriteString(l)
				continue
			}
			h := headers[name]
			if h == nil {
				return fmt.Errorf("%s:%d: #include %q: not a part of the runtime", p.path, i+1, name)
			}
			if done[h.path] {
				b.WriteString("\n")
				continue
			}
			if err := emit(h); err != nil {
				return err
			}
			fmt.Fprintf(&b, "#line %d %q\n", i+2, p.path)
		}
		if !strings.HasSuffix(text, "\n") {
			b.WriteString("\n")
		}
		return nil
	}
	for i := range ps {
		p := &ps[i]
		if strings.HasSuffix(p.path, ".h") {
			if !done[p.path] && i > 0 {
				return "", fmt.Errorf("%s: listed, but not included by the parts before it", p.path)
			}
			if !done[p.path] {
				if err := emit(p); err != nil {
					return "", err
				}
			}
			continue
		}
		if p.size && !noSize {
			b.WriteString(sizeBegin)
		}
		if err := emit(p); err != nil {
			return "", err
		}
		if p.size && !noSize {
			b.WriteString(sizeEnd)
		}
	}
	return b.String(), nil
}

// includeOf returns X of a line #include "X".
func includeOf(line string) (string, bool) {
	l := strings.TrimSpace(line)
	rest, ok := strings.CutPrefix(l, "#include")
	if !ok {
		return "", false
	}
	rest = strings.TrimSpace(rest)
	if len(rest) < 2 || rest[0] != '"' || rest[len(rest)-1] != '"' {
		return "", false
	}
	return rest[1 : len(rest)-1], true
}

var source = sync.OnceValue(func() string {
	s, err := join(parts)
	if err != nil {
		panic("runtime: " + err.Error())
	}
	return s
})

// Source returns the runtime as a single C file: its parts joined in the
// order of parts, with #line directives naming each part's own file and
// line.
func Source() string { return source() }
