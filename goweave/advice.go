package goweave

import (
	"go/ast"
	"go/token"
	"go/types"
	"strconv"
	"strings"

	"github.com/dave/dst"
	"github.com/dave/dst/dstutil"
)

// pre opens a function's record when the walk enters its body.
func (w *weaver) pre(c *dstutil.Cursor) bool {
	switch n := w.astOf(c.Node()).(type) {
	case *ast.FuncDecl:
		if n.Body == nil || lowLevel(n) {
			return false
		}
		w.stack = append(w.stack, w.newFunc(w.funcName(n), n.Type.Func))
		w.keys = append(w.keys, w.info.Defs[n.Name])
		at := n.Name.Pos() // where the compiler reports it: the token after func
		if n.Recv != nil {
			at = n.Recv.Opening
		}
		w.inlinable(at)
	case *ast.FuncLit:
		w.keys = append(w.keys, n)
		w.inlinable(n.Type.Func)
		outer := w.prefix() + ".init"
		if len(w.stack) > 0 {
			outer = w.funcs[w.stack[len(w.stack)-1]].name
		}
		w.closures[outer]++
		sep := ".func"
		if len(w.stack) > 1 || strings.Contains(outer, ".func") {
			sep = "."
		}
		w.stack = append(w.stack, w.newFunc(outer+sep+strconv.Itoa(w.closures[outer]), n.Type.Func))
	case *ast.BinaryExpr:
		if w.isConcat(n) && !w.inner[n] {
			w.markInner(n.X)
			w.markInner(n.Y)
		}
	case *ast.AssignStmt:
		if w.assignsConcat(n) {
			w.markInner(n.Rhs[0])
		}
	}
	return true
}

// markInner marks the concatenations within e (through parentheses) as
// part of the one that contains them: the compiler makes one string of
// a + (b + c) and of s += a + b.
func (w *weaver) markInner(e ast.Expr) {
	if b, ok := ast.Unparen(e).(*ast.BinaryExpr); ok && w.isConcat(b) {
		w.inner[b] = true
		w.markInner(b.X)
		w.markInner(b.Y)
	}
}

// inlinable marks the function being entered as one the plain build
// inlines when the compiler reported it at p.
func (w *weaver) inlinable(p token.Pos) {
	pos := w.pos(p)
	if w.opt.Inlinable[Pos{pos.Filename, pos.Line, pos.Column}] {
		w.graph.node(w.funcKey()).inlinable = true
	}
}

// lowLevel reports whether a function carries a compiler directive that
// forbids what the advice does (grow the stack, call, write barriers).
func lowLevel(n *ast.FuncDecl) bool {
	if n.Doc == nil {
		return false
	}
	for _, c := range n.Doc.List {
		switch strings.Fields(c.Text + " ")[0] {
		case "//go:nosplit", "//go:systemstack", "//go:nowritebarrier", "//go:nowritebarrierrec",
			"//go:yeswritebarrierrec", "//go:cgo_unsafe_args", "//go:uintptrescapes", "//go:norace":
			return true
		}
	}
	return false
}

// post weaves a node after its children: entry advice into functions,
// allocation advice around allocation expressions, go statements, os.Exit.
func (w *weaver) post(c *dstutil.Cursor) bool {
	a := w.astOf(c.Node())
	if a == nil {
		return true
	}
	switch n := a.(type) {
	case *ast.FuncDecl:
		if n.Body == nil || lowLevel(n) {
			break
		}
		fn, key := w.stack[len(w.stack)-1], w.funcKey()
		w.stack, w.keys = w.stack[:len(w.stack)-1], w.keys[:len(w.keys)-1]
		w.frame(key, c.Node().(*dst.FuncDecl).Body, n.Body, fn, n.Name.Name == "main" && n.Recv == nil && w.pkg.Name() == "main", nil)
	case *ast.FuncLit:
		fn, key := w.stack[len(w.stack)-1], w.funcKey()
		w.stack, w.keys = w.stack[:len(w.stack)-1], w.keys[:len(w.keys)-1]
		lit := c.Node().(*dst.FuncLit)
		w.frame(key, lit.Body, n.Body, fn, false, func() {
			if w.opt.LineDirectives && w.pos(n.Body.Lbrace).Line == w.pos(n.Body.Rbrace).Line {
				// The body now spans lines: what follows it on its line goes
				// back to its own position.
				end := w.pos(n.Body.Rbrace)
				end.Column++
				lit.Decs.End.Append(w.lineDirective(end, 0))
			}
		})
	case *ast.GoStmt:
		w.goStmt(c, n)
	case *ast.CallExpr:
		w.addCall(n)
		w.call(c, n)
	case *ast.UnaryExpr:
		if lit, ok := n.X.(*ast.CompositeLit); ok && n.Op == token.AND {
			w.wrap(c, n.OpPos, "New", "composite", w.elem(n), nil)
			_ = lit
		}
	case *ast.CompositeLit:
		if _, addr := c.Parent().(*dst.UnaryExpr); addr || n.Type == nil {
			break // &T{...} is woven whole; an element of an outer literal has no type to wrap
		}
		switch u := w.typeOf(n).Underlying().(type) {
		case *types.Slice:
			w.wrap(c, n.Lbrace, "Slice", "composite", u.Elem(), w.typeOf(n))
		case *types.Map:
			w.wrap(c, n.Lbrace, "Map", "composite", nil, w.typeOf(n))
		}
	case *ast.BinaryExpr:
		if w.isConcat(n) && !w.inner[n] {
			w.concat(c, n)
		}
	case *ast.AssignStmt:
		w.concatAssign(c, n)
	}
	return true
}

