package parse

import (
	"strings"
	"sync"
)

// The predefined macros a pruned parse is given.
//
// cc/v4 runs every #define of the compiler's predefined macros (some 380
// lines under gcc 12) before each unit: 2.6 ms of a small program's 5.8
// ms parse (its text pruned). The text is preprocessed already, so no
// macro of it expands there; what needs them is cc.Builtin's text
// (__SIZE_TYPE__, __INT64_TYPE__, ...) and the weaver, which reads a few
// from the AST (KeptMacros). A pruned parse (its builtin text pruned,
// builtinFor) is given those: the macros the builtin text names, the
// macros they name in turn, KeptMacros and the __STDC ones. A whole
// parse (ParseAll, or a pruned one that failed) is given them all.

// KeptMacros are the predefined macros a pruned parse always defines:
// those the weaver reads from the AST (weave's guardVariant,
// needsRuntime, thunkAttrs, asmThunk). weave's TestPruneSameWeave compares its
// woven text with a whole parse's.
var KeptMacros = []string{"__x86_64__", "__LP64__", "__AVX__", "__GNUC__", "__clang__", "__clang_major__", "__PIE__", "__PIC__", "__STRICT_ANSI__", "__GCC_HAVE_DWARF2_CFI_ASM"}

// A predefinedMacro is one #define line of the predefined macros.
type predefinedMacro struct {
	line  string
	names []string // the identifiers of its definition (parameters too: harmless)
}

type predefinedMacros struct {
	once sync.Once
	defs map[string]predefinedMacro
	keep map[string]bool // KeptMacros and the __STDC ones
	list []string        // the names, in the text's order
}

// macrosFor returns the predefined macros of st that builtin (cc.Builtin
// pruned for a unit) needs, in their order.
func (st *dialectState) macrosFor(builtin string) string {
	m := &st.macros
	m.once.Do(func() { m.parse(st.predefined) })
	need := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		d, ok := m.defs[name]
		if !ok || need[name] {
			return
		}
		need[name] = true
		for _, n := range d.names {
			visit(n)
		}
	}
	for name := range m.keep {
		visit(name)
	}
	for _, name := range identifiers(builtin) {
		visit(name)
	}
	var b strings.Builder
	for _, name := range m.list {
		if need[name] {
			b.WriteString(m.defs[name].line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// parse reads the #define lines of predefined (reservedMacros').
func (m *predefinedMacros) parse(predefined string) {
	m.defs = map[string]predefinedMacro{}
	m.keep = map[string]bool{}
	for _, k := range KeptMacros {
		m.keep[k] = true
	}
	for _, l := range strings.Split(predefined, "\n") {
		rest, ok := strings.CutPrefix(l, "#define ")
		if !ok {
			continue
		}
		ids := identifiers(rest)
		if len(ids) == 0 {
			continue
		}
		name := ids[0]
		if _, dup := m.defs[name]; !dup {
			m.list = append(m.list, name)
		}
		m.defs[name] = predefinedMacro{line: l, names: ids[1:]}
		if strings.HasPrefix(name, "__STDC") {
			m.keep[name] = true
		}
	}
}
