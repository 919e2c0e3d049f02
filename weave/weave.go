// Package weave inserts profiling advice into a parsed, preprocessed C translation unit.
package weave

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"modernc.org/cc/v4"

	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/pseudostack"
)

// Options control weaving.
type Options struct {
	// Prologue is the runtime interface (runtime.Header()) pasted at the
	// top of the woven text.
	Prologue string
	// Frames is the frame policy (default FramesAuto).
	Frames Frames
	// Allocators are the declared allocators (--alloc & co.), whose
	// calls are allocation sites; functions the unit declares with
	// __attribute__((malloc, alloc_size)) are added.
	Allocators []Allocator
	// Select is the --exclude/--include/--exclude-file selection.
	Select Selection
	// Extern tells, under FramesAuto and FramesUnit, which functions of external
	// linkage defined in other units may allocate (Resolve): a call of
	// one that does not is no reason for a frame. A function it does not
	// name may allocate.
	Extern map[string]bool
	// PortableGuard: frame with weave.h's C fast paths even where its
	// x86-64 asm ones would do (the compiler writes Intel syntax).
	PortableGuard bool
	// CallGuard: frame with calls of weave.h's C guard (__weave_enter_call
	// & co.), for code compiled without optimisation, where its inline C
	// would keep every local in the framed function's frame.
	CallGuard bool
	// Executable: the unit certainly goes into an executable (the command
	// links one, not a shared object, or the user compiles for one
	// explicitly): only then may its guard address the thread's fields at
	// a link-time constant, which a shared object's link rejects.
	Executable bool
	// ForCompiler: the woven text goes to the compiler only (weave cc):
	// the system headers' declarations nothing uses are blanked
	// (parse.Unit.CompilerText), which gcc compiles faster to the same
	// object.
	ForCompiler bool
	// CoverageFile, for a coverage build (--coverage): the file holding
	// weave's header as the woven text includes it, which gcov reads for
	// the lines weave's code is charged to. A function's guards go behind
	// a linemarker naming it, so that gcov counts the user's lines as in
	// the plain build (a cleanup charged to the function's first line
	// counts it again at every return), and the tables' linemarker names
	// it rather than "<weave>", a file gcov cannot open.
	CoverageFile string
	// Builtins: the unit is compiled with the compiler's builtin
	// functions (no -fno-builtin, -ffreestanding): gcc's malloc & co.
	// then warn of an unused result whatever their declaration says, and
	// so does their advice (adviceAttributes).
	Builtins bool
	// Unoptimized: the unit is compiled without optimising (-O0): calls
	// take no thunk (thunkAttrs).
	Unoptimized bool
	// AsmThunks: the woven text is compiled by gcc to an object (not LTO
	// bytecode: LTO would not see the calls in asm) with flags the
	// thunks' assembly suits (driver's asmThunkFlags): call thunks may be
	// assembly (asmthunk.go).
	AsmThunks bool
}

// Result is a woven translation unit.
type Result struct {
	Text      []byte     // the woven preprocessed text, to compile with -x cpp-output
	Functions []Function // every function defined in the user's files
	Sites     []Site     // every allocation call advised
	Skipped   []Function // functions left unwoven (Reason says why)
	// Unmatched are the pointcut patterns (as Options.Pointcut writes
	// them) that match nothing in this unit: no function or file the
	// globs match, no call or definition of a declared allocator.
	Unmatched []string
	Summary   Summary // what other units may learn from this one (not under FramesAll)
	// Extern is every answer the weave took from Options.Extern: the
	// functions of other units it asked about, whether each may
	// allocate. The same text woven with the same options and an Extern
	// giving the same answers is woven the same (driver's woven cache).
	Extern map[string]bool
}

// Function is a function definition found in the user's files.
type Function struct {
	Name   string
	File   string
	Line   int
	Reason string // why it was not woven; empty if woven
	// Frameless: woven without a frame (FramesAuto found that it cannot
	// be on an allocation chain, or that it is an allocation leaf); its
	// time goes to its caller, its calls are not counted.
	Frameless bool
	// SiteFrames: frameless, an allocation leaf (its only calls that may
	// allocate are its own advised allocations), whose allocation sites
	// make its frame in the calling-context tree when they allocate.
	SiteFrames bool
	// Excluded: woven without a frame because the selection (--exclude &
	// co.) leaves it out; its allocations go to the innermost framed caller.
	Excluded bool
	// CallFrames: no frame at its entry (--frames auto found that it may
	// be on an allocation chain only through its calls of function
	// pointers and of other such functions): its frame is pushed around
	// those calls, a pointer's only when its target may allocate. Its
	// call count is the number of those calls.
	CallFrames bool
	// Kept: CallFrames, and one run may make several of those calls:
	// the first that runs pushes its frame, which stays until it
	// returns; its call count is the number of activations that pushed.
	Kept bool
}

// Site is an advised allocation call.
type Site struct {
	Func      string // enclosing function
	Op        string // malloc, calloc, ...
	File      string
	Line, Col int
	// Type is what the size expression says the block is, in C
	// (siteType): "struct entry", "char *[4]", "unsigned char[n]"; "" if
	// it names no type.
	Type string
	// TypeSize is the block's size when Type names all of it (a constant
	// size), as cc/v4 computes it; 0 for a count known at run time.
	TypeSize int64
	// SizeExpr is a C expression for TypeSize that means the same at the
	// end of the unit, where the site table is, or "": the table then
	// holds cc/v4's size, not the compiler's (sizeExpr).
	SizeExpr string
}

