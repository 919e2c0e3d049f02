package goweave

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"github.com/dave/dst"
	"github.com/dave/dst/dstutil"
)

// call weaves a call: the builtins new, make and append, conversions that
// copy between strings and byte or rune slices, and os.Exit (which must
// write the profile first).
func (w *weaver) call(c *dstutil.Cursor, n *ast.CallExpr) {
	if tv := w.info.Types[n.Fun]; tv.IsType() {
		w.conversion(c, n)
		return
	}
	switch fun := ast.Unparen(n.Fun).(type) {
	case *ast.Ident:
		b, ok := w.info.Uses[fun].(*types.Builtin)
		if !ok {
			return
		}
		switch b.Name() {
		case "new":
			w.wrap(c, n.Pos(), "New", "new", w.elem(n), nil)
		case "make":
			switch u := w.typeOf(n).Underlying().(type) {
			case *types.Slice:
				op := "make"
				for _, a := range n.Args[1:] {
					if w.info.Types[a].Value == nil {
						op = "make~" // a size known at run time only
					}
				}
				w.wrap(c, n.Pos(), "Slice", op, u.Elem(), w.typeOf(n))
			case *types.Map:
				w.wrap(c, n.Pos(), "Map", "make", nil, w.typeOf(n))
			case *types.Chan:
				helper := map[types.ChanDir]string{types.SendRecv: "Chan", types.RecvOnly: "ChanRecv", types.SendOnly: "ChanSend"}[u.Dir()]
				w.wrap(c, n.Pos(), helper, "chan", u.Elem(), w.typeOf(n))
			}
		case "append":
			w.appendCall(c, n)
		}
	case *ast.SelectorExpr:
		if f, ok := w.info.Uses[fun.Sel].(*types.Func); ok && f.Pkg() != nil && f.Pkg().Path() == "os" && f.Name() == "Exit" {
			if x, ok := fun.X.(*ast.Ident); ok {
				w.osExit = x.Name
				c.Node().(*dst.CallExpr).Fun = w.rt("Exit")
			}
		}
	}
}

// appendCall weaves append(s, ...) as rt.Append(&site, cap(s), append(s,
// ...)) when s can be evaluated twice (a variable, field or element of
// one); the growth is the capacity after, when it changed.
func (w *weaver) appendCall(c *dstutil.Cursor, n *ast.CallExpr) {
	if len(n.Args) == 0 || !pure(n.Args[0]) {
		return
	}
	u, ok := w.typeOf(n).Underlying().(*types.Slice)
	if !ok {
		return
	}
	first := dst.Clone(c.Node().(*dst.CallExpr).Args[0]).(dst.Expr)
	*first.Decorations() = dst.NodeDecs{}
	oldCap := &dst.CallExpr{Fun: dst.NewIdent("cap"), Args: []dst.Expr{first}}
	w.wrap(c, n.Pos(), "Append", "append", u.Elem(), w.typeOf(n), oldCap)
}

// pure reports whether evaluating e twice is evaluating it once: no calls,
// no receives.
func pure(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident, *ast.BasicLit:
		return true
	case *ast.ParenExpr:
		return pure(e.X)
	case *ast.SelectorExpr:
		return pure(e.X)
	case *ast.StarExpr:
		return pure(e.X)
	case *ast.IndexExpr:
		return pure(e.X) && pure(e.Index)
	case *ast.SliceExpr:
		return pure(e.X) && (e.Low == nil || pure(e.Low)) && (e.High == nil || pure(e.High)) && (e.Max == nil || pure(e.Max))
	}
	return false
}

// conversion weaves string(bytes), string(runes), string(rune), []byte(s)
// and []rune(s).
func (w *weaver) conversion(c *dstutil.Cursor, n *ast.CallExpr) {
	if len(n.Args) != 1 || w.info.Types[n.Args[0]].Value != nil && !w.isString(n) {
		return
	}
	to, from := w.typeOf(n), w.typeOf(n.Args[0])
	switch u := to.Underlying().(type) {
	case *types.Basic:
		if u.Info()&types.IsString == 0 {
			break
		}
		switch f := from.Underlying().(type) {
		case *types.Slice:
			helper := "FromBytes"
			if b, ok := f.Elem().Underlying().(*types.Basic); ok && b.Kind() == types.Int32 {
				helper = "FromRunes"
			}
			w.wrap(c, n.Pos(), helper, "convert", nil, to)
		case *types.Basic:
			if f.Info()&types.IsInteger != 0 {
				w.wrap(c, n.Pos(), "FromRune", "convert", nil, to)
			}
		}
	case *types.Slice:
		if b, ok := from.Underlying().(*types.Basic); ok && b.Info()&types.IsString != 0 {
			w.wrap(c, n.Pos(), "Slice", "convert", u.Elem(), to)
		}
	}
}

