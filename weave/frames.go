package weave

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// Frames is a frame policy: which woven functions get the pseudo-stack
// guard.
type Frames int

const (
	// FramesAuto frames a function iff it can be on an allocation chain:
	// it allocates, or it calls something that may (a function of this
	// unit that may, a function defined elsewhere, a function pointer).
	// The others keep their exact body, so the compiler inlines them as
	// in the plain build; their time goes to their caller.
	FramesAuto Frames = iota
	// FramesAll frames every woven function: every call counted.
	FramesAll
	// FramesUnit is FramesAuto without what other units tell (weave cc's
	// frame store): the woven text depends on the unit alone.
	FramesUnit
)

// ParseFrames parses a policy name ("" is the default, auto).
func ParseFrames(s string) (Frames, error) {
	switch s {
	case "", "auto":
		return FramesAuto, nil
	case "all":
		return FramesAll, nil
	case "unit":
		return FramesUnit, nil
	}
	return 0, fmt.Errorf("unknown frame policy %q (want auto, unit or all)", s)
}

func (f Frames) String() string {
	switch f {
	case FramesAll:
		return "all"
	case FramesUnit:
		return "unit"
	}
	return "auto"
}

// nonAllocating are C library functions that never allocate heap memory
// (not even internally, where weave's interposed malloc would charge the
// allocation to the innermost frame): calls of them leave a function
// frameless. Anything that may touch stdio, locale data, the environment or
// the dynamic loader is left out, as are functions that can end the
// process (the profile is written then).
var nonAllocating = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, l := range []string{
		// <string.h>, <strings.h>
		"memcpy memmove memset memcmp memchr memrchr rawmemchr memmem mempcpy memccpy bzero explicit_bzero bcmp bcopy",
		"strlen strnlen strcmp strncmp strcoll strcasecmp strncasecmp strchr strrchr strchrnul strcpy strncpy stpcpy stpncpy",
		"strcat strncat strspn strcspn strpbrk strstr strcasestr strsep strtok_r strlcpy strlcat index rindex ffs ffsl ffsll",
		// fortified variants (_FORTIFY_SOURCE)
		"__memcpy_chk __memmove_chk __memset_chk __mempcpy_chk __strcpy_chk __strncpy_chk __stpcpy_chk __stpncpy_chk __strcat_chk __strncat_chk",
		// <ctype.h> and glibc's tables behind its macros, errno
		"isalnum isalpha isblank iscntrl isdigit isgraph islower isprint ispunct isspace isupper isxdigit isascii tolower toupper",
		"__ctype_b_loc __ctype_tolower_loc __ctype_toupper_loc __errno_location",
		// <stdlib.h> arithmetic and conversions (strtod is left out: glibc's may allocate for long inputs)
		"abs labs llabs div ldiv lldiv atoi atol atoll strtol strtoul strtoll strtoull strtoimax strtoumax",
		"__strtol_internal __strtoul_internal __strtoll_internal __strtoull_internal",
		// <math.h>
		"fabs fabsf fabsl floor floorf floorl ceil ceilf ceill trunc truncf truncl round roundf roundl lround llround",
		"rint rintf nearbyint lrint llrint fmod fmodf fmodl remainder remainderf modf modff frexp frexpf ldexp ldexpf scalbn scalbnf",
		"sqrt sqrtf sqrtl cbrt hypot pow powf powl exp expf exp2 exp2f expm1 log logf log2 log2f log10 log10f log1p logb ilogb",
		"sin sinf cos cosf tan tanf asin asinf acos acosf atan atanf atan2 atan2f sinh cosh tanh asinh acosh atanh",
		"fmin fminf fmax fmaxf fdim fma fmaf copysign copysignf nan nanf erf erfc tgamma lgamma",
		"__isnan __isnanf __isinf __isinff __finite __finitef __fpclassify __fpclassifyf __signbit __signbitf",
		// <pthread.h>: locking (not pthread_once, which calls back, nor
		// pthread_setspecific, which may allocate a key's block)
		"pthread_mutex_lock pthread_mutex_unlock pthread_mutex_trylock pthread_self pthread_equal",
		"pthread_spin_lock pthread_spin_unlock pthread_spin_trylock pthread_getspecific",
		// <stdatomic.h>, <setjmp.h> is not here: setjmp needs its caller's frame
	} {
		for _, n := range strings.Fields(l) {
			m[n] = true
		}
	}
	return m
})