// allocOps maps the advised library functions to the runtime operation
// (weave.h, enum __weave_op) and the indices of their size and count
// arguments (-1: none).
var allocOps = map[string]struct {
	op          string
	size, count int
}{
	"malloc":         {"__WEAVE_MALLOC", 0, -1},
	"calloc":         {"__WEAVE_CALLOC", 1, 0},
	"realloc":        {"__WEAVE_REALLOC", 1, -1},
	"reallocarray":   {"__WEAVE_REALLOCARRAY", 2, 1},
	"free":           {"__WEAVE_FREE", -1, -1},
	"strdup":         {"__WEAVE_STRDUP", -1, -1},
	"strndup":        {"__WEAVE_STRNDUP", -1, -1},
	"aligned_alloc":  {"__WEAVE_ALIGNED_ALLOC", 1, -1},
	"posix_memalign": {"__WEAVE_POSIX_MEMALIGN", 2, -1},
	"memalign":       {"__WEAVE_MEMALIGN", 1, -1},
	"valloc":         {"__WEAVE_VALLOC", 0, -1},
	"pvalloc":        {"__WEAVE_PVALLOC", 0, -1},
	// weave_api.h's pool API: weave_pool_alloc(pool, p, size).
	"weave_pool_alloc": {"__WEAVE_POOL_ALLOC", 2, -1},
}

// LibraryAllocator reports whether name is a C library allocator whose
// calls the weave turns into calls of the runtime's __weave_ entry of that
// name (malloc -> __weave_malloc).
func LibraryAllocator(name string) bool {
	_, ok := allocOps[name]
	return ok
}

// setjmpNames are the functions after whose return the pseudo-stack must
// re-synchronise (glibc's setjmp and sigsetjmp macros expand to _setjmp and
// __sigsetjmp), and the compilers' __builtin_setjmp. __sigsetjmp_cancel is
// glibc's (2.34 on) __sigsetjmp under another name in pthread_cleanup_push:
// a cancelled thread's unwinding jumps back there to run the handler, which
// without re-synchronising was charged under the frames the cancellation
// had left (in_handler <- handler <- deep2 <- deep1 <- work, for memcheck's
// in_handler <- handler <- work: testdata/hardening/cancel.c).
var setjmpNames = map[string]bool{
	"setjmp": true, "_setjmp": true, "sigsetjmp": true, "__sigsetjmp": true, "__sigsetjmp_cancel": true, builtinSetjmp: true,
}

// builtinSetjmp is the compilers' own setjmp (__builtin_longjmp's), which
// no header declares. Not one of setjmpNames before, its caller had no
// frame at its entry (--frames auto framed it around its calls) and no
// re-synchronisation: after a __builtin_longjmp it pushed its later calls
// under the frames the jump had dropped, and cur stayed there after it
// returned, so that every later call of the program was charged under
// them (testdata/longjmp.c's builtin_prot).
const builtinSetjmp = "__builtin_setjmp"

// swapcontext's calls keep the suspended context's pseudo-stack across the
// switch (weave.h, __weave_ctx_save).
const swapName = "swapcontext"

type weaver struct {
	u           *parse.Unit
	buf         *editBuffer
	tag         string // per-unit suffix of the generated table names
	res         *Result
	defined     map[string]bool      // functions defined in this unit
	fnRecs      []string             // initializers of the function table
	siteRecs    []string             // initializers of the site table
	names       []int                // sorted offsets of the advised names in the text (adviceNames)
	need        map[string]frameNeed // under FramesAuto, what each function needs (analyseFrames); nil: a frame each
	allocs      map[string]Allocator // declared and attribute-recognised allocators (alloc.go)
	declared    map[string]bool      // the declared allocators the unit declares
	sel         *Selection
	pointcut    string                  // Options.Pointcut(), for the runtime's M pointcut record
	frameless   int                     // functions woven without a frame
	extern      map[string]bool         // Options.Extern
	pending     map[string]bool         // externs Options.Extern does not know, declared outside system headers (classify)
	guard       string                  // suffix of the enter and leave the guards call (guardVariant)
	callFrame   string                  // the function record of the needCalls function being woven, or ""
	sticky      map[string]bool         // needCalls functions whose frame stays from its first push (analyseFrames)
	callOnce    bool                    // the function being woven is sticky: its calls push its entry's guard once
	unevaluated int                     // the body walk is in sizeof's, _Alignof's or typeof's operand
	calls       int                     // calls framed where they are made, for their variables' names
	callFramed  int                     // needCalls functions woven
	framedEnd   int                     // the end of the last call framed where it is made (frameCall)
	discarded   *cc.PostfixExpression   // the call that is the expression statement being walked, if one is
	voidCast    bool                    // and the statement casts it to void
	cold        map[*cc.Declarator]bool // functions declared noreturn or cold (coldCallee), as learnt
	defStart    int                     // the start of the file-scope definition being woven (declStart)
	thunks      int                     // call thunks made (thunks.go)
	thunkDefs   []string                // their definitions, for the end of the unit
	prologue    string                  // the text emitTables pasted first, for trimPrologue
	prologueAt  int                     // its edit
	coverage    string                  // Options.CoverageFile
	// unusedResult: the advised library functions, whether the unit
	// declares them warn_unused_result (glibc's under _FORTIFY_SOURCE)
	unusedResult map[string]bool
	builtins     bool      // Options.Builtins
	unoptimized  bool      // Options.Unoptimized
	asmThunks    bool      // Options.AsmThunks
	codeText     []byte    // code(): the text without comments, literals, directives
	refs         *funcRefs // the functions named other than as callees (addressTaken)
}

