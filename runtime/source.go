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
}

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
func join(ps []part) (string, error) {
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
		if err := emit(p); err != nil {
			return "", err
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