// Prepare builds the weave's tables, as the first Weave would: for a
// caller with a CPU to spare before it (weave cc, while the -E step
// runs).
func Prepare() {
	nonAllocating()
}

// isBuiltin reports whether a callee name is a compiler builtin, which
// never calls the C library's allocator.
func isBuiltin(name string) bool {
	return strings.HasPrefix(name, "__builtin_") && !strings.Contains(name, "alloc") && !strings.Contains(name, "dup") ||
		strings.HasPrefix(name, "__atomic_") || strings.HasPrefix(name, "__sync_")
}

// frameInfo is what the frame analysis learns about one function
// definition of the unit.
type frameInfo struct {
	seed bool // calls something that may allocate, other than an advised allocation or an extern
	// hotSeed: seed, by a call not on a cold path (cold.go); likewise
	// hotCallees for callees (and firmExtern for externs). Cold calls do
	// not make a function framed at entry.
	hotSeed bool
	// indirect: calls through a function pointer (not a seed by itself:
	// the callers of a pointer that does not allocate need no frame)
	indirect    bool
	hotIndirect bool     // indirect, by a call not on a cold path
	allocs      bool     // calls an advised allocation function (not free)
	callees     []string // functions of this unit it calls
	externs     []string // functions of external linkage defined elsewhere it calls (Options.Extern)
	// mayExtern: one of externs may allocate, as far as Options.Extern
	// knows (a function it does not know may).
	mayExtern  bool
	hotCallees []string
	external   bool // defined with external linkage: in the unit's Summary
	// sites are its calls, in order, for the hot fields and the rule of
	// one call a run (runCalls), which reads its body; forced: something
	// needs its frame at entry whatever its calls (a cleanup, a nested
	// function, setjmp, a declared allocator); labels: it has a label (a
	// goto may loop).
	sites  []callSite
	body   *cc.CompoundStatement
	forced bool
	labels bool
}

// A callSite is a call of a function's body, as the frame analysis sees
// it.
type callSite struct {
	kind calleeKind
	name string
	cold bool // on a cold path (cold.go), or one of runCalls's calls
	loop bool // in a loop's body or condition (not do ... while (0))
	call *cc.PostfixExpression
}

// hot derives fi's hot fields from its sites.
func (fi *frameInfo) hot() {
	fi.hotSeed, fi.hotIndirect, fi.hotCallees = fi.forced, false, nil
	for _, c := range fi.sites {
		if c.cold {
			continue
		}
		switch c.kind {
		case calleeSeed:
			fi.hotSeed = true
		case calleeIndirect:
			fi.hotIndirect = true
		case calleeLocal:
			fi.hotCallees = append(fi.hotCallees, c.name)
		}
	}
}

