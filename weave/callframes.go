package weave

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"modernc.org/cc/v4"
)

// frameCall pushes the frame of the needCalls function being woven around
// its call x, if x may allocate: a call through a pointer (unless the
// runtime knows the target cannot: weave.h, __weave_enter_ptr), of another
// needCalls function, or a cold call (cold.go) of anything that may.
func (w *weaver) frameCall(x *cc.PostfixExpression) {
	if w.u.Offset(x.PostfixExpression) < w.framedEnd || w.unevaluated > 0 {
		// Inside a call framed already (its callee or arguments, as
		// fail(copy(s))): that frame is pushed while this call runs.
		// Or in sizeof's operand: it never runs.
		return
	}
	kind, name := w.classify(x.PostfixExpression)
	switch {
	case kind == calleeIndirect:
		w.calls++
		p := fmt.Sprintf("__weave_p%d", w.calls)
		enter := fmt.Sprintf("__weave_enter_ptr%s(%s, (__weave_size_t)%s)", w.guard, w.callFrame, p)
		w.buf.Insert(w.u.Offset(x.PostfixExpression), "__extension__ ({ __auto_type "+p+" = (")
		w.buf.Insert(w.u.Offset(x.Token), fmt.Sprintf("); %s; %s", w.callGuard(enter), p))
	case kind == calleeLocal && w.need[name] == needNone:
		return
	case kind == calleeLocal || kind == calleeSeed || kind == calleeExtern && w.externMayAllocate(name):
		// needCalls, or a cold call (analyseFrames leaves a function
		// that calls anything else that may allocate on a hot path
		// framed at its entry).
		// Not in a function whose frame stays (callOnce): the thunk
		// would push it again. (One calling another unit's function
		// that may allocate is framed at its entry: analyseFrames.)
		id := calleeIdent(x.PostfixExpression)
		checked := id != nil && w.resultChecked(id)
		if kind == calleeExtern && id != nil && !w.callOnce && !checked && w.thunkCall(x, id) {
			return
		}
		w.calls++
		enter := fmt.Sprintf("__weave_enter%s(%s)", w.guard, w.callFrame)
		if id := calleeIdent(x.PostfixExpression); id != nil && !w.callOnce && w.declaredAttr(id, "noreturn") {
			// A call that never returns pops nothing (no cleanup runs
			// after exit or longjmp): the frame is pushed in a comma
			// expression. The statement expression's end, after the
			// call, made clang -Wunreachable-code say "code will never
			// be executed" at the user's line.
			w.buf.Insert(w.u.Offset(x.PostfixExpression), "((void)"+enter+", ")
			w.framedEnd = w.u.Offset(x.Token2) + 1
			w.buf.InsertClose(w.framedEnd, ")")
			return
		}
		w.buf.Insert(w.u.Offset(x.PostfixExpression), "__extension__ ({ "+w.callGuard(enter)+"; ")
		if checked && x == w.discarded && (!w.voidCast || w.u.AST.Macros["__clang__"] == nil && !w.declaredAttr(id, "nodiscard")) {
			// A statement of its own, whose value is dropped there,
			// as in the plain build: the compiler's -Wunused-result
			// names the callee at the user's call (a statement
			// expression's value dropped draws none). gcc's
			// warn_unused_result warns through a cast to void too;
			// its nodiscard and clang do not.
			w.framedEnd = w.u.Offset(x.Token2) + 1
			w.buf.InsertClose(w.framedEnd, "; (void)0; })")
			return
		}
	default:
		return
	}
	w.framedEnd = w.u.Offset(x.Token2) + 1
	w.buf.InsertClose(w.framedEnd, "; })")
}

// resultChecked reports whether the compiler diagnoses a dropped result
// of a call of id (warn_unused_result, C23's nodiscard), or id is
// declared with C23 attributes at all. Such a call takes no thunk: the
// thunk's name would be the one -Wunused-result names, clang's thunk
// takes no such attribute, and gcc's copy of a C23 attribute (gnulib's
// [[__nodiscard__]], [[__maybe_unused__]]) is "attribute directive
// ignored" at the thunk and drops nodiscard (coreutils 9.1's
// hash_initialize: 5 warnings more than the plain build, 1 fewer).
func (w *weaver) resultChecked(id *cc.PrimaryExpression) bool {
	if w.declaredAttr(id, "warn_unused_result", "nodiscard") {
		return true
	}
	d, _ := id.ResolvedTo().(*cc.Declarator)
	return d != nil && bytes.Contains(w.declText(d), []byte("[["))
}

// callGuard declares the frame of a call framed where it is made; in a
// sticky function, it pushes the entry's guard, __weave_f, unless pushed.
func (w *weaver) callGuard(enter string) string {
	if w.callOnce {
		pushed := "__weave_pushed"
		if strings.HasSuffix(w.guard, "x64") {
			pushed = "__weave_pushed_x64"
		}
		return fmt.Sprintf("if (!%s(&__weave_f)) __weave_f = %s", pushed, enter)
	}
	return fmt.Sprintf("struct __weave_frame __weave_c%d __attribute__((cleanup(__weave_leave%s), unused)) = %s", w.calls, w.guard, enter)
}

