// Package goweave weaves profiling advice into Go packages with dave/dst: a
// pseudo-stack push and pop in every function and advice around every heap
// allocation expression, calling the runtime github.com/weave-profiler/weave/goweave/rt.
package goweave

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dave/dst"
	"github.com/dave/dst/decorator"
	"github.com/dave/dst/dstutil"
)

// RuntimePath is the import path of the runtime woven code calls.
const RuntimePath = "github.com/weave-profiler/weave/goweave/rt"

// rtName is the name woven files import the runtime under.
const rtName = "__wrt"

// Options control a package's weaving.
type Options struct {
	// ImportPath is the package's path, the prefix of function names
	// ("main" for a command).
	ImportPath string
	// Importer resolves the package's imports for type checking.
	Importer types.Importer
	// Sizes gives the sizes of types (default: gc on amd64).
	Sizes types.Sizes
	// Escapes holds the compiler's escape analysis of the package: for an
	// allocation (ParseEscapes), true when it escapes to the heap, false
	// when it does not. Nil: every allocation expression counts.
	Escapes map[Escape]bool
	// Inlinable holds the functions the compiler inlines in the plain
	// build (ParseInlinable): under the auto policy they get no frame, so
	// that they are inlined woven too. Nil: none.
	Inlinable map[Pos]bool
	// LineDirectives adds //line directives so that positions in the woven
	// file (compiler messages, stack traces, the heap profile) are the
	// original file's.
	LineDirectives bool
	// Dir, when set, makes the file names in the records relative to it.
	Dir string
	// NoAllocations weaves functions only: the allocation advice is
	// generic, which a package whose language version is before go1.18
	// cannot call.
	NoAllocations bool
	// AllFrames gives every function a frame (--frames all); else a
	// function gets one only where it can be on an allocation chain
	// (frames.go).
	AllFrames bool
	// Woven reports whether a package other than this one is woven, so
	// that its functions may allocate at woven sites (default StdUnwoven).
	Woven func(path string) bool
}

// Pos is a position in a source file, as the compiler prints it.
type Pos struct {
	File      string
	Line, Col int
}

// Source is a file of the package: its name (for positions) and content.
type Source struct {
	Name string
	Src  []byte
}

// Error is a parse or type error, printed file:line:col: message.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Pos.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// Parse parses the package's files; a syntax error is an *Error.
func Parse(fset *token.FileSet, srcs []Source) ([]*ast.File, error) {
	files := make([]*ast.File, len(srcs))
	for i, s := range srcs {
		f, err := parser.ParseFile(fset, s.Name, s.Src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			if el, ok := err.(scanner.ErrorList); ok && len(el) > 0 {
				p := el[0].Pos
				return nil, &Error{Pos{p.Filename, p.Line, p.Column}, el[0].Msg}
			}
			return nil, err
		}
		files[i] = f
	}
	return files, nil
}

// Package weaves a package's files and returns their woven text, in order
// (nil for a file with nothing to weave). A syntax or type error is an
// *Error, and nothing is woven.
func Package(srcs []Source, opt Options) ([][]byte, error) {
	fset := token.NewFileSet()
	files, err := Parse(fset, srcs)
	if err != nil {
		return nil, err
	}
	if opt.Sizes == nil {
		opt.Sizes = types.SizesFor("gc", "amd64")
	}
	info := &types.Info{
		Types:      map[ast.Expr]types.TypeAndValue{},
		Uses:       map[*ast.Ident]types.Object{},
		Defs:       map[*ast.Ident]types.Object{},
		Instances:  map[*ast.Ident]types.Instance{},
		Selections: map[*ast.SelectorExpr]*types.Selection{},
	}
	var firstErr error
	conf := types.Config{Importer: opt.Importer, Sizes: opt.Sizes, Error: func(err error) {
		if firstErr == nil {
			firstErr = err
		}
	}}
	pkg, _ := conf.Check(opt.ImportPath, fset, files, info)
	if firstErr != nil {
		if te, ok := firstErr.(types.Error); ok {
			p := te.Fset.Position(te.Pos)
			return nil, &Error{Pos{p.Filename, p.Line, p.Column}, te.Msg}
		}
		return nil, firstErr
	}
	if opt.Woven == nil {
		opt.Woven = StdUnwoven
	}
	// Weave the allocation sites of every file and build the call graph,
	// then put in the frames it asks for and print.
	graph := &callGraph{nodes: map[any]*fnode{}, woven: opt.Woven}
	ws := make([]*weaver, len(files))
	for i, f := range files {
		ws[i] = &weaver{fset: fset, info: info, pkg: pkg, opt: &opt, file: f, index: i, closures: map[string]int{}, inner: map[ast.Node]bool{}, graph: graph}
		if err := ws[i].walk(); err != nil {
			return nil, fmt.Errorf("%s: %v", srcs[i].Name, err)
		}
	}
	for key, framed := range graph.framed() {
		if e := graph.nodes[key].entry; e != nil {
			e(framed)
		}
	}
	out := make([][]byte, len(files))
	for i, w := range ws {
		if out[i], err = w.print(); err != nil {
			return nil, fmt.Errorf("%s: %v", srcs[i].Name, err)
		}
	}
	return out, nil
}

