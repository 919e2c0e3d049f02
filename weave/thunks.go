package weave

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// Call thunks. A call framed where it is made (frameCall) of a function
// of another translation unit goes through a thunk of the unit: a static
// function of the callee's type that pushes the caller's frame, calls the
// callee with its own arguments and pops the frame on return. The caller
// then has the plain build's call, of another name, and the compiler's
// estimate of its size is the plain one's, where the frame's two asm
// statements in it counted two instructions (three or four more with the
// thread pointer's builtin): enough to stop gcc inlining a function at
// its limit, as Lua's lessthanothers into luaV_lessthan and luaV_execute.
// The thunk takes the callee's attributes (gcc's copy: noreturn, cold,
// nonnull...; clang gets noreturn and cold), and is kept out of every
// interprocedural optimisation (noipa), as the callee of another unit
// is. The arguments are evaluated before the thunk pushes the frame, so
// only calls whose arguments call nothing take one. Calls of the unit's
// own functions keep the statement expression: the callee is inlined
// into its caller as in the plain build.

// thunkCall frames the call x of the function of another unit that id
// names through a thunk, if it can; it reports whether it did.
func (w *weaver) thunkCall(x *cc.PostfixExpression, id *cc.PrimaryExpression) bool {
	attrs := w.thunkAttrs(id)
	if attrs == "" || x.ArgumentExpressionList != nil && hasCall(x.ArgumentExpressionList) {
		return false
	}
	name := id.Token.SrcStr()
	d, _ := id.ResolvedTo().(*cc.Declarator)
	if d == nil || d.IsSynthetic() || noThunk[name] || strings.HasPrefix(name, "__builtin_") || w.declaredAttr(id, "returns_twice") || w.diagnosed(id) {
		return false
	}
	// Declared in the text (not an implicit declaration, not one of
	// cc/v4's builtins), at file scope, before the caller: typeof(callee)
	// must work there.
	off := w.u.Offset(d.NameTok())
	if off < 0 || off+len(name) > w.defStart || string(w.u.Text[off:off+len(name)]) != name || !w.fileScope(d) {
		return false
	}
	ft, ok := d.Type().(*cc.FunctionType)
	if !ok {
		return false
	}
	params, ok := w.paramTypes(d)
	if !ok {
		return false
	}
	w.thunks++
	t := fmt.Sprintf("__weave_t%d", w.thunks)
	start := w.u.Offset(id.Token)
	w.buf.Replace(start, start+len(name), t)
	if m := w.asmThunk(t, name, ft, d, id); m != "" {
		// The call's symbol, as gcc prints it, expands the macro m that
		// defines the thunk: where gcc prints no call, there is none.
		w.buf.Insert(w.defStart, fmt.Sprintf("%sextern __typeof__(%s) %s __asm__(\"%s ; %s #\") %s; ", m, name, t, t, asmThunkMacro(t),
			strings.Replace(attrs, "__attribute__((", "__attribute__((__visibility__(\"hidden\"), ", 1)))
		return true
	}
	w.buf.Insert(w.defStart, fmt.Sprintf("static __typeof__(%s) %s %s; ", name, t, attrs))

	var b strings.Builder
	args := make([]string, len(params))
	zeros := make([]string, len(params))
	for i, p := range params {
		args[i] = fmt.Sprintf("__weave_a%d", i+1)
		zeros[i] = fmt.Sprintf("*(__typeof__(%s) *)0", p)
	}
	fmt.Fprintf(&b, "static __typeof__(%s(%s)) %s(", name, strings.Join(zeros, ", "), t)
	for i, p := range params {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "__typeof__(%s) %s", p, args[i])
	}
	if len(params) == 0 {
		b.WriteString("void")
	}
	ret := "return "
	if ft.Result() == nil || ft.Result().Kind() == cc.Void {
		ret = ""
	}
	fmt.Fprintf(&b, ") { %s; %s%s(%s); }\n", w.callGuard(fmt.Sprintf("__weave_enter%s(%s)", w.guard, w.callFrame)),
		ret, name, strings.Join(args, ", "))
	w.thunkDefs = append(w.thunkDefs, b.String())
	return true
}

// diagnosed reports whether a call of id is diagnosed where it is made
// (deprecated, unavailable, a warning or error attribute). The thunk
// would move the diagnostic from the user's call, and out of the
// #pragma GCC diagnostic that silences it there, into weave's text.
func (w *weaver) diagnosed(id *cc.PrimaryExpression) bool {
	return w.declaredAttr(id, "deprecated", "unavailable", "warning", "error")
}

