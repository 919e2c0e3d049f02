package goweave

import (
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/dave/dst"
)

// The frame policy, as on the C side (README, Frames): with auto, a
// function gets a frame only when it can be on an allocation chain below
// its own allocations, that is when it calls something that may allocate at
// a woven site: a function of the package that may, a function of another
// woven package, a call through a func value or an interface, a function of
// an unwoven package (the standard library) given something it can call
// back (a func, an interface, or a value holding one). A function whose
// only allocations are its own sites (an allocation leaf) is frameless
// too: the runtime makes its node when one of its sites allocates. The
// others keep their exact bodies, so the compiler inlines them as in the
// plain build. A function the plain build inlines (the compiler's -m says
// "can inline") is frameless too, as a frameless C function: a frame's
// defer would stop its inlining, its work is its caller's and chains skip
// it, as gprof and perf show inlined functions. A function a go statement
// runs is framed even so, so that the goroutines left at exit are listed
// by the function they run.

// FramesEnv names the environment variable of the frame policy (auto,
// unit or all; unit is auto, as Go packages share no summaries).
const FramesEnv = "WEAVE_FRAMES"

// ParseFrames reports whether a policy name asks for a frame in every
// function ("all"); "", "auto" and "unit" do not.
func ParseFrames(s string) (all bool, err error) {
	switch s {
	case "", "auto", "unit":
		return false, nil
	case "all":
		return true, nil
	}
	return false, fmt.Errorf("unknown frame policy %q (want auto, unit or all)", s)
}

// fnode is a function of the package in the call graph: a declaration
// (keyed by its *types.Func) or a literal (by its *ast.FuncLit).
type fnode struct {
	sites     bool  // it has a woven allocation site
	spawned   bool  // a go statement of the package runs it
	unknown   bool  // it calls something that may allocate, whatever the package's functions do
	inlinable bool  // the plain build inlines it
	callees   []any // the package's functions it calls
	entry     func(framed bool)
}

// callGraph is the package's functions and their calls, built while the
// files are woven and resolved before the frames are put in.
type callGraph struct {
	nodes map[any]*fnode
	woven func(path string) bool
}

func (g *callGraph) node(key any) *fnode {
	n := g.nodes[key]
	if n == nil {
		n = &fnode{}
		g.nodes[key] = n
	}
	return n
}

// framed resolves the graph: a function is framed when it calls something
// that may allocate; mayAlloc is the fixed point of "has a site or calls
// something that may allocate".
func (g *callGraph) framed() map[any]bool {
	may := map[any]bool{}
	for k, n := range g.nodes {
		may[k] = n.sites || n.unknown
	}
	for changed := true; changed; {
		changed = false
		for k, n := range g.nodes {
			if may[k] {
				continue
			}
			for _, c := range n.callees {
				if may[c] {
					may[k], changed = true, true
					break
				}
			}
		}
	}
	framed := map[any]bool{}
	for k, n := range g.nodes {
		framed[k] = n.unknown
		for _, c := range n.callees {
			framed[k] = framed[k] || may[c]
		}
		framed[k] = framed[k] && !n.inlinable || n.spawned
	}
	return framed
}

// funcKey is the graph key of the function being woven, or nil at package
// level.
func (w *weaver) funcKey() any {
	if len(w.keys) == 0 {
		return nil
	}
	return w.keys[len(w.keys)-1]
}

// addCall records a call made by the function being woven.
func (w *weaver) addCall(n *ast.CallExpr) {
	key := w.funcKey()
	if key == nil {
		return
	}
	from := w.graph.node(key)
	callee, may := w.callee(n)
	switch {
	case callee != nil:
		from.callees = append(from.callees, callee)
	case may:
		from.unknown = true
	}
}

// callee returns the package's function a call calls, or whether the call
// may allocate (through a function not of this package).
func (w *weaver) callee(n *ast.CallExpr) (key any, may bool) {
	if tv := w.info.Types[n.Fun]; tv.IsType() || tv.IsBuiltin() {
		return nil, false
	}
	var id *ast.Ident
	switch f := ast.Unparen(n.Fun).(type) {
	case *ast.FuncLit:
		return f, false
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		if sel := w.info.Selections[f]; sel != nil {
			if types.IsInterface(sel.Recv()) && sel.Kind() != types.FieldVal {
				return nil, true // a dynamic call
			}
			if sel.Kind() == types.FieldVal {
				return nil, true // a func-valued field
			}
		}
		id = f.Sel
	case *ast.IndexExpr, *ast.IndexListExpr: // f[T](x)
		switch x := ast.Unparen(typeparams(f)).(type) {
		case *ast.Ident:
			id = x
		case *ast.SelectorExpr:
			id = x.Sel
		}
	}
	if id == nil {
		return nil, true
	}
	fn, ok := w.info.Uses[id].(*types.Func)
	if !ok {
		return nil, true // a func value
	}
	fn = fn.Origin()
	if fn.Pkg() == w.pkg {
		return fn, false
	}
	if fn.Pkg() == nil || w.graph.woven(fn.Pkg().Path()) {
		return nil, true
	}
	// An unwoven function allocates at no woven site unless it calls back.
	if sel, ok := ast.Unparen(n.Fun).(*ast.SelectorExpr); ok && w.info.Selections[sel] != nil && canCallBack(w.typeOf(sel.X), nil) {
		return nil, true
	}
	for _, a := range n.Args {
		if canCallBack(w.typeOf(a), nil) {
			return nil, true
		}
	}
	return nil, false
}