// runCalls returns the calls of fi that may allocate on its hot paths if
// no run of fi makes two of them (pathCalls), none is in a loop, and
// nothing else needs its frame at entry (an allocation, a pointer's call,
// setjmp, a label a goto may loop through): framed at those calls, fi
// pushes its frame at most once an activation, as a frame at its entry
// would, and not at all when none runs (lua_settop's luaF_close,
// lua_geti's luaV_finishget; sqlite3VdbeCursorMoveto's two calls, each
// on its own way out). Of several, none may be fi's own call, self: a
// recursion reaches it on every run but the last (and gcc's note of an
// infinite one would name a woven column).
func (fi *frameInfo) runCalls(self string, may map[string]bool, externMay func(string) bool) []*callSite {
	if fi.forced || fi.labels || fi.allocs {
		return nil
	}
	var calls []*callSite
	for i := range fi.sites {
		c := &fi.sites[i]
		if c.cold {
			continue
		}
		switch {
		case c.kind == calleeIndirect:
			return nil
		case c.kind == calleeSeed, c.kind == calleeLocal && may[c.name], c.kind == calleeExtern && externMay(c.name):
			if c.loop {
				return nil
			}
			calls = append(calls, c)
		}
	}
	if len(calls) > 1 {
		set := map[*cc.PostfixExpression]bool{}
		for _, c := range calls {
			if c.kind == calleeLocal && c.name == self {
				return nil
			}
			set[c.call] = true
		}
		if pathCalls(fi.body, set) > 1 {
			return nil
		}
	}
	return calls
}

// A frame need is what a function needs under FramesAuto.
type frameNeed int

const (
	needNone frameNeed = iota // cannot be on an allocation chain: frameless
	// needSite: an allocation leaf, whose only calls that may allocate are
	// its own advised allocations: frameless too, its allocation sites
	// make its frame in the context tree when they allocate
	// (__WEAVE_SITE_FRAME), so the chains are those of a framed function.
	needSite
	needFrame // may be on an allocation chain below its own calls: framed
	// needCalls: may be on an allocation chain only through its calls of
	// function pointers and of other needCalls functions: frameless, its
	// frame pushed around those calls alone (a pointer's call only when
	// the runtime does not know its target for one that cannot allocate).
	needCalls
)

// analyseFrames returns what each function of the unit needs, by name: a
// frame if it calls something that may allocate, directly or through
// other functions of the unit (a fixed point over the unit's call graph).
func (w *weaver) analyseFrames() map[string]frameNeed {
	infos := w.visitDefs()
	callers := map[string][]string{}
	for name, fi := range infos {
		for _, c := range fi.callees {
			callers[c] = append(callers[c], name)
		}
		fi.mayExtern = slices.ContainsFunc(fi.externs, w.externMayAllocate)
	}
	w.res.Summary = unitSummary(infos, callers)
	may := propagate(infos, callers, func(fi *frameInfo) bool { return fi.seed || fi.indirect || fi.allocs || fi.mayExtern })
	hotCallers := map[string][]string{}
	for name, fi := range infos {
		for _, c := range fi.runCalls(name, may, w.externMayAllocate) {
			c.cold = true
		}
		fi.hot()
		for _, c := range fi.hotCallees {
			hotCallers[c] = append(hotCallers[c], name)
		}
	}
	// direct: may be on a chain through calls on its hot paths other than
	// through pointers; the others that may are framed at their calls.
	direct := propagate(infos, hotCallers, func(fi *frameInfo) bool { return fi.hotSeed || fi.allocs || w.firmExtern(fi) })
	// A function framed at entry but for its cold calls, which would push
	// its frame on its hot paths too (a pointer's call, a call of a
	// function framed at its calls), keeps its frame at entry: one push
	// an activation, where framing its calls may cost several.
	directAnyway := propagate(infos, callers, func(fi *frameInfo) bool { return fi.seed || fi.allocs || fi.mayExtern })
	need := map[string]frameNeed{}
	for name, fi := range infos {
		hotPush := fi.hotIndirect || slices.ContainsFunc(fi.hotCallees, func(c string) bool { return may[c] })
		switch {
		case !may[name]:
			need[name] = needNone
		case !direct[name] && !(directAnyway[name] && hotPush) && !w.callsDiagnosed(fi):
			need[name] = needCalls
		case fi.seed || fi.indirect || fi.mayExtern || slices.ContainsFunc(fi.callees, func(c string) bool { return may[c] }):
			need[name] = needFrame
		default:
			need[name] = needSite
		}
	}
	w.sticky = map[string]bool{}
	for name, fi := range infos {
		if need[name] == needCalls && fi.severalCalls(need, w.externMayAllocate) {
			w.sticky[name] = true
		}
	}
	return need
}