// Weave weaves u. It returns an error only for an internal failure; a
// function that cannot be woven safely is left alone and listed in Skipped.
func Weave(u *parse.Unit, opts Options) (res *Result, err error) {
	defer func() {
		if e := recover(); e != nil {
			res, err = nil, fmt.Errorf("internal error: %v", e)
		}
	}()
	h := sha256.New()
	h.Write([]byte(u.Name + "\x00"))
	h.Write(u.Text)
	sum := h.Sum(nil)
	w := &weaver{
		u:        u,
		buf:      newEditBuffer(u.Text),
		tag:      hex.EncodeToString(sum[:6]),
		res:      &Result{},
		defined:  map[string]bool{},
		names:    adviceNames(u.Text),
		sel:      &opts.Select,
		extern:   opts.Extern,
		coverage: opts.CoverageFile,

		unusedResult: map[string]bool{},
		builtins:     opts.Builtins,
		unoptimized:  opts.Unoptimized,
		asmThunks:    opts.AsmThunks,
	}
	w.buf.bodyEnds = map[int]bool{}
	w.buf.realign = func(phys int) (string, int, bool) {
		loc := u.Lines.Lookup(phys)
		return loc.File, loc.Line, loc.System
	}
	w.pointcut = opts.Pointcut()
	switch {
	case opts.CallGuard:
		w.guard = "_call"
	case !opts.PortableGuard:
		w.guard = guardVariant(u.AST, opts.Executable)
	}
	for l := u.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		if ed := l.ExternalDeclaration; ed != nil && ed.Case == cc.ExternalDeclarationFuncDef {
			w.defined[ed.FunctionDefinition.Declarator.Name()] = true
		}
	}
	if err := w.findAllocators(opts.Allocators); err != nil {
		return nil, err
	}
	w.allocatorNames()
	if opts.Frames != FramesAll {
		w.need = w.analyseFrames()
	}
	for l := u.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		if ed := l.ExternalDeclaration; ed != nil && ed.Case == cc.ExternalDeclarationFuncDef {
			fd := ed.FunctionDefinition
			w.defStart = w.declStart(fd)
			w.function(fd, fd.Declarator, fd.CompoundStatement)
		}
	}
	prologue := opts.Prologue
	if strings.Contains(prologue, "void __weave_free(") {
		prologue += w.adviceAttributes()
	}
	w.emitTables(prologue + needsRuntime(u.AST))
	w.emitThunks()
	w.emitKnown()
	if opts.ForCompiler {
		w.trimPrologue()
		w.buf.old = u.CompilerText(w.buf.inserted(), w.buf.changes)
	}
	w.res.Text = w.buf.Bytes()
	w.res.Unmatched = opts.unmatched(w.res, w.declared)
	return w.res, nil
}

func (w *weaver) fnTable() string   { return "__weave_fns_" + w.tag }
func (w *weaver) siteTable() string { return "__weave_sites_" + w.tag }