// enter puts `defer rt.Enter(&f).Exit()` first in a body when framed
// (and before it `defer rt.Finish()` in main.main, which runs last).
func (w *weaver) enter(body *dst.BlockStmt, orig *ast.BlockStmt, fn int, isMain, framed bool) {
	call := func(fun dst.Expr, args ...dst.Expr) *dst.CallExpr { return &dst.CallExpr{Fun: fun, Args: args} }
	var stmts []dst.Stmt
	if framed {
		enter := call(w.rt("Enter"), w.record("f", fn))
		stmts = append(stmts, &dst.DeferStmt{Call: call(&dst.SelectorExpr{X: enter, Sel: dst.NewIdent("Exit")})})
	}
	if isMain {
		stmts = append([]dst.Stmt{&dst.DeferStmt{Call: call(w.rt("Finish"))}}, stmts...)
	}
	if len(body.List) > 0 {
		first := body.List[0]
		stmts[0].Decorations().Before = first.Decorations().Before
		first.Decorations().Before = dst.NewLine
		if w.opt.LineDirectives {
			w.directiveBefore(first.Decorations(), w.pos(orig.List[0].Pos()))
		}
	}
	body.List = append(stmts, body.List...)
}

// funcName is the function's name as the Go runtime prints it:
// path.F, path.T.M, path.(*T).M.
func (w *weaver) funcName(n *ast.FuncDecl) string {
	if n.Recv == nil || len(n.Recv.List) == 0 {
		return w.prefix() + "." + n.Name.Name
	}
	t := n.Recv.List[0].Type
	ptr := false
	if s, ok := t.(*ast.StarExpr); ok {
		t, ptr = s.X, true
	}
	generic := false
	switch x := t.(type) {
	case *ast.IndexExpr:
		t, generic = x.X, true
	case *ast.IndexListExpr:
		t, generic = x.X, true
	}
	name := "?"
	if id, ok := t.(*ast.Ident); ok {
		name = id.Name
	}
	if generic {
		name += "[...]"
	}
	if ptr {
		name = "(*" + name + ")"
	}
	return w.prefix() + "." + name + "." + n.Name.Name
}

func (w *weaver) typeOf(e ast.Expr) types.Type {
	if tv, ok := w.info.Types[e]; ok && tv.Type != nil {
		return tv.Type
	}
	return types.Typ[types.Invalid]
}

func (w *weaver) isString(e ast.Expr) bool {
	tv := w.info.Types[e]
	if tv.Type == nil || tv.Value != nil {
		return false
	}
	b, ok := tv.Type.Underlying().(*types.Basic)
	return ok && b.Info()&types.IsString != 0 && b.Kind() != types.UntypedString
}

func (w *weaver) isConcat(n ast.Node) bool {
	b, ok := n.(*ast.BinaryExpr)
	return ok && b.Op == token.ADD && w.isString(b)
}