// firmExtern reports whether fi makes a hot call of another unit's
// function that may allocate and frames fi at its entry: one the frame
// store has a summary of, or one of a system header's declaration (the C
// library's, never summarised), or any such call in a loop. A call of a
// function declared in the program's own headers that no summary
// answers for yet (pending: a unit compiled later, Lua's lapi.c calling
// ltable.c's luaH_getint in a first build) is framed where it is made
// instead, as a pointer's is: the chains are the same, the function's
// calls counted are those calls (*), and a second build, whose store
// knows it cannot allocate (Lua's lua_geti, lua_seti, propagatemark),
// frames it there or nowhere too.
func (w *weaver) firmExtern(fi *frameInfo) bool {
	for _, c := range fi.sites {
		if !c.cold && c.kind == calleeExtern && w.externMayAllocate(c.name) && (!w.pending[c.name] || c.loop) {
			return true
		}
	}
	return false
}

// callsDiagnosed reports whether fi calls a function whose calls the
// compiler diagnoses (diagnosed: deprecated, unavailable, a warning or
// error attribute). Such a function is framed at its entry: framed at the
// call, the call is a statement of its own in weave's statement
// expression, and gcc places -Wdeprecated-declarations at the statement
// it is parsing, the callee's column where the plain build names the
// statement's first (libffi's java_raw_api.c: `return
// ffi_prep_java_raw_closure_loc (...)`, column 10 for 3).
func (w *weaver) callsDiagnosed(fi *frameInfo) bool {
	for _, c := range fi.sites {
		if id := calleeIdent(c.call.PostfixExpression); id != nil && c.kind != calleeIndirect && w.diagnosed(id) {
			return true
		}
	}
	return false
}

// severalCalls reports whether every run of fi, a needCalls function,
// makes one of the hot calls it is framed at (leastCalls) and one may
// make more than one (one in a loop, or two on one path: pathCalls):
// then its frame is pushed by the first that runs and stays until it
// returns (sticky; weave.h, __weave_pushed), one push an activation
// where each call would push one (sqlite's vdbeSorterMerge: a dozen).
// A function with a label is left alone: a goto may skip its calls.
func (fi *frameInfo) severalCalls(need map[string]frameNeed, externMay func(string) bool) bool {
	if fi.labels {
		return false
	}
	set := map[*cc.PostfixExpression]bool{}
	loop := false
	for _, c := range fi.sites {
		framed := c.kind == calleeIndirect || c.kind == calleeSeed ||
			c.kind == calleeLocal && need[c.name] != needNone || c.kind == calleeExtern && externMay(c.name)
		if !c.cold && framed {
			set[c.call] = true
			loop = loop || c.loop
		}
	}
	return (loop || len(set) > 1 && pathCalls(fi.body, set) > 1) && leastCalls(fi.body, set) >= 1
}

// bracketable reports whether the text of call x is where its offsets say:
// its callee's first token at its start, its ')' at its end, so that
// frameCall can bracket it.
func (w *weaver) bracketable(x *cc.PostfixExpression) bool {
	start, end := w.u.Offset(x.PostfixExpression), w.u.Offset(x.Token2)
	if start < 0 || end < start || end >= len(w.u.Text) || w.u.Text[end] != ')' {
		return false
	}
	first := firstToken(x.PostfixExpression)
	return first != "" && bytes.HasPrefix(w.u.Text[start:], []byte(first))
}

// firstToken is the source of the first token of a callee expression (an
// identifier, or the '(' of a parenthesised one, at the left of any
// member, index or call), or "".
func firstToken(e cc.ExpressionNode) string {
	switch x := e.(type) {
	case *cc.PrimaryExpression:
		return x.Token.SrcStr()
	case *cc.PostfixExpression:
		return firstToken(x.PostfixExpression)
	}
	return ""
}

