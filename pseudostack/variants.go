package pseudostack

import (
	"regexp"
	"strings"
	"sync"
)

// The x86-64 guard reaches the thread's fields (__weave_tls) %fs-relative.
// weave.h holds it once, as the _x64o functions (enter, leave, enter_ptr),
// whose offset o from %fs is a register operand the caller computes; the
// weaver picks one of these variants per unit (weave.guardVariant), and
// two of them are generated here from _x64o's text, so that a fix to one
// cannot miss the others:
//
//   - _lex64, for a unit that certainly goes into an executable, which the
//     runtime always goes into and whose own copy of __weave_tls is the one
//     every reference binds to: the fields addressed at a link-time
//     constant, the local-exec TLS model (%fs:__weave_tls@tpoff+N), and
//     __weave_solo read in place, not through the GOT. No register holds
//     o across the function, nor is it loaded at its entry (Lua's
//     alloc.lua: 2.3 instructions less per call). A shared object's link
//     rejects the relocation ("recompile with -fPIC").
//   - _iex64, for a unit compiled for an executable's addressing that may
//     still go into a shared object (a -c compile with the compiler's
//     defaults): the asm loads o itself from the GOT
//     (__weave_tls@gottpoff), the instruction and relocation the compiler
//     makes of _x64's (char *)&__weave_tls - __builtin_thread_pointer().
//     gcc's inliner counts that builtin's call and the subtraction as three
//     instructions more in every framed function, enough to keep such a
//     function from being inlined where the plain build inlines it; inside
//     the asm they count as its one.

// guardFuncs are _x64o's functions, in weave.h's order.
var guardFuncs = []string{"__weave_enter_x64o", "__weave_leave_x64o", "__weave_enter_ptr_x64o"}

// fsField is a thread's field addressed from o in _x64o's asm.
var fsField = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%%fs:(\d+)\(%\[o\]\)`) })

// gotTPOff is _iex64's load of o, written before o's first use.
const gotTPOff = `"movq __weave_tls@gottpoff(%%rip), %[o]\n\t"`

// localExec returns the _lex64 copy of _x64o's definition def of name.
func localExec(name, def string) string {
	lex := strings.Replace(name, "_x64o", "_lex64", 1)
	def = fsField().ReplaceAllString(def, "%%fs:__weave_tls@tpoff+$1")
	return strings.NewReplacer(
		", [o] \"r\"(o)", "",
		", __weave_size_t o)", ")",
		"__weave_enter_x64o(fn, o)", "__weave_enter_lex64(fn)",
		name+"(", lex+"(",
		// __weave_solo is the executable's: no GOT entry to load.
		"\"movq __weave_solo@GOTPCREL(%%rip), %[x]\\n\\t\"\n\t\t\"cmpb $0, (%[x])\\n\\t\"", "\"cmpb $0, __weave_solo(%%rip)\\n\\t\"",
		// and so is __weave_known.
		"\"movq __weave_known@GOTPCREL(%%rip), %%r10\\n\\t\"", "\"leaq __weave_known(%%rip), %%r10\\n\\t\"",
		"\"movq __weave_solo@GOTPCREL(%%rip), %%r11\\n\\t\"", "\"\"",
		"\"cmpb $0, (%%r11)\\n\\t\"", "\"cmpb $0, __weave_solo(%%rip)\\n\\t\"",
	).Replace(def)
}

// initialExec returns the _iex64 copy of _x64o's definition def of name.
func initialExec(name, def string) string {
	iex := strings.Replace(name, "_x64o", "_iex64", 1)
	return strings.NewReplacer(
		name+"(const struct __weave_fn *fn, __weave_size_t o)", iex+"(const struct __weave_fn *fn)",
		name+"(struct __weave_frame *f, __weave_size_t o)\n{\n", iex+"(struct __weave_frame *f)\n{\n\t__weave_size_t o;\n\n",
		name+"(const struct __weave_fn *fn, __weave_size_t t, __weave_size_t o)", iex+"(const struct __weave_fn *fn, __weave_size_t t)",
		"return __weave_enter_x64o(fn, o);", "return __weave_enter_iex64(fn);",
		"__weave_size_t x, y;", "__weave_size_t x, y, o;",
		`"movq %%fs:0(%[o]), %[p]\n\t"`, gotTPOff+"\n\t\t"+`"movq %%fs:0(%[o]), %[p]\n\t"`,
		`"jnz 1f\n\t"`, `"jnz 1f\n\t"`+"\n\t\t"+gotTPOff,
		`[y] "=&r"(y)`, `[y] "=&r"(y), [o] "=&r"(o)`,
		", [o] \"r\"(o)", "",
		"\t\t:\n\t\t: [v]", "\t\t: [o] \"=&r\"(o)\n\t\t: [v]",
	).Replace(def)
}

// guardDef returns the definition of name in h, from its extern-inline
// line to its closing brace's newline. The name starts its line only
// there: calls are indented.
func guardDef(h, name string) string {
	i := strings.Index(h, "\n"+name+"(")
	if i < 0 {
		panic("weave.h defines no " + name)
	}
	start := strings.LastIndexByte(h[:i], '\n') + 1
	end := strings.Index(h[i:], "\n}\n")
	if !strings.HasPrefix(h[start:], inlinePrefix) || end < 0 {
		panic("weave.h: " + name + " is not an extern-inline definition")
	}
	return h[start : i+end+3]
}

// GuardVariants returns the _lex64 and _iex64 functions generated from
// weave.h's text h (Header appends them; the runtime's copy of the header
// is followed by them too). It panics if a rewrite left o where it must be gone
// (weave.h's _x64o changed shape): the tests call it.
func GuardVariants(h string) string {
	var lex, iex strings.Builder
	for _, name := range guardFuncs {
		def := guardDef(h, name)
		l, i := localExec(name, def), initialExec(name, def)
		if strings.Contains(l, "[o]") || strings.Contains(l, "x64o") || strings.Contains(i, `"r"(o)`) || strings.Contains(i, "x64o") ||
			!strings.Contains(i, "gottpoff") && !strings.Contains(name, "ptr") {
			panic("weave.h: " + name + " no longer has the shape variants.go rewrites")
		}
		lex.WriteString("\n" + l)
		iex.WriteString("\n" + i)
	}
	return "\n/* Generated from the _x64o functions (pseudostack/variants.go): the\n   local-exec guard, _lex64. */\n" + lex.String() +
		"\n/* Generated likewise: the initial-exec guard loading o, _iex64. */\n" + iex.String()
}