// function weaves one function definition (and, through the body walk,
// any GNU nested functions in it).
func (w *weaver) function(def cc.Node, d *cc.Declarator, body *cc.CompoundStatement) {
	loc, _ := w.u.Location(d)
	if loc.System || loc.File == "" || strings.HasPrefix(loc.File, "<") && loc.File != "<stdin>" { // <built-in>, <command-line>
		return
	}
	fn := Function{Name: parse.DisplayName(d.Name()), File: loc.File, Line: loc.Line}
	w.buf.bodyEnds[w.u.Offset(body.Token2)] = true
	fn.Reason = w.skipReason(def, d, body)
	excluded := fn.Reason == "" && w.sel.excluded(fn.Name, fn.File)
	woven := fn.Reason == "" && !excluded
	need := w.need[d.Name()] // needNone when w.need is nil: then every function is framed
	// --frame keeps a frame at its entry: its calls counted, a tracepoint.
	// The others' frames do not change: it allocates no more than before.
	forced := matchAny(w.sel.Frame, fn.Name)
	framed := woven && (w.need == nil || need == needFrame || forced)
	callFrames := woven && w.need != nil && need == needCalls && !forced
	fn.Frameless = woven && !framed && !callFrames
	fn.Excluded = excluded
	fn.CallFrames = callFrames
	fn.Kept = callFrames && w.sticky[d.Name()]
	fn.SiteFrames = fn.Frameless && need == needSite
	siteFlags := ""
	if fn.SiteFrames {
		siteFlags = "__WEAVE_SITE_FRAME"
	}
	flags := "0"
	if callFrames {
		flags = "__WEAVE_FN_CALLS"
		w.callFramed++
	}
	if fn.Frameless {
		flags = "__WEAVE_FN_FRAMELESS"
		w.frameless++
	}
	k := len(w.fnRecs)
	w.fnRecs = append(w.fnRecs, fmt.Sprintf("{%s, %s, %d, %s}", cString(fn.Name), cString(fn.File), fn.Line, flags))
	fnRef := fmt.Sprintf("&%s[%d]", w.fnTable(), k)
	w.res.Functions = append(w.res.Functions, fn)
	if fn.Reason == "" && w.guard != "_call" && w.msABI(def, body) {
		outer := w.guard
		w.guard = "_call"
		defer func() { w.guard = outer }()
	}
	guards := ""
	if fn.Reason == "" && d.Name() == "main" && d.Linkage() == cc.External {
		// Before the frame's guard: its cleanup runs after the frame's leave.
		guards = " int __weave_m __attribute__((cleanup(__weave_main_return), unused)) = __weave_main_enter();"
	}
	if fn.Reason != "" {
		w.res.Skipped = append(w.res.Skipped, fn)
	} else if framed && w.namesSetjmp(body) {
		// Its frame gets a slot, for __weave_setjmp_return (weave.h).
		guards += fmt.Sprintf(" struct __weave_frame __weave_f __attribute__((cleanup(__weave_leave%s), unused)) = __weave_enter_slot(%s);", w.guard, fnRef)
	} else if framed {
		guards += fmt.Sprintf(" struct __weave_frame __weave_f __attribute__((cleanup(__weave_leave%s), unused)) = __weave_enter%[1]s(%s);", w.guard, fnRef)
	} else if fn.Kept {
		// Pushed by the first of its calls that runs (frameCall).
		guards += fmt.Sprintf(" struct __weave_frame __weave_f __attribute__((cleanup(__weave_leave%s), unused)) = __weave_no_frame();", w.guard)
	}
	if guards != "" {
		w.insertGuards(w.guardOffset(body), guards)
	}
	outerCall, outerOnce := w.callFrame, w.callOnce
	w.callFrame, w.callOnce = "", false
	if callFrames {
		w.callFrame, w.callOnce = fnRef, fn.Kept
	}
	defer func() { w.callFrame, w.callOnce = outerCall, outerOnce }()
	if callFrames || w.mayAdvise(body) {
		siteFn := fnRef
		if excluded {
			siteFn = "0" // its sites are charged to the framed caller
		}
		w.body(body, fn.Name, siteFn, siteFlags, framed)
	}
	if a, ok := w.allocs[d.Name()]; ok && fn.Reason == "" {
		if fd, ok := def.(*cc.FunctionDefinition); ok {
			w.wrapDefinition(fd, d, body, a)
		}
	}
}

// guardOffset is where the guard goes: after the body's '{' and any
// __label__ declarations, which must come first in a block.
func (w *weaver) guardOffset(body *cc.CompoundStatement) int {
	lbrace := w.u.Offset(body.Token)
	off := lbrace + 1
	for l := body.BlockItemList; l != nil; l = l.BlockItemList {
		bi := l.BlockItem
		if bi == nil {
			break
		}
		if w.u.Offset(bi) <= lbrace { // cc/v4's synthetic __func__ declaration
			continue
		}
		if bi.Case != cc.BlockItemLabel {
			break
		}
		off = w.u.Offset(bi.LabelDeclaration.Token2) + 1
	}
	return off
}

// insertGuards inserts a function's guards at off, after its body's {. In
// a coverage build they go on lines of their own, charged to weave's
// file: the rest of the line after them is charged to its line again.
func (w *weaver) insertGuards(off int, guards string) {
	if w.coverage == "" {
		w.buf.Insert(off, guards)
		return
	}
	phys, _ := w.u.Lines.LineCol(off)
	file, line, _ := w.buf.realign(phys)
	w.buf.Insert(off, fmt.Sprintf("\n# 0 %s 3\n%s\n# %d %s\n", cString(w.coverage), guards, line, cString(file)))
}

// weaveFile is the file name weave's own code after the unit's text is
// charged to: the coverage build's header, or "<weave>".
func (w *weaver) weaveFile() string {
	if w.coverage != "" {
		return w.coverage
	}
	return "<weave>"
}

// skipReason says why a function must be left unwoven, or "". It looks at
// the text: the declaration up to the body for attributes, the body for
// musttail (a guard would run after the tail call, which is then no longer
// a tail call).
func (w *weaver) skipReason(def cc.Node, d *cc.Declarator, body *cc.CompoundStatement) string {
	lb := w.u.Offset(body.Token)
	rb := w.u.Offset(body.Token2)
	decl := w.code()[w.declStart(def):lb]
	switch {
	case d.IsInline() && !d.IsStatic():
		// A C99 inline definition (or gnu89 extern inline) may have no
		// out-of-line copy: every call must be inlined, and the guard can
		// tip the compiler's inlining decision the other way.
		return "inline function with external linkage"
	case bytes.Contains(decl, []byte("naked")):
		return "naked function"
	case bytes.Contains(decl, []byte("no_instrument_function")):
		return "no_instrument_function attribute"
	case bytes.Contains(w.code()[lb:rb], []byte("musttail")):
		return "uses musttail"
	}
	return ""
}