// propagate returns the functions of infos that are seeds, or call one
// through the unit's calls (callers inverts them).
func propagate(infos map[string]*frameInfo, callers map[string][]string, seed func(*frameInfo) bool) map[string]bool {
	var seeds []string
	for name, fi := range infos {
		if seed(fi) {
			seeds = append(seeds, name)
		}
	}
	return withCallers(seeds, callers)
}

// withCallers returns the functions of seeds and every function that
// calls one of them, directly or not (callers maps a function to its
// callers).
func withCallers(seeds []string, callers map[string][]string) map[string]bool {
	may := map[string]bool{}
	for _, n := range seeds {
		may[n] = true
	}
	todo := slices.Clone(seeds)
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		for _, c := range callers[n] {
			if !may[c] {
				may[c] = true
				todo = append(todo, c)
			}
		}
	}
	return may
}

// A calleeKind is what a call's callee means for the allocation chains.
type calleeKind int

const (
	calleeSeed     calleeKind = iota // anything else: may allocate
	calleeLocal                      // a function of this unit (name)
	calleeNone                       // never allocates (free, a builtin, nonAllocating)
	calleeAlloc                      // an advised allocation function
	calleeExtern                     // a function of external linkage defined elsewhere (name)
	calleeIndirect                   // a function pointer, or a computed callee
)

// classify tells what a call of the expression e means for the
// allocation chains, and the function it names, if any.
func (w *weaver) classify(e cc.ExpressionNode) (calleeKind, string) {
	for {
		pe, ok := e.(*cc.PrimaryExpression)
		if !ok {
			return calleeIndirect, ""
		}
		switch pe.Case {
		case cc.PrimaryExpressionExpr: // (f)(x)
			if el, ok := pe.ExpressionList.(*cc.ExpressionList); ok && el.ExpressionList == nil {
				e = el.AssignmentExpression
				continue
			}
			e = pe.ExpressionList
			continue
		case cc.PrimaryExpressionIdent:
		case cc.PrimaryExpressionString, cc.PrimaryExpressionLString:
			// Not a call: an asm operand, "r"(e), parsed as one (e's
			// calls are seen on their own).
			return calleeNone, ""
		default:
			return calleeSeed, ""
		}
		name := pe.Token.SrcStr()
		d, _ := pe.ResolvedTo().(*cc.Declarator)
		if d != nil && d.Type() != nil && d.Type().Kind() != cc.Function {
			return calleeIndirect, name // a variable: a function pointer
		}
		da, declared := w.allocs[name]
		switch {
		case w.defined[name] && declared && allocOps[name].op == "" && da.Kind != AllocFree:
			// A declared allocator's call is a site, recorded when the
			// call returns: its caller needs its frame then.
			return calleeSeed, name
		case w.defined[name]:
			return calleeLocal, name
		case name == "free" || isBuiltin(name) && name != builtinSetjmp || nonAllocating()[name]:
			return calleeNone, name // free does not look at the pseudo-stack
		case allocOps[name].op != "" && d != nil && d.Linkage() == cc.External:
			return calleeAlloc, name // advised (isLibraryFunction)
		case d != nil && d.Linkage() == cc.External && !declared && !setjmpNames[name]:
			if _, known := w.extern[name]; !known {
				if loc, _ := w.u.Location(d); !loc.System {
					if w.pending == nil {
						w.pending = map[string]bool{}
					}
					w.pending[name] = true
				}
			}
			return calleeExtern, name
		}
		return calleeSeed, name
	}
}