// noThunk are the functions whose call must stay in the caller's own
// frame: alloca's block would be the thunk's, and a function that
// returns twice (vfork's child, getcontext's resumption) would return
// into a thunk that has returned already; swapcontext's call is wrapped
// by the weaver itself (weave.go, swapName).
var noThunk = map[string]bool{
	"alloca": true, "__alloca": true, "vfork": true, "__vfork": true, "getcontext": true, "savectx": true, "swapcontext": true,
	"setjmp": true, "_setjmp": true, "sigsetjmp": true, "__sigsetjmp": true, "__sigsetjmp_cancel": true,
}

// thunkAttrs returns the attributes of a thunk for a call of id, or ""
// where the compiler takes none: before gcc 9 (copy), or neither gcc nor
// clang; or where it does not optimise (Options.Unoptimized: -O0), which
// inlines nothing a thunk would keep as the plain build has it, and
// where gcc emits a static function called only in code it drops (if
// (0), __builtin_constant_p's argument): the thunk's call of an
// undefined function the plain build never references failed the link
// (c-torture's medce-1.c and its link_error, bcp-1.c).
func (w *weaver) thunkAttrs(id *cc.PrimaryExpression) string {
	m := w.u.AST.Macros
	if w.unoptimized {
		return ""
	}
	if m["__clang__"] != nil {
		a := "__noinline__, __no_instrument_function__"
		if w.declaredAttr(id, "noreturn") {
			a += ", __noreturn__"
		}
		if w.declaredAttr(id, "cold") {
			a += ", __cold__"
		}
		return "__attribute__((" + a + "))"
	}
	if m["__GNUC__"] != nil {
		if v := macroInt(w.u.AST, "__GNUC__"); v > 0 && v < 9 {
			return ""
		}
		return fmt.Sprintf("__attribute__((__noipa__, __no_instrument_function__, __copy__(%s)))", id.Token.SrcStr())
	}
	return ""
}

// declaredAttr reports whether the function id names is declared with
// one of the attributes names (noreturn: or _Noreturn).
func (w *weaver) declaredAttr(id *cc.PrimaryExpression, names ...string) bool {
	d, _ := id.ResolvedTo().(*cc.Declarator)
	if d == nil || d.Type() == nil {
		return false
	}
	if attrs := d.Type().Attributes(); attrs != nil {
		for _, a := range names {
			if attrs.IsAttrSet(a) || attrs.IsAttrSet("__"+a+"__") {
				return true
			}
		}
	}
	re := attrRegexp(names)
	for _, line := range bytes.Split(w.leadingText(d), []byte("\n")) {
		if t := bytes.TrimLeft(line, " \t"); (len(t) == 0 || t[0] != '#') && re.Match(line) {
			return true
		}
	}
	return false
}

// attrRegexps are attrRegexp's, by their attribute names: compiling one
// took 4% of a Lua unit's weave when it was done at every call.
var attrRegexps sync.Map

// attrRegexp returns the regexp matching any of the attributes names as
// a word in a declaration's text, each also as __NAME__ (noreturn also
// as _Noreturn).
func attrRegexp(names []string) *regexp.Regexp {
	key := strings.Join(names, "|")
	if re, ok := attrRegexps.Load(key); ok {
		return re.(*regexp.Regexp)
	}
	var words []string
	for _, a := range names {
		words = append(words, a, "__"+a+"__")
		if a == "noreturn" {
			words = append(words, "_Noreturn")
		}
	}
	re, _ := attrRegexps.LoadOrStore(key, regexp.MustCompile(`\b(`+strings.Join(words, "|")+`)\b`))
	return re.(*regexp.Regexp)
}

// fileScope reports whether d is declared at file scope.
func (w *weaver) fileScope(d *cc.Declarator) bool {
	for _, n := range w.u.AST.Scope.Nodes[d.Name()] {
		if n == d {
			return true
		}
	}
	return false
}