// declStart returns the offset of the first token of a function
// definition. cc/v4 gives a definition that opens with __attribute__ the
// position of its declarator (a DeclarationSpecifiersAttr has no position
// of its own), so the attribute lists of the specifiers count too, and
// C23 attributes before it (which cc/v4 is not shown: parse.c23Syntax).
func (w *weaver) declStart(def cc.Node) int {
	start := w.u.Offset(def)
	var ds *cc.DeclarationSpecifiers
	switch x := def.(type) {
	case *cc.FunctionDefinition:
		ds = x.DeclarationSpecifiers
	case *cc.BlockItem:
		ds = x.DeclarationSpecifiers
	}
	for ; ds != nil; ds = ds.DeclarationSpecifiers {
		for _, n := range []cc.Node{ds, ds.AttributeSpecifierList} {
			if p := n.Position(); p.IsValid() {
				start = min(start, w.u.Offset(n))
			}
		}
	}
	return w.u.AttributesBefore(start)
}

// body advises the allocation and setjmp calls of a function body.
func (w *weaver) body(body *cc.CompoundStatement, fnName, fnRef, siteFlags string, woven bool) {
	var visit func(n cc.Node) bool
	// unevaluated visits an operand that never runs (sizeof's, _Alignof's,
	// typeof's).
	unevaluated := func(n cc.Node) bool {
		w.unevaluated++
		walk(n, visit)
		w.unevaluated--
		return false
	}
	visit = func(n cc.Node) bool {
		switch x := n.(type) {
		case *cc.BlockItem:
			if x.Case == cc.BlockItemFuncDef { // GNU nested function
				w.function(x, x.Declarator, x.CompoundStatement)
				return false
			}
		case *cc.UnaryExpression:
			if x.Case == cc.UnaryExpressionSizeofExpr || x.Case == cc.UnaryExpressionAlignofExpr {
				return unevaluated(x.UnaryExpression)
			}
		case *cc.TypeSpecifier:
			if x.Case == cc.TypeSpecifierTypeofExpr {
				return unevaluated(x.ExpressionList)
			}
		case *cc.ExpressionStatement:
			e, cast := x.ExpressionList, false
			if c, ok := e.(*cc.CastExpression); ok && c.Case == cc.CastExpressionCast && c.TypeName.Type() != nil && c.TypeName.Type().Kind() == cc.Void {
				e, cast = c.CastExpression, true
			}
			if c, ok := e.(*cc.PostfixExpression); ok && c.Case == cc.PostfixExpressionCall {
				w.discarded, w.voidCast = c, cast
			}
		case *cc.PostfixExpression:
			if x.Case == cc.PostfixExpressionCall {
				w.call(x, fnName, fnRef, siteFlags, woven)
			}
		}
		return true
	}
	walk(body, visit)
}

// mayAdvise reports whether the body walk might find anything to advise
// in a function body: a call of a function named in allocOps or
// setjmpNames, which then appears in the body's text, or a nested function,
// which is declared in one of the body's scopes. Most bodies have neither,
// and their walk is skipped.
func (w *weaver) mayAdvise(body *cc.CompoundStatement) bool {
	lb := w.u.Offset(body.Token)
	rb := w.u.Offset(body.Token2)
	if i := sort.SearchInts(w.names, lb); i < len(w.names) && w.names[i] < rb {
		return true
	}
	return declaresFunction(body.LexicalScope())
}

// declaresFunction reports whether a scope or one below it declares
// something that may be a function (a nested function definition or a
// block-scope function declaration).
func declaresFunction(s *cc.Scope) bool {
	for _, nodes := range s.Nodes {
		for _, n := range nodes {
			if d, ok := n.(*cc.Declarator); ok && (d.Type() == nil || d.Type().Kind() == cc.Function) {
				return true
			}
		}
	}
	for _, c := range s.Children {
		if declaresFunction(c) {
			return true
		}
	}
	return false
}