// weaver weaves one file.
type weaver struct {
	fset     *token.FileSet
	info     *types.Info
	pkg      *types.Package
	opt      *Options
	file     *ast.File
	index    int // the file's index in the package: names its records
	dmap     decorator.Map
	funcs    []funcRec
	sites    []siteRec
	stack    []int // enclosing functions, indexes into funcs
	keys     []any // enclosing functions, keys of graph
	graph    *callGraph
	df       *dst.File
	closures map[string]int    // closures numbered per enclosing function
	inner    map[ast.Node]bool // concatenations inside another: woven with it
	osExit   string            // the name os is imported under, when os.Exit was replaced
	tmp      int
}

type funcRec struct {
	name      string
	pos       token.Position
	frameless bool
}

type siteRec struct {
	fn    int
	pos   token.Position
	op    string
	typ   string
	size  int64
	fixed bool // every block is size bytes
}

// walk weaves the file's allocation sites and adds its functions and
// calls to the graph.
func (w *weaver) walk() error {
	d := decorator.NewDecorator(w.fset)
	df, err := d.DecorateFile(w.file)
	if err != nil {
		return err
	}
	w.dmap = d.Map
	w.df = df
	dstutil.Apply(df, w.pre, w.post)
	return nil
}

// print prints the woven file once its frames are in.
func (w *weaver) print() ([]byte, error) {
	df := w.df
	if len(w.funcs) == 0 && w.osExit == "" {
		return nil, nil // nothing to weave: the file stays as it is
	}
	w.addImport(df)
	w.addRecords(df)
	if w.opt.LineDirectives {
		w.lineDecls(df)
	}
	var buf bytes.Buffer
	if err := decorator.Fprint(&buf, df); err != nil {
		return nil, err
	}
	return w.directives(buf.Bytes()), nil
}

// directives puts a //line directive for the original file before the
// package clause.
func (w *weaver) directives(b []byte) []byte {
	if !w.opt.LineDirectives {
		return b
	}
	name := w.fset.Position(w.file.Package).Filename
	return append([]byte("//line "+name+":1\n"), b...)
}

func (w *weaver) astOf(n dst.Node) ast.Node { return w.dmap.Ast.Nodes[n] }

// dstOf is the woven tree's expression for e, or nil.
func (w *weaver) dstOf(e ast.Expr) dst.Expr {
	x, _ := w.dmap.Dst.Nodes[e].(dst.Expr)
	return x
}

func (w *weaver) pos(p token.Pos) token.Position { return w.fset.Position(p) }

// lineDirective is a block //line comment that sets the position of the
// character after it (a space, before the token at p) to p.
func (w *weaver) lineDirective(p token.Position, before int) string {
	col := p.Column - before
	if col < 1 {
		col = 1
	}
	return "/*line " + p.Filename + ":" + strconv.Itoa(p.Line) + ":" + strconv.Itoa(col) + "*/"
}

// directiveBefore puts a line directive for a statement at p before it
// and the comments above it, at the line of the first of them: after
// them it put the comments at the statement's line and the statement, on
// the line after them, one line or more after its own (in panics, in the
// runtime's heap profile).
func (w *weaver) directiveBefore(d *dst.NodeDecs, p token.Position) {
	lines := 0
	for _, s := range d.Start {
		switch {
		case s == "\n", strings.HasPrefix(s, "//"):
			lines++
		default:
			lines += strings.Count(s, "\n")
		}
	}
	if lines > 0 {
		p.Line, p.Column = p.Line-lines, 1
	}
	d.Start.Prepend(w.lineDirective(p, 1))
}

// lineDecls puts a //line directive before each top-level declaration, so
// that lines added above (the import, a function's entry) shift nothing.
func (w *weaver) lineDecls(df *dst.File) {
	for _, decl := range df.Decls {
		a := w.astOf(decl)
		if a == nil {
			continue
		}
		var p token.Pos
		switch a := a.(type) {
		case *ast.FuncDecl:
			p = a.Type.Func
		case *ast.GenDecl:
			p = a.TokPos
		default:
			continue
		}
		pos := w.pos(p)
		decs := decl.Decorations()
		decs.Start.Append("//line " + pos.Filename + ":" + strconv.Itoa(pos.Line))
		decs.Before = dst.NewLine
	}
}

func (w *weaver) rt(name string) *dst.SelectorExpr {
	return &dst.SelectorExpr{X: dst.NewIdent(rtName), Sel: dst.NewIdent(name)}
}