// paramTypes returns the type names of the parameters of the function d
// declares, from its prototype's text (the declared name taken out), or
// false if it has none or one the thunk cannot take: variadic, old-style,
// a parameter whose type names another (a variable length array), or
// with a storage class or attributes.
func (w *weaver) paramTypes(d *cc.Declarator) ([]string, bool) {
	dd := d.DirectDeclarator
	if dd == nil || dd.Case != cc.DirectDeclaratorFuncParam || dd.ParameterTypeList == nil ||
		dd.ParameterTypeList.Case != cc.ParameterTypeListList {
		return nil, false
	}
	// The name, through parentheses: Lua declares its API int (lua_getfield) (...).
	in := dd.DirectDeclarator
	for in != nil && in.Case == cc.DirectDeclaratorDecl && in.Declarator != nil && in.Declarator.Pointer == nil {
		in = in.Declarator.DirectDeclarator
	}
	if in == nil || in.Case != cc.DirectDeclaratorIdent {
		return nil, false
	}
	text := w.u.Text
	var types, names []string
	start := w.u.Offset(dd.Token) + 1 // after '('
	for l := dd.ParameterTypeList.ParameterList; l != nil; l = l.ParameterList {
		pd := l.ParameterDeclaration
		end := w.u.Offset(dd.Token2) // ')'
		if l.ParameterList != nil {
			end = w.u.Offset(l.ParameterList.Token) // the ',' before the next
		}
		if start < 0 || end > len(text) || start > end {
			return nil, false
		}
		var b []byte
		if pd.Case == cc.ParameterDeclarationDecl && pd.Declarator != nil {
			tok := pd.Declarator.NameTok()
			off := w.u.Offset(tok)
			if off < start || off+len(tok.SrcStr()) > end {
				return nil, false
			}
			// The name's own parentheses go with it: void (cb)(void *)
			// is void (void *), never void ()(void *), a function
			// returning a function.
			lo, hi := off, off+len(tok.SrcStr())
			for {
				l, h := skipSpace(text, lo, -1, start), skipSpace(text, hi, 1, end)
				if l <= start || h >= end || text[l-1] != '(' || text[h] != ')' {
					break
				}
				lo, hi = l-1, h+1
			}
			b = append(append(b, text[start:lo]...), text[hi:end]...)
			names = append(names, tok.SrcStr())
		} else {
			b = append(b, text[start:end]...)
		}
		var lines []string
		for _, line := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(line); t != "" && t[0] != '#' {
				lines = append(lines, t)
			}
		}
		types = append(types, strings.Join(lines, " "))
		start = end + 1
	}
	if len(types) == 1 && types[0] == "void" {
		return nil, true
	}
	for _, t := range types {
		if t == "" || t == "void" || strings.Contains(t, "__attribute__") || strings.Contains(t, "[[") ||
			hasWord(t, "register", "static") || hasWord(t, names...) {
			return nil, false
		}
		// A tag first declared in the prototype is another type than
		// the file's of that name.
		for _, m := range tagRef().FindAllStringSubmatch(t, -1) {
			if !w.fileTagBefore(m[1], w.u.Offset(dd.Token)) {
				return nil, false
			}
		}
	}
	return types, true
}

// skipSpace returns the offset past the white space of text from i in
// direction dir (1 forward, -1 backward: the offset after it), staying
// within limit.
func skipSpace(text []byte, i, dir, limit int) int {
	if dir < 0 {
		for i > limit && (text[i-1] == ' ' || text[i-1] == '\t' || text[i-1] == '\n') {
			i--
		}
		return i
	}
	for i < limit && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n') {
		i++
	}
	return i
}

var tagRef = lazyRegexp(`\b(?:struct|union|enum)\s+([A-Za-z_]\w*)`)

// fileTagBefore reports whether the tag is declared at file scope before
// offset off.
func (w *weaver) fileTagBefore(tag string, off int) bool {
	for _, n := range w.u.AST.Scope.Nodes[tag] {
		switch n.(type) {
		case *cc.StructOrUnionSpecifier, *cc.EnumSpecifier:
			if w.u.Offset(n) < off {
				return true
			}
		}
	}
	return false
}

// hasWord reports whether s holds one of words as an identifier.
func hasWord(s string, words ...string) bool {
	for _, wd := range words {
		for i := 0; ; {
			j := strings.Index(s[i:], wd)
			if j < 0 {
				break
			}
			j += i
			k := j + len(wd)
			if (j == 0 || !isIdentByte(s[j-1])) && (k == len(s) || !isIdentByte(s[k])) {
				return true
			}
			i = j + 1
		}
	}
	return false
}

// hasCall reports whether n holds a call.
func hasCall(n cc.Node) bool {
	found := false
	walk(n, func(m cc.Node) bool {
		if x, ok := m.(*cc.PostfixExpression); ok && x.Case == cc.PostfixExpressionCall {
			found = true
		}
		return !found
	})
	return found
}

// emitThunks adds the thunks' definitions after the unit's last line.
func (w *weaver) emitThunks() {
	if len(w.thunkDefs) > 0 {
		w.buf.Insert(len(w.u.Text), strings.Join(w.thunkDefs, ""))
	}
}