// call advises one call expression if it calls an allocation function or
// setjmp from the C library.
func (w *weaver) call(x *cc.PostfixExpression, fnName, fnRef, siteFlags string, woven bool) {
	if w.callFrame != "" {
		w.frameCall(x)
	}
	pe, ok := x.PostfixExpression.(*cc.PrimaryExpression)
	if !ok || pe.Case != cc.PrimaryExpressionIdent || w.unevaluated > 0 {
		// In sizeof's, _Alignof's or typeof's operand the call never
		// runs: no advice (a declared allocator's statement expression
		// there made clang warn -Wunevaluated-expression).
		return
	}
	name := pe.Token.SrcStr()
	if da, ok := w.allocs[name]; ok && allocOps[name].op == "" {
		if d, ok := pe.ResolvedTo().(*cc.Declarator); ok && d != nil && d.Type() != nil && d.Type().Kind() == cc.Function {
			w.declaredCall(x, pe, da, fnRef, fnName)
		}
		return
	}
	if name == swapName && w.isLibraryFunction(pe, name) {
		w.buf.Insert(w.u.Offset(pe.Token), "__extension__ ({ struct __weave_ctx __wc; __weave_ctx_save(&__wc); __weave_ctx_restore(&__wc, ")
		w.buf.InsertClose(w.u.Offset(x.Token2)+1, "); })")
		return
	}
	a, isAlloc := allocOps[name]
	if !isAlloc && !setjmpNames[name] || name != builtinSetjmp && !w.isLibraryFunction(pe, name) {
		return
	}
	if !isAlloc {
		if woven {
			w.buf.Insert(w.u.Offset(pe.Token), "__weave_setjmp_return(&__weave_f, ")
			w.buf.Insert(w.u.Offset(x.Token2)+1, ")")
		}
		return
	}
	args := argList(x.ArgumentExpressionList)
	if (name == "free" || name == "realloc" || name == "reallocarray") && len(args) > 0 && notHeap(args[0]) {
		return // the compiler's -Wfree-nonheap-object, which clang gives only for free itself
	}
	loc, col := w.u.Location(pe.Token)
	site := Site{Func: fnName, Op: name, File: loc.File, Line: loc.Line, Col: col}
	if a.size >= 0 && a.size < len(args) {
		site.typeFrom(args[a.size], argAt(args, a.count))
	}
	op := a.op
	if siteFlags != "" {
		op += ", " + siteFlags
	}
	ref := w.addSite(site, fnRef, op)
	if _, ok := w.unusedResult[name]; !ok {
		w.unusedResult[name] = w.declaredAttr(pe, "warn_unused_result")
	}
	off := w.u.Offset(pe.Token)
	w.buf.Replace(off, off+len(pe.Token.Src()), "__weave_"+name)
	sep := ", "
	if len(args) == 0 {
		sep = ""
	}
	w.buf.Insert(w.u.Offset(x.Token)+1, ref+sep)
}

// isLibraryFunction reports whether the identifier resolves to an external
// function that this unit does not define: the C library's, not a local
// variable or the program's own allocator of the same name.
func (w *weaver) isLibraryFunction(pe *cc.PrimaryExpression, name string) bool {
	if w.defined[name] {
		return false
	}
	d, ok := pe.ResolvedTo().(*cc.Declarator)
	if !ok || d == nil {
		return false
	}
	if d.Type() == nil || d.Type().Kind() != cc.Function {
		return false
	}
	// Declared in the text: a call of a function the unit never declares
	// (strdup under -std=c11) is left as it is, so that the compiler
	// diagnoses its implicit declaration (an error for gcc 14 and clang
	// 16) and its int result as in the plain build.
	if off := w.u.Offset(d.NameTok()); d.IsSynthetic() || off < 0 || off+len(name) > len(w.u.Text) || string(w.u.Text[off:off+len(name)]) != name {
		return false
	}
	return d.Linkage() == cc.External
}

func argList(l *cc.ArgumentExpressionList) (r []cc.ExpressionNode) {
	for ; l != nil; l = l.ArgumentExpressionList {
		r = append(r, l.AssignmentExpression)
	}
	return r
}

// argAt returns args[i], or nil if there is none.
func argAt(args []cc.ExpressionNode, i int) cc.Node {
	if i < 0 || i >= len(args) {
		return nil
	}
	return args[i]
}

// sizeExpr returns sizeof(t) as a C expression that names the same type
// at the end of the unit (a typedef or a tagged type declared at file
// scope, or an array of one), or "". The site table then holds the
// compiler's size: cc/v4 gets the layout of packed structures
// (__attribute__((packed)), #pragma pack, -fpack-struct) wrong, and the
// size of enums under -fshort-enums, which it does not model. Other types
// (scalars, pointers, local or unnamed types) keep cc/v4's size, which
// for an unnamed enum under -fshort-enums is wrong.
//
// Names with a '$' are left alone: it may stand for the backslash of a
// universal character name (parse.ucnIdentifiers), which the compiler
// reads as such.
func sizeExpr(t cc.Type) string {
	if td := t.Typedef(); td != nil && td.LexicalScope() != nil && td.LexicalScope().Parent == nil {
		if strings.Contains(td.Name(), "$") {
			return ""
		}
		return "sizeof(" + td.Name() + ")"
	}
	var kind string
	var tag cc.Token
	var scope *cc.Scope
	switch x := t.(type) {
	case *cc.StructType:
		kind, tag, scope = "struct", x.Tag(), x.LexicalScope()
	case *cc.UnionType:
		kind, tag, scope = "union", x.Tag(), x.LexicalScope()
	case *cc.EnumType:
		kind, tag, scope = "enum", x.Tag(), x.LexicalScope()
	case *cc.ArrayType:
		if x.IsVLA() || x.IsIncomplete() || x.Len() <= 0 {
			return ""
		}
		if e := sizeExpr(x.Elem()); e != "" {
			return fmt.Sprintf("%d * %s", x.Len(), e)
		}
		return ""
	default:
		return ""
	}
	if tag.SrcStr() == "" || strings.Contains(tag.SrcStr(), "$") || scope == nil || scope.Parent != nil {
		return ""
	}
	return "sizeof(" + kind + " " + tag.SrcStr() + ")"
}