// concatAssign weaves s += t (s a variable) as s = rt.Concat(&site,
// []int{len(s), len(t)}, s + t), or rt.String(&site, s + t) when t cannot be evaluated twice.
func (w *weaver) concatAssign(c *dstutil.Cursor, n *ast.AssignStmt) {
	if !w.assignsConcat(n) {
		return
	}
	s := c.Node().(*dst.AssignStmt)
	lhs := dst.Clone(s.Lhs[0]).(dst.Expr)
	*lhs.Decorations() = dst.NodeDecs{}
	site := w.newSite(n.TokPos, "concat", nil, w.typeOf(n.Lhs[0]))
	sum := &dst.BinaryExpr{X: lhs, Op: token.ADD, Y: s.Rhs[0]}
	s.Tok = token.ASSIGN
	if lens, ok := w.lens(append([]ast.Expr{n.Lhs[0]}, w.concatOperands(n.Rhs[0])...)); ok {
		s.Rhs[0] = &dst.CallExpr{Fun: w.rt("Concat"), Args: []dst.Expr{w.record("s", site), lens, sum}}
	} else {
		s.Rhs[0] = &dst.CallExpr{Fun: w.rt("String"), Args: []dst.Expr{w.record("s", site), sum}}
	}
}

// assignsConcat reports whether concatAssign weaves n.
func (w *weaver) assignsConcat(n *ast.AssignStmt) bool {
	if n.Tok != token.ADD_ASSIGN || len(n.Lhs) != 1 || !w.isString(n.Lhs[0]) {
		return false
	}
	_, ok := n.Lhs[0].(*ast.Ident)
	return ok && len(w.stack) > 0 && !w.opt.NoAllocations
}

// goStmt weaves `go f(a, b)` so that the goroutine's stack starts under
// the spawning context:
//
//	{
//		__wg1, __wg2, __wg3, __wgc := f, a, b, rt.Spawn()
//		go func() { defer rt.Start(__wgc).Exit(); __wg1(__wg2, __wg3) }()
//	}
//
// f and the arguments are evaluated where go evaluates them, in the
// spawning goroutine. Constant and nil arguments stay in the call. A go
// statement whose function cannot be held in a variable (a builtin, a
// generic function instantiated by inference) is left as it is: its
// goroutine starts at the root.
func (w *weaver) goStmt(c *dstutil.Cursor, n *ast.GoStmt) {
	if len(w.stack) == 0 || !w.goable(n.Call) {
		return
	}
	if key, _ := w.callee(n.Call); key != nil {
		// Framed, so that a goroutine left at exit names the function it
		// runs, under its spawner's chain.
		w.graph.node(key).spawned = true
	}
	orig := c.Node().(*dst.GoStmt)
	call := orig.Call
	var names, values []dst.Expr
	hold := func(e dst.Expr) dst.Expr {
		w.tmp++
		id := fmt.Sprintf("__wg%d", w.tmp)
		names = append(names, dst.NewIdent(id))
		*e.Decorations() = dst.NodeDecs{}
		values = append(values, e)
		return dst.NewIdent(id)
	}
	newCall := &dst.CallExpr{Fun: hold(call.Fun), Ellipsis: call.Ellipsis}
	for i, arg := range call.Args {
		if tv := w.info.Types[n.Call.Args[i]]; tv.Value != nil || tv.IsNil() {
			newCall.Args = append(newCall.Args, arg)
			continue
		}
		newCall.Args = append(newCall.Args, hold(arg))
	}
	w.tmp++
	ctx := fmt.Sprintf("__wgc%d", w.tmp)
	names = append(names, dst.NewIdent(ctx))
	values = append(values, &dst.CallExpr{Fun: w.rt("Spawn")})
	start := &dst.DeferStmt{Call: &dst.CallExpr{Fun: &dst.SelectorExpr{
		X: &dst.CallExpr{Fun: w.rt("Start"), Args: []dst.Expr{dst.NewIdent(ctx)}}, Sel: dst.NewIdent("Exit")}}}
	body := &dst.BlockStmt{List: []dst.Stmt{start, &dst.ExprStmt{X: newCall}}}
	goStmt := &dst.GoStmt{Call: &dst.CallExpr{Fun: &dst.FuncLit{Type: &dst.FuncType{}, Body: body}}}
	assign := &dst.AssignStmt{Lhs: names, Tok: token.DEFINE, Rhs: values}
	block := &dst.BlockStmt{List: []dst.Stmt{assign, goStmt}}
	block.Decs.NodeDecs = orig.Decs.NodeDecs
	if w.opt.LineDirectives {
		end := w.pos(n.End())
		block.Decs.End.Append(w.lineDirective(end, 0))
	}
	c.Replace(block)
}

// goable reports whether a go statement's function and arguments can be
// held in variables.
func (w *weaver) goable(call *ast.CallExpr) bool {
	if w.info.Types[call.Fun].IsType() || w.info.Types[call.Fun].IsBuiltin() {
		return false
	}
	var id *ast.Ident
	switch f := ast.Unparen(call.Fun).(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	}
	if id != nil {
		if _, inferred := w.info.Instances[id]; inferred {
			return false
		}
	}
	for _, arg := range call.Args {
		tv := w.info.Types[arg]
		if tv.Value != nil || tv.IsNil() {
			continue
		}
		if b, ok := tv.Type.(*types.Basic); ok && b.Info()&types.IsUntyped != 0 {
			return false // an untyped bool from a comparison: its variable would be typed
		}
	}
	return true
}
