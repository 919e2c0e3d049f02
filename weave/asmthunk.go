package weave

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"modernc.org/cc/v4"

	"github.com/weave-profiler/weave/pseudostack"
)

// Call thunks as assembly. gcc compiles each C thunk through every
// per-function pass: about 3.7M instructions of cc1 a thunk besides its
// guard's 1.9M, three quarters of what the woven text of Lua's lapi.c
// costs gcc more than the plain one (63 thunks: cc1 2,234M, 1,899M with
// the thunks as top-level asm, 1,784M plain). Under the x86-64 guards
// that need no call to reach the thread's fields (_iex64, _lex64) the
// weaver prints the thunk's assembly itself, as gcc prints the C one:
// rbx saved and holding the frame, the enter's asm with the arguments'
// registers left alone, the call, the leave's asm, rbx back. Only for
// callees whose arguments all travel in registers and whose result is
// a scalar (no struct, long double or complex: those keep the C thunk).
//
// gcc must emit the thunk only where it keeps a call of it, as it emits
// a static C function only if it is called: a top-level asm thunk
// (e9e87b0) was assembled for calls gcc proves dead, and its call of a
// function defined nowhere (c-torture's link_error) failed the link. So
// the thunk is an assembler macro, and the symbol of its C declaration
// (an asm label, which gcc prints as it is) expands it: gcc prints
// "call __weave_t1 ; __weave_t1_def #" (the comment hides an @PLT), and
// the macro defines the thunk in a section of its own if no copy of the
// call defined it before. A naked static function holding the asm was
// the other way, but gcc compiles it through its passes: 2.8M
// instructions of cc1 a thunk in a unit of 100, against 0.13M as a
// macro (under __optimize__(0) 1.4M, but gcc -O0 emits a static
// function nothing calls).

// asmThunkRegs are the scratch registers an asm thunk may take for the
// enter's x, y and o, in the order taken, by their 64- and 32-bit names;
// rax (c) is free (no thunk for a variadic callee) and rbx holds the frame.
var asmThunkRegs = [][2]string{{"r11", "r11d"}, {"r10", "r10d"}, {"r9", "r9d"}, {"r8", "r8d"}, {"rcx", "ecx"}, {"rdx", "edx"}, {"rsi", "esi"}, {"rdi", "edi"}}

// intArgRegs are the x86-64 System V integer argument registers.
var intArgRegs = []string{"rdi", "rsi", "rdx", "rcx", "r8", "r9"}

// asmThunk returns the definition of thunk t (a call of callee, whose
// type is ft) as a top-level asm statement defining the assembler macro
// asmThunkMacro(t), or "" where the thunk stays C. The macro defines t,
// once (two copies of a call print it twice): a local function in a
// section of its own, which --gc-sections keeps with its callers.
func (w *weaver) asmThunk(t, callee string, ft *cc.FunctionType, d *cc.Declarator, id *cc.PrimaryExpression) string {
	// The macro's CFI directives are for a compiler that writes its own
	// as directives, not as .eh_frame data (the compile's flags are
	// asmThunkFlags's; the macro tells the compiler's default).
	m := w.u.AST.Macros
	if !w.asmThunks || (w.guard != "_iex64" && w.guard != "_lex64") || m["__clang__"] != nil || m["__GCC_HAVE_DWARF2_CFI_ASM"] == nil || ft.IsVariadic() {
		return ""
	}
	// The callee's symbol is not its name, or its arguments are not
	// where the System V convention puts them, or registers it keeps
	// are not those the convention keeps.
	if asmLabel().Match(w.declText(d)) || w.declaredAttr(id, "ms_abi", "no_caller_saved_registers", "interrupt", "naked") {
		return ""
	}
	ints, sse := 0, 0
	for _, p := range ft.Parameters() {
		if len(ft.Parameters()) == 1 && p.Type() != nil && p.Type().Kind() == cc.Void {
			break // (void)
		}
		switch scalarClass(p.Type()) {
		case 'i':
			ints++
		case 's':
			sse++
		default:
			return ""
		}
	}
	if r := ft.Result(); r == nil || r.Kind() != cc.Void && scalarClass(r) == 0 || ints > len(intArgRegs) || sse > 8 {
		return ""
	}
	used := map[string]bool{}
	for _, r := range intArgRegs[:ints] {
		used[r] = true
	}
	var free [][2]string
	for _, r := range asmThunkRegs {
		if !used[r[0]] {
			free = append(free, r)
		}
	}
	k := strings.TrimSuffix(strings.TrimPrefix(w.callFrame, "&"+w.fnTable()+"["), "]")
	idx, err := strconv.Atoi(k)
	if err != nil || len(free) < 3 {
		return ""
	}
	ops := map[string]string{
		"p": "%rbx", "v": "%rbx", "b[v]": "%bl", "c": "%rax", "k[c]": "%eax",
		"x": "%" + free[0][0], "k[x]": "%" + free[0][1], "y": "%" + free[1][0], "k[y]": "%" + free[1][1],
		"o": "%" + free[2][0], "k[o]": "%" + free[2][1],
		"fn": fmt.Sprintf("%s+%d(%%rip)", w.fnTable(), idx*24), "tags": "$63", "timed": "$2",
	}
	enter, leave := guardTemplates(w.guard)
	en, ok1 := fillTemplate(enter, ops)
	// After the call o may be any register the call clobbers but rax.
	ops["o"], ops["k[o]"] = "%r11", "%r11d"
	le, ok2 := fillTemplate(leave, ops)
	if !ok1 || !ok2 {
		return ""
	}
	text := fmt.Sprintf(".macro %[1]s\n\t.ifndef %[2]s\n\t.pushsection .text.%[2]s,\"ax\",@progbits\n\t.p2align 4\n\t"+
		".type %[2]s, @function\n%[2]s:\n\t.cfi_startproc\n\tpushq %%rbx\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset 3, -16\n\t"+
		"%[3]s\n\tcall %[4]s@PLT\n\t%[5]s\n\tpopq %%rbx\n\t.cfi_def_cfa_offset 8\n\tret\n\t.cfi_endproc\n\t"+
		".size %[2]s, .-%[2]s\n\t.popsection\n\t.endif\n\t.endm\n", asmThunkMacro(t), t, en, callee, le)
	return "__asm__(" + strconv.Quote(text) + "); "
}