// emitTables adds the prologue before the first line and the function and
// site tables after the last.
func (w *weaver) emitTables(prologue string) {
	var pre strings.Builder
	pre.WriteString(prologue)
	if !strings.HasSuffix(prologue, "\n") {
		pre.WriteString("\n")
	}
	attrs := `__attribute__((__weak__, __visibility__("hidden")))`
	if n := len(w.fnRecs); n > 0 {
		fmt.Fprintf(&pre, "extern const struct __weave_fn %s[%d] %s;\n", w.fnTable(), n, attrs)
	}
	if n := len(w.siteRecs); n > 0 {
		fmt.Fprintf(&pre, "extern const struct __weave_site %s[%d] %s;\n", w.siteTable(), n, attrs)
	}
	if len(w.u.Text) == 0 || w.u.Text[0] != '#' {
		loc := w.u.Lines.Lookup(1)
		file := loc.File
		if file == "" {
			file = w.u.Name
		}
		fmt.Fprintf(&pre, "# 1 %s\n", cString(file))
	}
	w.prologue, w.prologueAt = prologue, len(w.buf.edits)
	w.buf.Insert(0, pre.String())

	var post strings.Builder
	// A system header (3): the tables and the unit's record draw no
	// warning the user's flags ask for (clang -std=c89 -pedantic's
	// -Woverlength-strings on the record's asm).
	fmt.Fprintf(&post, "\n# 1 %s 3\n", cString(w.weaveFile()))
	if n := len(w.fnRecs); n > 0 {
		// used: the unit's record may name it from a top-level asm only
		// (unitRecord), which the compiler does not read.
		fmt.Fprintf(&post, "const struct __weave_fn %s[%d] %s __attribute__((__used__)) = {\n\t%s\n};\n", w.fnTable(), n, attrs, strings.Join(w.fnRecs, ",\n\t"))
	}
	if n := len(w.siteRecs); n > 0 {
		fmt.Fprintf(&post, "const struct __weave_site %s[%d] %s = {\n\t%s\n};\n", w.siteTable(), n, attrs, strings.Join(w.siteRecs, ",\n\t"))
	}
	if len(w.fnRecs) > 0 || w.pointcut != "" {
		// The runtime counts the frameless functions for the profile,
		// records the pointcut, and tells a trace pattern that matches
		// only functions without a frame (tracepoints/unframed.c).
		post.WriteString(w.unitRecord())
	}
	w.buf.Insert(len(w.u.Text), post.String())
	sort.SliceStable(w.res.Skipped, func(i, j int) bool { return w.res.Skipped[i].Line < w.res.Skipped[j].Line })
}

// unitRecord returns the unit's record (struct __weave_unit) and its
// registration with the runtime: a constructor registers it, a destructor
// unregisters it. Where the guards are x86-64 asm (w.guard: AT&T
// syntax, LP64) all three are one top-level asm: the record's data, and
// two functions of two instructions each, whose
// addresses go into .init_array and .fini_array as the compiler puts a
// constructor's and a destructor's. gcc compiles the two C functions
// through every pass as any other function: 6M instructions of cc1, a
// fifth of what weaving adds to a small program's compile; the asm costs
// it nothing. The asm names no static of the C code (LTO may rename
// those), only the function table (a global) and the runtime's functions.
func (w *weaver) unitRecord() string {
	unit := "__weave_unit_" + w.tag
	fns, n := "0", len(w.fnRecs)
	if n > 0 {
		fns = w.fnTable()
	}
	if w.guard == "" { // not x86-64 LP64, an old compiler, -masm=intel, -O0 (guardVariant)
		pc := "0"
		if w.pointcut != "" {
			pc = cString(w.pointcut)
		}
		return fmt.Sprintf("static struct __weave_unit %s = {%s, %d, 0, %s};\n", unit, fns, n, pc) +
			fmt.Sprintf("__attribute__((__constructor__)) static void __weave_register_%s(void) { __weave_register_unit(&%s); }\n", w.tag, unit) +
			fmt.Sprintf("__attribute__((__destructor__)) static void __weave_unregister_%s(void) { __weave_unregister_unit(&%s); }\n", w.tag, unit)
	}
	pc := "0"
	var lines []string
	asm := func(f string, args ...any) { lines = append(lines, fmt.Sprintf(f, args...)) }
	asm(".pushsection .data")
	asm(".p2align 3")
	asm("%s:", unit) // {fns, n, next, pointcut}: weave.h's struct __weave_unit
	asm(".quad %s", fns)
	asm(".long %d, 0", n)
	asm(".quad 0")
	if w.pointcut != "" {
		pc = unit + "_pc"
	}
	asm(".quad %s", pc)
	if w.pointcut != "" {
		asm(".section .rodata")
		asm("%s:", pc)
		b := make([]string, 0, len(w.pointcut)+1)
		for i := 0; i < len(w.pointcut); i++ {
			b = append(b, strconv.Itoa(int(w.pointcut[i])))
		}
		asm(".byte %s,0", strings.Join(b, ","))
	}
	for _, f := range []struct{ name, section, array, callee string }{
		{"__weave_register_" + w.tag, ".text.startup", ".init_array", "__weave_register_unit"},
		{"__weave_unregister_" + w.tag, ".text.exit", ".fini_array", "__weave_unregister_unit"},
	} {
		asm(`.section %s,"ax",@progbits`, f.section)
		asm(".p2align 4")
		asm(".type %s, @function", f.name)
		asm("%s:", f.name)
		asm(".cfi_startproc")
		asm("endbr64") // an indirect call's target under -fcf-protection (a no-op elsewhere)
		asm("leaq %s(%%rip), %%rdi", unit)
		asm("jmp %s@PLT", f.callee)
		asm(".cfi_endproc")
		asm(".size %s, .-%[1]s", f.name)
		asm(`.section %s,"aw"`, f.array)
		asm(".p2align 3")
		asm(".quad %s", f.name)
	}
	asm(".popsection")
	esc := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	var b strings.Builder
	b.WriteString("__asm__(")
	for i, l := range lines {
		if i > 0 {
			b.WriteString("\n\t")
		}
		b.WriteString(`"` + esc.Replace(l) + `\n\t"`)
	}
	b.WriteString(");\n")
	return b.String()
}