// typeparams is the function an instantiation f[T] or f[T, U] names.
func typeparams(e ast.Expr) ast.Expr {
	if x, ok := e.(*ast.IndexExpr); ok {
		return x.X
	}
	return e.(*ast.IndexListExpr).X
}

// canCallBack reports whether a value of type t holds or leads to a func
// or an interface: something an unwoven function could call.
func canCallBack(t types.Type, seen map[types.Type]bool) bool {
	if seen[t] {
		return false
	}
	if seen == nil {
		seen = map[types.Type]bool{}
	}
	seen[t] = true
	switch u := t.Underlying().(type) {
	case *types.Signature, *types.Interface, *types.TypeParam:
		return true
	case *types.Pointer:
		return canCallBack(u.Elem(), seen)
	case *types.Slice:
		return canCallBack(u.Elem(), seen)
	case *types.Array:
		return canCallBack(u.Elem(), seen)
	case *types.Chan:
		return canCallBack(u.Elem(), seen)
	case *types.Map:
		return canCallBack(u.Key(), seen) || canCallBack(u.Elem(), seen)
	case *types.Struct:
		for i := range u.NumFields() {
			if canCallBack(u.Field(i).Type(), seen) {
				return true
			}
		}
	case *types.Tuple:
		for i := range u.Len() {
			if canCallBack(u.At(i).Type(), seen) {
				return true
			}
		}
	}
	return false
}

// StdUnwoven is the default Options.Woven: every package is woven but the
// standard library's (a directory under GOROOT/src).
func StdUnwoven(path string) bool { return !isStd(runtime.GOROOT(), path) }

var (
	stdMu    sync.Mutex
	stdCache = map[string]bool{}
)

func isStd(goroot, path string) bool {
	first, _, _ := strings.Cut(path, "/")
	if strings.Contains(first, ".") {
		return false
	}
	stdMu.Lock()
	defer stdMu.Unlock()
	dir := filepath.Join(goroot, "src", filepath.FromSlash(path))
	v, ok := stdCache[dir]
	if !ok {
		fi, err := os.Stat(dir)
		v = err == nil && fi.IsDir()
		stdCache[dir] = v
	}
	return v
}

// frame puts the entry advice into the function at the top of the walk's
// stack once the graph is resolved.
func (w *weaver) frame(key any, body *dst.BlockStmt, orig *ast.BlockStmt, fn int, isMain bool, after func()) {
	w.graph.node(key).entry = func(framed bool) {
		entered := framed || w.opt.AllFrames || isMain
		if framed || w.opt.AllFrames {
			w.enter(body, orig, fn, isMain, true)
		} else {
			w.funcs[fn].frameless = true
			if isMain {
				w.enter(body, orig, fn, isMain, false)
			}
		}
		if entered { // enter put the first statement back on its line
			w.keepLines(body, orig, 1)
		} else {
			w.keepLines(body, orig, 0)
		}
		if after != nil {
			after()
		}
	}
}

// keepLines puts a line directive before each statement from the first-th
// of a body that was on one line: the printer breaks a body that weaving
// made long over several lines, a statement a line, and the statements'
// lines (in panics, in the profile) must stay the source's.
func (w *weaver) keepLines(body *dst.BlockStmt, orig *ast.BlockStmt, first int) {
	if !w.opt.LineDirectives || w.pos(orig.Lbrace).Line != w.pos(orig.Rbrace).Line {
		return
	}
	stmts := body.List[len(body.List)-len(orig.List):] // after those enter added
	for i := first; i < len(orig.List); i++ {
		d := stmts[i].Decorations()
		d.Before = dst.NewLine // the directive starts the statement's line
		w.directiveBefore(d, w.pos(orig.List[i].Pos()))
	}
}