// msABI reports whether a function definition has the ms_abi attribute
// (x86-64: the Windows calling convention, in which rsi, rdi and xmm6-15
// are the callee's to keep). Its guards are then the out-of-line calls
// (_call): in a unit compiled for a shared object, the inline guards' read
// of __weave_tls is gcc's __tls_get_addr sequence, which loads rdi and
// calls a function that may change rsi, rdi and xmm6-15 with none of them
// declared changed, and gcc kept a value in rdi across it there (libffi's
// ffi_closure_win64_inner lost its cif: every ms_abi callback of libffi's
// test-callback returned a wrong value). A call of the runtime's
// functions is one the compiler saves those registers around.
func (w *weaver) msABI(def cc.Node, body *cc.CompoundStatement) bool {
	decl := w.code()[w.declStart(def):w.u.Offset(body.Token)]
	return attrRegexp([]string{"ms_abi"}).Match(decl)
}

// emitKnown registers with the runtime the functions of the unit that
// cannot allocate and whose address the unit takes (a call through a
// pointer to one needs no frame: frameCall), from a constructor, and
// unregisters them from a destructor.
func (w *weaver) emitKnown() {
	if w.need == nil {
		return
	}
	names := w.addressTaken()
	if len(names) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "static void (*const __weave_known_%s[%d])(void) = {\n", w.tag, len(names))
	for _, n := range names {
		fmt.Fprintf(&b, "\t(void (*)(void))%s,\n", n)
	}
	b.WriteString("};\n")
	fmt.Fprintf(&b, "__attribute__((__constructor__)) static void __weave_known_reg_%s(void) { __weave_register_known(__weave_known_%[1]s, %d); }\n", w.tag, len(names))
	fmt.Fprintf(&b, "__attribute__((__destructor__)) static void __weave_known_unreg_%s(void) { __weave_unregister_known(__weave_known_%[1]s, %d); }\n", w.tag, len(names))
	w.buf.Insert(len(w.u.Text), b.String())
}

// addressTaken returns, sorted, the functions defined at file scope in the
// unit that cannot allocate (needNone), are not inline, and whose name
// the unit uses other than as the callee of a call: whose address it
// takes. The frame analysis found the names in the function bodies
// (w.refs: a second walk of the whole unit cost 60 ms of weaving
// sqlite3.c); the rest of the unit is walked here.
func (w *weaver) addressTaken() []string {
	// Inline functions are left out: the reference would keep a copy of
	// one whose address only dead code takes (a header's helpers), which
	// the compiler would otherwise drop, with what it refers to.
	inline := map[string]bool{}
	for l := w.u.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		ed := l.ExternalDeclaration
		if ed == nil || ed.Case != cc.ExternalDeclarationFuncDef {
			walk(ed, w.refs.visit)
			continue
		}
		fd := ed.FunctionDefinition
		if fd.Declarator.IsInline() {
			inline[fd.Declarator.Name()] = true
		}
		walk(fd.DeclarationList, w.refs.visit)
		walk(fd.DeclarationSpecifiers, w.refs.visit)
		walk(fd.Declarator, w.refs.visit)
	}
	var names []string
	for name := range w.refs.names {
		if need, ok := w.need[name]; ok && need == needNone && !inline[name] {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// funcRefs collects the functions defined in the unit whose names the
// nodes it visits use other than as the callee of a call.
type funcRefs struct {
	w       *weaver
	callees map[*cc.PrimaryExpression]bool // the callees of the calls visited
	names   map[string]bool
	visit   func(cc.Node) bool // note, once
}

func newFuncRefs(w *weaver) *funcRefs {
	r := &funcRefs{w: w, callees: map[*cc.PrimaryExpression]bool{}, names: map[string]bool{}}
	r.visit = r.note
	return r
}

// note notes n; a walk visits a call before its callee.
func (r *funcRefs) note(n cc.Node) bool {
	switch x := n.(type) {
	case *cc.PostfixExpression:
		if x.Case == cc.PostfixExpressionCall {
			if pe := calleeIdent(x.PostfixExpression); pe != nil {
				r.callees[pe] = true
			}
		}
	case *cc.PrimaryExpression:
		if x.Case != cc.PrimaryExpressionIdent || r.callees[x] {
			return true
		}
		name := x.Token.SrcStr()
		if !r.w.defined[name] || r.names[name] || strings.Contains(name, "$") {
			return true
		}
		if d, ok := x.ResolvedTo().(*cc.Declarator); ok && d != nil && d.Type() != nil && d.Type().Kind() == cc.Function {
			r.names[name] = true
		}
	}
	return true
}

// calleeIdent returns the identifier a callee expression names through
// parentheses, (f)(x), or nil.
func calleeIdent(e cc.ExpressionNode) *cc.PrimaryExpression {
	for {
		pe, ok := e.(*cc.PrimaryExpression)
		if !ok {
			return nil
		}
		switch pe.Case {
		case cc.PrimaryExpressionIdent:
			return pe
		case cc.PrimaryExpressionExpr:
			if el, ok := pe.ExpressionList.(*cc.ExpressionList); ok && el.ExpressionList == nil {
				e = el.AssignmentExpression
				continue
			}
			e = pe.ExpressionList
			continue
		}
		return nil
	}
}