// cString returns s as a C string literal.
// CString returns s as a C string literal (a linemarker's file name).
func CString(s string) string { return cString(s) }

func cString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c >= 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// needsRuntimeSym is defined by the runtime (init.c) and never called.
const needsRuntimeSym = "__weave_runtime_not_linked__link_with_weave_cc_or_weave_cxx"

// needsRuntime returns, for an x86-64 unit, a top-level asm that puts
// calls of needsRuntimeSym and of the ABI's mark (pseudostack.ABIMark) at
// the start of the object's .text, never run (no function starts there):
// an object linked without the runtime (a C++ program linked by $(CXX),
// not weave) then fails with the first name in the linker's first error,
// ahead of the __weave_malloc & co. its functions need, saying how to fix
// the link; one linked with the runtime of another weave whose ABI
// differs fails with the second. A call (PLT32) is no text relocation in
// a PIE and allowed in a shared object.
func needsRuntime(ast *cc.AST) string {
	if ast.Macros["__x86_64__"] == nil {
		return ""
	}
	return "\n__asm__(\".pushsection .text\\n\\tcall " + needsRuntimeSym + "@PLT\\n\\tcall " +
		pseudostack.ABIMark() + "@PLT\\n\\t.popsection\");\n"
}

// guardVariant returns the suffix of weave.h's enter and leave for the
// unit's target: "_x64" (one asm statement each, which the compiler
// compiles in next to no time, and whose `asm inline` the inliner counts
// as one instruction: the guard then does not change which of the
// program's functions are inlined) for x86-64 LP64 without AVX (the asm's
// calls of the runtime keep xmm0-15 only) under gcc 11 or later or clang
// 14 or later (__builtin_thread_pointer); "_fsx64", the same reading the
// thread pointer from %fs:0, under gcc 9 and 10 and clang 11 to 13 (asm
// inline); "_lex64", the same addressing the thread's fields at a
// link-time constant (local-exec TLS: no register holds the offset), for
// any of those compilers when the unit certainly goes into an executable
// (exe: Options.Executable; and __PIE__, or no __PIC__), since a shared
// object's link rejects the relocation; "_iex64", the _x64 asm loading
// the initial-exec offset itself, where the compiler would load it (__PIE__,
// or no __PIC__) but the unit may go into a shared object: without the
// builtin's call, which gcc's inliner counts; else "" (the C fast paths).
func guardVariant(ast *cc.AST, exe bool) string {
	m := ast.Macros
	if m["__x86_64__"] == nil || m["__LP64__"] == nil || m["__AVX__"] != nil {
		return ""
	}
	v, builtin, oldest := macroInt(ast, "__GNUC__"), 11, 9
	if m["__clang__"] != nil {
		v, builtin, oldest = macroInt(ast, "__clang_major__"), 14, 11
	}
	pie := m["__PIE__"] != nil || m["__PIC__"] == nil
	switch {
	case v >= oldest && exe && pie:
		return "_lex64"
	case v >= oldest && pie:
		return "_iex64"
	case v >= builtin:
		return "_x64"
	case v >= oldest:
		return "_fsx64"
	}
	return ""
}

// trimPrologue blanks, in the text for the compiler, the fast paths of
// weave.h that no woven code of the unit calls (pseudostack.Trim: the
// other guard variants), unless the unit names weave's functions itself.
func (w *weaver) trimPrologue() {
	if w.prologue == "" || bytes.Contains(w.u.Text, []byte("__weave_")) {
		return
	}
	used := map[string]bool{}
	for i, e := range w.buf.edits {
		for s := e.text; i != w.prologueAt; {
			k := strings.Index(s, "__weave_")
			if k < 0 {
				break
			}
			n := k + len("__weave_")
			for n < len(s) && (s[n] == '_' || 'a' <= s[n] && s[n] <= 'z' || 'A' <= s[n] && s[n] <= 'Z' || '0' <= s[n] && s[n] <= '9') {
				n++
			}
			used[s[k:n]], s = true, s[n:]
		}
	}
	e := &w.buf.edits[w.prologueAt]
	rest, ok := strings.CutPrefix(e.text, w.prologue)
	if !ok {
		return
	}
	e.text = pseudostack.Trim(w.prologue, func(name string) bool { return used[name] }) + rest
}