// concat weaves a + b + ... as rt.Concat(&site, []int{len(a), len(b),
// ...}, a + b + ...) when its operands can be evaluated twice (the runtime
// allocates nothing when only one is not empty), else as rt.String(&site,
// a + b + ...).
func (w *weaver) concat(c *dstutil.Cursor, n *ast.BinaryExpr) {
	if lens, ok := w.lens(w.concatOperands(n)); ok {
		w.wrap(c, w.concatPos(n), "Concat", "concat", nil, w.typeOf(n), lens)
	} else {
		w.wrap(c, w.concatPos(n), "String", "concat", nil, w.typeOf(n))
	}
}

// lens is []int{len(op), ...} for the operands, or false when one cannot
// be evaluated twice.
func (w *weaver) lens(ops []ast.Expr) (dst.Expr, bool) {
	var lens []dst.Expr
	for _, op := range ops {
		x := w.dstOf(op)
		if !pure(op) || x == nil {
			return nil, false
		}
		x = dst.Clone(x).(dst.Expr)
		*x.Decorations() = dst.NodeDecs{}
		lens = append(lens, &dst.CallExpr{Fun: dst.NewIdent("len"), Args: []dst.Expr{x}})
	}
	return &dst.CompositeLit{Type: &dst.ArrayType{Elt: dst.NewIdent("int")}, Elts: lens}, true
}

// concatOperands are the operands of a concatenation as the compiler
// counts them: through parentheses, (a + b) + c and a + (b + c) are one
// concatenation of three.
func (w *weaver) concatOperands(e ast.Expr) []ast.Expr {
	if b, ok := ast.Unparen(e).(*ast.BinaryExpr); ok && w.isConcat(b) {
		return append(w.concatOperands(b.X), w.concatOperands(b.Y)...)
	}
	return []ast.Expr{e}
}

// concatPos is where the compiler reported a concatenation before Go 1.26:
// its first +.
func (w *weaver) concatPos(n *ast.BinaryExpr) token.Pos {
	for {
		x, ok := ast.Unparen(n.X).(*ast.BinaryExpr)
		if !ok || !w.isConcat(x) {
			return n.OpPos
		}
		n = x
	}
}

// elem is the type a pointer-typed expression points to.
func (w *weaver) elem(e ast.Expr) types.Type {
	if p, ok := w.typeOf(e).Underlying().(*types.Pointer); ok {
		return p.Elem()
	}
	return nil
}

// heap reports whether the allocation of kind reported at one of at (the
// first the compiler names) is to be counted: it is on the heap by the
// compiler's escape analysis, or there is none. The analysis names the
// allocations it could keep on the stack; an op it says nothing about (a
// channel; append's growth and s += t when not named) is on the heap.
//
// A make([]T, n) of non-constant size or an append growth that does not
// escape is still on the heap when it is over the compiler's 32-byte stack
// buffer: those are counted over 32 bytes only (small is true).
func (w *weaver) heap(op, kind string, at ...token.Pos) (heap, small bool) {
	if w.opt.Escapes == nil || op == "chan" {
		return true, false
	}
	for _, p := range at {
		pos := w.pos(p)
		esc, named := w.opt.Escapes[Escape{Pos{pos.Filename, pos.Line, pos.Column}, kind}]
		switch {
		case !named:
			continue
		case !esc && (op == "append" || op == "make~"):
			return true, true
		}
		return esc, false
	}
	return op == "append" || op == "concat=", false
}

// reportedAt is where the compiler reports the allocation of an
// expression of kind: a call at its parenthesis; a conversion at its
// operand (before Go 1.26 at its parenthesis); a concatenation at its
// last + (before, its first).
func (w *weaver) reportedAt(n ast.Node, kind string, at token.Pos) []token.Pos {
	switch n := n.(type) {
	case *ast.CallExpr:
		if kind == kindConvert && len(n.Args) == 1 {
			return []token.Pos{operandPos(n.Args[0]), n.Lparen}
		}
		return []token.Pos{n.Lparen}
	case *ast.BinaryExpr:
		return []token.Pos{n.OpPos, at}
	}
	return []token.Pos{at}
}

// operandPos is where the compiler places an expression: at its operator,
// parenthesis, bracket, brace or selector's dot.
func operandPos(e ast.Expr) token.Pos {
	switch e := e.(type) {
	case *ast.ParenExpr:
		return e.Lparen
	case *ast.SelectorExpr:
		return e.X.End()
	case *ast.StarExpr:
		return e.Star
	case *ast.UnaryExpr:
		return e.OpPos
	case *ast.BinaryExpr:
		return e.OpPos
	case *ast.CallExpr:
		return e.Lparen
	case *ast.IndexExpr:
		return e.Lbrack
	case *ast.IndexListExpr:
		return e.Lbrack
	case *ast.SliceExpr:
		return e.Lbrack
	case *ast.CompositeLit:
		return e.Lbrace
	case *ast.TypeAssertExpr:
		return e.X.End()
	}
	return e.Pos()
}

