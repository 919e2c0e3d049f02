package weave

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// AllocKind is the calling convention of a declared allocator.
type AllocKind int

// The kinds, as weave's flags name them (--alloc, --calloc, ...).
const (
	AllocMalloc  AllocKind = iota // returns a block of the size argument
	AllocCalloc                   // returns a block of count × size
	AllocRealloc                  // resizes ptr to size; size 0 frees (Lua's l_alloc)
	AllocFree                     // frees ptr
)

var allocKinds = []struct {
	flag, op string
	keys     []string // the argument keys it needs
}{
	AllocMalloc:  {"alloc", "__WEAVE_MALLOC", []string{"size"}},
	AllocCalloc:  {"calloc", "__WEAVE_CALLOC", []string{"count", "size"}},
	AllocRealloc: {"realloc", "__WEAVE_REALLOC", []string{"ptr", "size"}},
	AllocFree:    {"free", "__WEAVE_FREE", []string{"ptr"}},
}

// AllocKindOf returns the kind a flag name (alloc, calloc, realloc, free)
// stands for.
func AllocKindOf(flag string) (AllocKind, bool) {
	for k, d := range allocKinds {
		if d.flag == flag {
			return AllocKind(k), true
		}
	}
	return 0, false
}

// Allocator is a function whose calls are allocation sites at their
// callers: declared by the user (--realloc l_alloc:ptr=2,size=4) or
// recognised by its __attribute__((malloc, alloc_size(N[,M]))).
type Allocator struct {
	Name             string
	Kind             AllocKind
	Ptr, Size, Count int  // 1-based argument indices; 0: none
	Auto             bool // recognised by its attributes
}

// String is the allocator as its flag would declare it.
func (a Allocator) String() string {
	var args []string
	for _, k := range allocKinds[a.Kind].keys {
		args = append(args, fmt.Sprintf("%s=%d", k, *a.arg(k)))
	}
	return fmt.Sprintf("--%s %s:%s", allocKinds[a.Kind].flag, a.Name, strings.Join(args, ","))
}

func (a *Allocator) arg(key string) *int {
	switch key {
	case "ptr":
		return &a.Ptr
	case "size":
		return &a.Size
	}
	return &a.Count
}

// ParseAllocator parses the value of --alloc, --calloc, --realloc or
// --free (kind): NAME:key=N,key=N, where the keys are the kind's (size;
// count and size; ptr and size; ptr) and N counts arguments from 1.
func ParseAllocator(kind AllocKind, spec string) (Allocator, error) {
	d := allocKinds[kind]
	usage := fmt.Errorf("--%s %s: want NAME:%s=N", d.flag, spec, strings.Join(d.keys, "=N,"))
	name, list, ok := strings.Cut(spec, ":")
	a := Allocator{Name: name, Kind: kind}
	if !ok || !isIdent(name) {
		return a, usage
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		n, err := strconv.Atoi(v)
		if !ok || !slices.Contains(d.keys, k) || seen[k] {
			return a, fmt.Errorf("--%s %s: unknown or repeated argument key %q (want %s)", d.flag, spec, k, strings.Join(d.keys, ", "))
		}
		if err != nil || n < 1 || n > 127 {
			return a, fmt.Errorf("--%s %s: %s=%s: an argument number counts from 1", d.flag, spec, k, v)
		}
		seen[k] = true
		*a.arg(k) = n
	}
	if len(seen) != len(d.keys) {
		return a, usage
	}
	return a, nil
}

func isIdent(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) {
			return false
		}
	}
	return true
}