// callee records in fi what the call x means for the
// allocation chains: a call of a function of this unit (an edge), of a
// function that never allocates (nothing), through a pointer, or of
// anything else (a seed); cold, if the call is on a cold path (cold.go),
// loop if in a loop. It returns the call's kind.
// Allocations, setjmp and declared allocators are hot wherever they are:
// their advice needs the frame at entry.
func (w *weaver) callee(fi *frameInfo, x *cc.PostfixExpression, cold, loop bool) calleeKind {
	kind, name := w.classify(x.PostfixExpression)
	switch kind {
	case calleeLocal:
		fi.callees = append(fi.callees, name)
	case calleeAlloc:
		fi.allocs = true
	case calleeExtern:
		fi.externs = append(fi.externs, name)
	case calleeIndirect:
		fi.indirect = true
	case calleeSeed:
		fi.seed = true
		if _, declared := w.allocs[name]; declared || setjmpNames[name] {
			fi.forced = true
		}
	}
	if kind != calleeNone {
		fi.sites = append(fi.sites, callSite{kind: kind, name: name, cold: cold, loop: loop, call: x})
	}
	return kind
}

// externMayAllocate reports whether a function of another unit may
// allocate, as far as Options.Extern knows (a function it does not know
// may), and records the answer in Result.Extern.
func (w *weaver) externMayAllocate(name string) bool {
	v, known := w.extern[name]
	may := v || !known
	if w.res.Extern == nil {
		w.res.Extern = map[string]bool{}
	}
	w.res.Extern[name] = may
	return may
}

// A Summary tells other units what the frame analysis learnt about the
// functions of external linkage a unit defines, by name: what weave cc
// keeps in its frame store (driver) for the units compiled after it.
type Summary map[string]FuncSummary

// FuncSummary is what a unit says about one of its functions.
type FuncSummary struct {
	// Allocs: it may allocate whatever the functions of other units
	// do (it allocates, calls a function pointer, an unknown function,
	// ... through the unit's own calls).
	Allocs bool
	// Calls are the functions of other units it may call (directly or
	// through the unit's own functions), when not Allocs: it may
	// allocate iff one of them may.
	Calls []string
}

// unitSummary summarises the unit's functions of external linkage.
func unitSummary(infos map[string]*frameInfo, callers map[string][]string) Summary {
	local := propagate(infos, callers, func(fi *frameInfo) bool { return fi.seed || fi.indirect || fi.allocs })
	sum := Summary{}
	for name, fi := range infos {
		if !fi.external {
			continue
		}
		if local[name] {
			sum[name] = FuncSummary{Allocs: true}
			continue
		}
		seen := map[string]bool{name: true}
		calls := map[string]bool{}
		stack := []string{name}
		for len(stack) > 0 {
			g := infos[stack[len(stack)-1]]
			stack = stack[:len(stack)-1]
			for _, e := range g.externs {
				calls[e] = true
			}
			for _, c := range g.callees {
				if !seen[c] && infos[c] != nil {
					seen[c] = true
					stack = append(stack, c)
				}
			}
		}
		sum[name] = FuncSummary{Calls: slices.Sorted(maps.Keys(calls))}
	}
	return sum
}

// Resolve tells, for every function the summaries describe, whether it
// may allocate: it allocates, or one of the functions it calls may (a
// function no summary describes may). Where several summaries describe
// one name (a function defined in two programs, a stale summary), it may
// if one of them says so.
func Resolve(sums []Summary) map[string]bool {
	merged := map[string]*FuncSummary{}
	for _, s := range sums {
		for name, f := range s {
			m := merged[name]
			if m == nil {
				m = &FuncSummary{}
				merged[name] = m
			}
			m.Allocs = m.Allocs || f.Allocs
			m.Calls = append(m.Calls, f.Calls...)
		}
	}
	callers := map[string][]string{}
	var seeds []string
	for name, f := range merged {
		for _, c := range f.Calls {
			if merged[c] == nil {
				f.Allocs = true // unknown: may allocate
			}
			callers[c] = append(callers[c], name)
		}
		if f.Allocs {
			seeds = append(seeds, name)
		}
	}
	may := withCallers(seeds, callers)
	res := make(map[string]bool, len(merged))
	for name := range merged {
		res[name] = may[name]
	}
	return res
}