// wrap replaces the expression at the cursor with rt.helper(&site, expr).
// sizeOf is the type whose size the site records (the element's for
// slices), named is the type it names (default sizeOf).
func (w *weaver) wrap(c *dstutil.Cursor, at token.Pos, helper, op string, sizeOf, named types.Type, extra ...dst.Expr) {
	if w.opt.NoAllocations {
		return
	}
	kind := opKind(helper, op)
	heap, small := w.heap(op, kind, w.reportedAt(w.astOf(c.Node()), kind, at)...)
	if !heap {
		return
	}
	if small {
		extra = append([]dst.Expr{&dst.Ident{Name: "true"}}, extra...)
	} else if helper == "Slice" || helper == "Append" {
		extra = append([]dst.Expr{&dst.Ident{Name: "false"}}, extra...)
	}
	if op == "chan" || op == "make~" {
		op = "make"
	}
	site := w.newSite(at, op, sizeOf, named)
	w.sites[site].fixed = helper == "New" && w.sites[site].size > 0
	e := c.Node().(dst.Expr)
	decs := *e.Decorations()
	*e.Decorations() = dst.NodeDecs{}
	args := append([]dst.Expr{w.record("s", site)}, extra...)
	call := &dst.CallExpr{Fun: w.rt(helper), Args: append(args, e)}
	call.Decs.NodeDecs = decs
	c.Replace(call)
}

// opKind is the kind of expression of op woven with helper.
func opKind(helper, op string) string {
	switch op {
	case "composite":
		if helper == "New" {
			return kindAddr
		}
		return kindLit
	case "make~", "chan":
		return kindMake
	case "concat=":
		return kindConcat
	}
	return op
}

func (w *weaver) newSite(at token.Pos, op string, sizeOf, named types.Type) int {
	if len(w.stack) == 0 { // a package-level initialiser
		w.stack = append(w.stack, w.initFunc())
		defer func() { w.stack = w.stack[:0] }()
	}
	// The size is the block's only where the type names all of it (new,
	// &T{}); a slice's, map's or string's block has a run-time size.
	var size int64
	if named == nil {
		named = sizeOf
		if sizeOf != nil && !hasTypeParam(sizeOf) {
			size = w.opt.Sizes.Sizeof(sizeOf)
		}
	}
	typ := ""
	if named != nil {
		typ = types.TypeString(named, func(p *types.Package) string {
			if p == w.pkg {
				return ""
			}
			return p.Name()
		})
	}
	if key := w.funcKey(); key != nil {
		w.graph.node(key).sites = true
	}
	w.sites = append(w.sites, siteRec{fn: w.stack[len(w.stack)-1], pos: w.pos(at), op: op, typ: typ, size: size})
	return len(w.sites) - 1
}

// initFunc is the record that package-level initialisers' allocations are
// charged to.
func (w *weaver) initFunc() int {
	for i, f := range w.funcs {
		if f.name == w.prefix()+".init" && f.pos.Line == 0 {
			return i
		}
	}
	w.funcs = append(w.funcs, funcRec{name: w.prefix() + ".init", pos: token.Position{Filename: w.pos(w.file.Package).Filename}, frameless: true})
	return len(w.funcs) - 1
}

func hasTypeParam(t types.Type) bool {
	switch t := t.(type) {
	case *types.TypeParam:
		return true
	case *types.Named:
		if args := t.TypeArgs(); args != nil {
			for i := range args.Len() {
				if hasTypeParam(args.At(i)) {
					return true
				}
			}
		}
		return false
	case *types.Pointer:
		return hasTypeParam(t.Elem())
	case *types.Slice:
		return hasTypeParam(t.Elem())
	case *types.Array:
		return hasTypeParam(t.Elem())
	case *types.Chan:
		return hasTypeParam(t.Elem())
	case *types.Map:
		return hasTypeParam(t.Key()) || hasTypeParam(t.Elem())
	case *types.Struct:
		for i := range t.NumFields() {
			if hasTypeParam(t.Field(i).Type()) {
				return true
			}
		}
	}
	return false
}