// ConfigError is a pointcut that does not fit the program (an argument
// index beyond a declared allocator's parameters): the build must stop.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// findAllocators sets w.allocs: the declared allocators, each checked
// against the unit's prototype of it, and the functions the unit declares
// with __attribute__((malloc, alloc_size)).
func (w *weaver) findAllocators(declared []Allocator) error {
	w.allocs, w.declared = map[string]Allocator{}, map[string]bool{}
	for _, a := range declared {
		w.allocs[a.Name] = a
	}
	var deallocs []Allocator
	names := make([]string, 0, len(w.u.AST.Scope.Nodes))
	for name := range w.u.AST.Scope.Nodes {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, n := range w.u.AST.Scope.Nodes[name] {
			d, ok := n.(*cc.Declarator)
			if !ok || d.Type() == nil || d.Type().Kind() != cc.Function {
				continue
			}
			ft, _ := d.Type().(*cc.FunctionType)
			if a, ok := w.allocs[name]; ok && !a.Auto {
				w.declared[name] = true
				if err := w.checkPrototype(d, ft, a); err != nil {
					return err
				}
			} else if allocOps[name].op == "" && !setjmpNames[name] {
				if a, ok := w.attrAllocator(d, ft); ok {
					w.allocs[name] = a
					if f, ok := w.attrDeallocator(d); ok {
						deallocs = append(deallocs, f)
					}
				}
			}
		}
	}
	for _, f := range deallocs {
		if _, ok := w.allocs[f.Name]; !ok {
			w.allocs[f.Name] = f
		}
	}
	return nil
}

// attrDeallocator is the deallocator an allocator's malloc attribute
// names (gcc 11's malloc(freea, 1)): a function of the unit's other than
// free itself, recognised as --free freea:ptr=1. Without it, a block the
// allocator made of an interior pointer (gnulib's malloca) and freed
// through it would never be seen freed.
func (w *weaver) attrDeallocator(d *cc.Declarator) (Allocator, bool) {
	text := w.declText(d)
	if !bytes.Contains(text, []byte("malloc")) {
		return Allocator{}, false
	}
	for _, m := range deallocAttr().FindAllSubmatch(text, -1) {
		f := Allocator{Name: string(m[1]), Kind: AllocFree, Ptr: 1, Auto: true}
		if len(m[2]) > 0 {
			f.Ptr, _ = strconv.Atoi(string(m[2]))
		}
		if allocOps[f.Name].op != "" || f.Ptr < 1 {
			continue // free, realloc: the runtime's already
		}
		for _, n := range w.u.AST.Scope.Nodes[f.Name] {
			if fd, ok := n.(*cc.Declarator); ok && fd.Type() != nil && fd.Type().Kind() == cc.Function {
				ft, _ := fd.Type().(*cc.FunctionType)
				if w.checkPrototype(fd, ft, f) == nil {
					return f, true
				}
			}
		}
	}
	return Allocator{}, false
}

// declText is d's declaration around it: its leading text and what
// follows it up to the declaration's end or its body.
func (w *weaver) declText(d *cc.Declarator) []byte {
	lead, text := w.leadingText(d), w.code()
	end := w.u.Offset(d)
	if end < 0 || end > len(text) {
		return lead
	}
	stop := end
	for stop < len(text) && text[stop] != ';' && text[stop] != '{' && stop-end < 4096 {
		stop++
	}
	return append(slices.Clip(lead), text[end:stop]...)
}

// checkPrototype checks a declared allocator's argument indices against a
// prototype of it: within its parameters, ptr a pointer, size and count
// integers, a pointer result unless it frees.
func (w *weaver) checkPrototype(d *cc.Declarator, ft *cc.FunctionType, a Allocator) error {
	if ft == nil || d.DirectDeclarator == nil || d.DirectDeclarator.Case == cc.DirectDeclaratorFuncIdent {
		return nil // no prototype: f() or K&R
	}
	var pos cc.Node = d
	if tok := declaratorName(d); tok != nil {
		pos = tok
	}
	loc, col := w.u.Location(pos)
	fail := func(format string, args ...any) error {
		return &ConfigError{fmt.Sprintf("%s:%d:%d: %s: %s", loc.File, loc.Line, col, a, fmt.Sprintf(format, args...))}
	}
	params := ft.Parameters()
	if len(params) == 1 && params[0].Type() != nil && params[0].Type().Kind() == cc.Void {
		params = nil
	}
	for _, k := range allocKinds[a.Kind].keys {
		i := *a.arg(k)
		if i > len(params) {
			if ft.IsVariadic() {
				return fail("%s=%d is a variadic argument of %s (it has %d parameters)", k, i, a.Name, len(params))
			}
			return fail("%s=%d, but %s has %d parameters", k, i, a.Name, len(params))
		}
		t := params[i-1].Type()
		if t == nil {
			continue
		}
		if k == "ptr" && t.Kind() != cc.Ptr {
			return fail("%s=%d: parameter %d of %s is not a pointer (%s)", k, i, i, a.Name, t)
		}
		if k != "ptr" && !cc.IsIntegerType(t) {
			return fail("%s=%d: parameter %d of %s is not an integer (%s)", k, i, i, a.Name, t)
		}
	}
	if r := ft.Result(); a.Kind != AllocFree && r != nil && r.Kind() != cc.Ptr {
		return fail("%s returns %s, not a pointer", a.Name, r)
	}
	return nil
}