// record returns &__wf<file>[i] or &__ws<file>[i].
func (w *weaver) record(kind string, i int) dst.Expr {
	return &dst.UnaryExpr{Op: token.AND, X: &dst.IndexExpr{
		X:     dst.NewIdent(fmt.Sprintf("__w%s%d", kind, w.index)),
		Index: &dst.BasicLit{Kind: token.INT, Value: strconv.Itoa(i)},
	}}
}

func (w *weaver) addImport(df *dst.File) {
	spec := &dst.ImportSpec{Name: dst.NewIdent(rtName), Path: &dst.BasicLit{Kind: token.STRING, Value: strconv.Quote(RuntimePath)}}
	decl := &dst.GenDecl{Tok: token.IMPORT, Specs: []dst.Spec{spec}}
	decl.Decs.Before = dst.EmptyLine
	at := 0
	for i, d := range df.Decls {
		if g, ok := d.(*dst.GenDecl); ok && g.Tok == token.IMPORT {
			at = i + 1
		}
	}
	df.Decls = append(df.Decls[:at], append([]dst.Decl{decl}, df.Decls[at:]...)...)
}

// addRecords appends the static function and site records at the end of
// the file, where they move no line.
func (w *weaver) addRecords(df *dst.File) {
	str := func(s string) dst.Expr { return &dst.BasicLit{Kind: token.STRING, Value: strconv.Quote(s)} }
	file := func(name string) dst.Expr {
		if w.opt.Dir != "" {
			if r, err := filepath.Rel(w.opt.Dir, name); err == nil && !strings.HasPrefix(r, "..") {
				name = r
			}
		}
		return str(name)
	}
	num := func(n int64) dst.Expr { return &dst.BasicLit{Kind: token.INT, Value: strconv.FormatInt(n, 10)} }
	kv := func(k string, v dst.Expr) dst.Expr { return &dst.KeyValueExpr{Key: dst.NewIdent(k), Value: v} }
	elt := func(fields ...dst.Expr) dst.Expr {
		c := &dst.CompositeLit{Elts: fields}
		c.Decs.Before = dst.NewLine
		c.Decs.After = dst.NewLine
		return c
	}
	table := func(kind, typ string, elts []dst.Expr) dst.Decl {
		lit := &dst.CompositeLit{Type: &dst.ArrayType{Len: num(int64(len(elts))), Elt: w.rt(typ)}, Elts: elts}
		d := &dst.GenDecl{Tok: token.VAR, Specs: []dst.Spec{&dst.ValueSpec{
			Names: []*dst.Ident{dst.NewIdent(fmt.Sprintf("__w%s%d", kind, w.index))}, Values: []dst.Expr{lit}}}}
		d.Decs.Before = dst.EmptyLine
		return d
	}
	var fs, ss []dst.Expr
	for _, f := range w.funcs {
		fields := []dst.Expr{kv("Name", str(f.name)), kv("File", file(f.pos.Filename)), kv("Line", num(int64(f.pos.Line)))}
		if f.frameless {
			fields = append(fields, kv("Frameless", dst.NewIdent("true")))
		}
		fs = append(fs, elt(fields...))
	}
	for _, s := range w.sites {
		fields := []dst.Expr{kv("Func", w.record("f", s.fn)), kv("File", file(s.pos.Filename)),
			kv("Line", num(int64(s.pos.Line))), kv("Col", num(int64(s.pos.Column))), kv("Op", str(s.op)), kv("Type", str(s.typ))}
		if s.size > 0 {
			fields = append(fields, kv("Size", num(s.size)))
		}
		if s.fixed {
			fields = append(fields, kv("Fixed", dst.NewIdent("true")))
		}
		if w.opt.Escapes == nil {
			fields = append(fields, kv("Expr", dst.NewIdent("true")))
		}
		ss = append(ss, elt(fields...))
	}
	df.Decls = append(df.Decls, table("f", "Func", fs))
	if len(ss) > 0 {
		df.Decls = append(df.Decls, table("s", "Site", ss))
	}
	if w.osExit != "" { // os.Exit calls now go through the runtime: keep the import used
		d := &dst.GenDecl{Tok: token.VAR, Specs: []dst.Spec{&dst.ValueSpec{Names: []*dst.Ident{dst.NewIdent("_")},
			Values: []dst.Expr{&dst.SelectorExpr{X: dst.NewIdent(w.osExit), Sel: dst.NewIdent("Exit")}}}}}
		d.Decs.Before = dst.EmptyLine
		df.Decls = append(df.Decls, d)
	}
}

// newFunc adds a function record and returns its index.
func (w *weaver) newFunc(name string, p token.Pos) int {
	w.funcs = append(w.funcs, funcRec{name: name, pos: w.pos(p)})
	return len(w.funcs) - 1
}

func (w *weaver) prefix() string { return w.opt.ImportPath }