// asmThunkMacro is the name of the assembler macro defining thunk t.
func asmThunkMacro(t string) string {
	return t + "_def"
}

// scalarClass returns 'i' for a type passed in an integer register, 's'
// for one passed in a vector register, 0 for any other.
func scalarClass(t cc.Type) byte {
	if t == nil {
		return 0
	}
	switch t.Kind() {
	case cc.Bool, cc.Char, cc.SChar, cc.UChar, cc.Short, cc.UShort, cc.Int, cc.UInt, cc.Long, cc.ULong, cc.LongLong, cc.ULongLong, cc.Enum, cc.Ptr:
		return 'i'
	case cc.Float, cc.Double:
		return 's'
	}
	return 0
}

var asmLabel = lazyRegexp(`\b(__asm__|__asm|asm)\b`)

// guardTemplates returns the enter's and the leave's asm templates of
// guard variant g, as the assembler reads them (C string literals
// joined, comments out), from weave.h's generated variants.
func guardTemplates(g string) (enter, leave string) {
	t := guardTemplateCache()
	return t[g+"enter"], t[g+"leave"]
}

var guardTemplateCache = sync.OnceValue(func() map[string]string {
	v := pseudostack.GuardVariants(pseudostack.Header())
	m := map[string]string{}
	for _, g := range []string{"_iex64", "_lex64"} {
		m[g+"enter"] = asmTemplate(v, "__weave_enter"+g+"(const struct __weave_fn *fn)")
		m[g+"leave"] = asmTemplate(v, "__weave_leave"+g+"(struct __weave_frame *f)")
	}
	return m
})

var asmCString = lazyRegexp(`"((?:[^"\\]|\\.)*)"`)

// asmTemplate returns the template of the first asm statement after the
// signature sig in text h, or "".
func asmTemplate(h, sig string) string {
	i := strings.Index(h, "\n"+sig)
	if i < 0 {
		return ""
	}
	j := strings.Index(h[i:], "__asm__ volatile __inline__(")
	if j < 0 {
		return ""
	}
	body := h[i+j:]
	var b strings.Builder
	for _, line := range strings.Split(body, "\n")[1:] {
		l := strings.TrimSpace(line)
		if strings.HasPrefix(l, ":") {
			break
		}
		for _, m := range asmCString().FindAllStringSubmatch(l, -1) {
			s, err := strconv.Unquote(`"` + m[1] + `"`)
			if err != nil {
				return ""
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

var operandRef = lazyRegexp(`%([kb]?)\[(\w+)\]`)

// fillTemplate substitutes the operands ops into template s and undoes
// its %% escapes; false if it names an operand ops lacks.
func fillTemplate(s string, ops map[string]string) (string, bool) {
	ok := true
	s = operandRef().ReplaceAllStringFunc(s, func(m string) string {
		sub := operandRef().FindStringSubmatch(m)
		key := sub[2]
		if sub[1] != "" {
			key = sub[1] + "[" + sub[2] + "]"
		}
		r, found := ops[key]
		if !found {
			ok = false
		}
		return r
	})
	s = strings.ReplaceAll(s, "%%", "%")
	return strings.ReplaceAll(s, "\n", "\n\t"), ok && !strings.Contains(s, "%[")
}