// The attribute regexps, compiled when first needed (most units never
// need them: a process start compiled them all).
var (
	mallocAttr    = lazyRegexp(`\b(__)?malloc(__)?\b`)
	allocSizeAttr = lazyRegexp(`\b(?:__)?alloc_size(?:__)?\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)`)
	deallocAttr   = lazyRegexp(`\b(?:__)?malloc(?:__)?\s*\(\s*([A-Za-z_]\w*)\s*(?:,\s*(\d+)\s*)?\)`)
)

// lazyRegexp returns a function compiling the regexp expr on its first
// call.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// attrAllocator recognises a function declared with gcc's malloc and
// alloc_size attributes: alloc_size(N) makes it --alloc with size=N,
// alloc_size(N,M) --calloc with count=N,size=M. cc/v4 keeps the attributes
// that follow the declarator; those before it are read from the text.
func (w *weaver) attrAllocator(d *cc.Declarator, ft *cc.FunctionType) (Allocator, bool) {
	a := Allocator{Name: d.Name(), Auto: true}
	attrs := d.Type().Attributes()
	malloc := attrs != nil && (attrs.IsAttrSet("malloc") || attrs.IsAttrSet("__malloc__"))
	var size []string
	for _, k := range []string{"alloc_size", "__alloc_size__"} {
		for _, v := range attrs.AttrValue(k) {
			size = append(size, fmt.Sprint(v))
		}
	}
	if !malloc || len(size) == 0 {
		// bytes.Contains first: the regexps are slow, and most leads
		// (up to 4 KB of a header) have neither word.
		lead := w.leadingText(d)
		malloc = malloc || bytes.Contains(lead, []byte("malloc")) && mallocAttr().Match(lead)
		if len(size) == 0 && bytes.Contains(lead, []byte("alloc_size")) {
			if m := allocSizeAttr().FindSubmatch(lead); m != nil {
				size = []string{string(m[1])}
				if len(m[2]) > 0 {
					size = append(size, string(m[2]))
				}
			}
		}
	}
	if !malloc || len(size) == 0 || len(size) > 2 {
		return a, false
	}
	n, err1 := strconv.Atoi(size[0])
	if len(size) == 1 {
		a.Kind, a.Size = AllocMalloc, n
	} else {
		m, err2 := strconv.Atoi(size[1])
		a.Kind, a.Count, a.Size = AllocCalloc, n, m
		err1 = cmpErr(err1, err2)
	}
	return a, err1 == nil && w.checkPrototype(d, ft, a) == nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// leadingText is the text of a declaration before its declarator d: from
// the end of the previous declaration (or block) to d, its comments,
// literals and directive lines blanked (code).
func (w *weaver) leadingText(d *cc.Declarator) []byte {
	text := w.code()
	end := w.u.Offset(d)
	if end <= 0 || end > len(text) {
		return nil
	}
	start := end
	for start > 0 && text[start-1] != ';' && text[start-1] != '}' && end-start < 4096 {
		start--
	}
	return text[start:end]
}

// declaredCall advises a call of a declared allocator: the call becomes a
// statement expression that brackets it with __weave_outer_begin/end and
// hands the runtime its pointer and size arguments (weave.h).
func (w *weaver) declaredCall(x *cc.PostfixExpression, pe *cc.PrimaryExpression, a Allocator, fnRef, fnName string) {
	args := argList(x.ArgumentExpressionList)
	for _, k := range allocKinds[a.Kind].keys {
		if *a.arg(k) > len(args) {
			return // a call with too few arguments (no prototype): left alone
		}
	}
	loc, col := w.u.Location(pe.Token)
	site := Site{Func: fnName, Op: a.Name, File: loc.File, Line: loc.Line, Col: col}
	if a.Size > 0 {
		site.typeFrom(args[a.Size-1], argAt(args, a.Count-1))
	}
	ref := w.addSite(site, fnRef, allocKinds[a.Kind].op)
	w.buf.Insert(w.u.Offset(pe.Token), w.outerOpen(ref, a))
	w.hookArgs(x, a)
	w.buf.InsertClose(w.u.Offset(x.Token2)+1, outerClose(a))
}

// outerOpen and outerClose are the statement expression around a call of
// allocator a at site ref.
// A call that returns a block hands it to the runtime and takes it back
// (__weave_outer_ret), so that no copy of it outlives the call in the
// caller's frame or registers (weave.h).
func (w *weaver) outerOpen(ref string, a Allocator) string {
	if a.Kind == AllocFree {
		return "__extension__ ({ struct __weave_outer __wo __attribute__((__cleanup__(__weave_outer_end))) = __weave_outer_begin(" + ref + "); "
	}
	return "__extension__ ({ struct __weave_outer __wo __attribute__((__cleanup__(__weave_outer_left))) = __weave_outer_begin(" + ref + "); __auto_type __wr = "
}

func outerClose(a Allocator) string {
	if a.Kind == AllocFree {
		return "; })"
	}
	return "; __wr = (__typeof__(__wr))__weave_outer_ret(&__wo, __wr); __wo.state = 0; __wr; })"
}

// hookArgs wraps a's pointer, size and count arguments of call x in the
// functions that hand them to the runtime.
func (w *weaver) hookArgs(x *cc.PostfixExpression, a Allocator) {
	hooks := map[int]string{a.Ptr: "__weave_outer_ptr", a.Size: "__weave_outer_size", a.Count: "__weave_outer_count"}
	start := w.u.Offset(x.Token) + 1 // after '('
	i := 1
	for l := x.ArgumentExpressionList; l != nil; l = l.ArgumentExpressionList {
		end := w.u.Offset(x.Token2)
		if l.ArgumentExpressionList != nil {
			end = w.u.Offset(l.ArgumentExpressionList.Token)
		}
		if h, ok := hooks[i]; ok && i > 0 {
			w.buf.Insert(start, h+"(&__wo, ")
			w.buf.InsertClose(end, ")")
		}
		start = end + 1
		i++
	}
}

// addSite adds a site record and returns its address expression. op is
// the record's op, or "op, flags"; a site without a function (fnRef "0")
// is charged to the caller.
func (w *weaver) addSite(site Site, fnRef, op string) string {
	switch {
	case strings.Contains(op, ","):
	case fnRef == "0":
		op += ", __WEAVE_SITE_CALLER"
	default:
		op += ", 0"
	}
	j := len(w.siteRecs)
	typ := "0"
	if site.Type != "" {
		typ = cString(site.Type)
	}
	size := strconv.FormatInt(site.TypeSize, 10)
	if site.SizeExpr != "" {
		size = site.SizeExpr
	}
	w.siteRecs = append(w.siteRecs, fmt.Sprintf("{%s, %s, %d, %d, %s, %s, %s}",
		fnRef, cString(site.File), site.Line, site.Col, op, typ, size))
	w.res.Sites = append(w.res.Sites, site)
	return fmt.Sprintf("&%s[%d]", w.siteTable(), j)
}

// wrapDefinition handles the definition of a declared allocator in this
// unit, whose calls through pointers (Lua's frealloc) the call advice
// cannot see: the definition is renamed __weave_impl_NAME and followed, on
// the same line, by a definition of NAME with the same declaration that
// calls it as a declared call whose site has no function, so that the
// report charges its blocks to the caller's frame. It returns false (and
// changes nothing) for a definition it cannot wrap: unnamed or K&R
// parameters, variadic, or a declaration spanning linemarkers.
func (w *weaver) wrapDefinition(def cc.Node, d *cc.Declarator, body *cc.CompoundStatement, a Allocator) bool {
	ft, ok := d.Type().(*cc.FunctionType)
	if !ok || ft.IsVariadic() {
		return false
	}
	nameTok := declaratorName(d)
	if nameTok == nil {
		return false
	}
	var names []string
	for _, p := range ft.Parameters() {
		if p.Type() != nil && p.Type().Kind() == cc.Void && len(ft.Parameters()) == 1 {
			break
		}
		if p.Name() == "" {
			return false
		}
		names = append(names, p.Name())
	}
	start, lb := w.declStart(def), w.u.Offset(body.Token)
	decl := string(w.u.Text[start:lb])
	if strings.Contains(decl, "\n#") || strings.Contains(decl, "(*") {
		return false
	}
	off := w.u.Offset(nameTok)
	impl := "__weave_impl_" + a.Name
	// A prototype first: the definition of a function of external
	// linkage with none drew -Wmissing-prototypes and
	// -Wmissing-declarations, naming __weave_impl_NAME.
	proto := decl[:off-start] + impl + decl[off-start+len(nameTok.Src()):]
	w.buf.Insert(start, strings.ReplaceAll(strings.TrimRight(proto, " \t\n"), "\n", " ")+"; ")
	w.buf.Replace(off, off+len(nameTok.Src()), impl)
	loc, col := w.u.Location(nameTok)
	ref := w.addSite(Site{Func: "", Op: a.Name, File: loc.File, Line: loc.Line, Col: col}, "0", allocKinds[a.Kind].op)
	hooks := map[int]string{a.Ptr: "__weave_outer_ptr", a.Size: "__weave_outer_size", a.Count: "__weave_outer_count"}
	for i, n := range names {
		if h, ok := hooks[i+1]; ok {
			names[i] = h + "(&__wo, " + n + ")"
		}
	}
	call := impl + "(" + strings.Join(names, ", ") + ")"
	ret := "return "
	if a.Kind == AllocFree {
		ret = ""
	}
	wrapper := fmt.Sprintf(" %s{ %s%s%s%s; }", strings.ReplaceAll(decl, "\n", " "), ret, w.outerOpen(ref, a), call, outerClose(a))
	if r := ft.Result(); a.Kind == AllocFree && r != nil && r.Kind() != cc.Void {
		wrapper = fmt.Sprintf(" %s{ return %s%s%s; }", strings.ReplaceAll(decl, "\n", " "), w.outerOpen(ref, a), call, outerClose(a))
	}
	w.buf.Insert(w.u.Offset(body.Token2)+1, wrapper)
	return true
}

// declaratorName returns the identifier token of a declarator.
func declaratorName(d *cc.Declarator) *cc.Token {
	for dd := d.DirectDeclarator; dd != nil; {
		switch dd.Case {
		case cc.DirectDeclaratorIdent:
			return &dd.Token
		case cc.DirectDeclaratorDecl:
			if dd.Declarator == nil {
				return nil
			}
			dd = dd.Declarator.DirectDeclarator
		default:
			dd = dd.DirectDeclarator
		}
	}
	return nil
}

// allocatorNames adds to w.names the offsets of the identifiers that
// name allocators of w.allocs, for mayAdvise.
func (w *weaver) allocatorNames() {
	if len(w.allocs) == 0 {
		return
	}
	text := w.u.Text
	for name := range w.allocs {
		for i := 0; ; {
			k := bytes.Index(text[i:], []byte(name))
			if k < 0 {
				break
			}
			k += i
			i = k + len(name)
			if (k == 0 || !isIdentByte(text[k-1])) && (i == len(text) || !isIdentByte(text[i])) {
				w.names = append(w.names, k)
			}
		}
	}
	slices.Sort(w.names)
	w.names = slices.Compact(w.names)
}
