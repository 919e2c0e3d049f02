package weave

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"modernc.org/cc/v4"
)

// What the compiler knows of the library's allocation functions, given to
// their advice so that a woven compile warns and checks as the plain one.

// adviceDecls are the allocation advice functions that return a block,
// by the library function each stands for.
var adviceDecls = map[string]string{
	"malloc":        "void *__weave_malloc(const struct __weave_site *, __weave_size_t)",
	"calloc":        "void *__weave_calloc(const struct __weave_site *, __weave_size_t, __weave_size_t)",
	"realloc":       "void *__weave_realloc(const struct __weave_site *, void *, __weave_size_t)",
	"reallocarray":  "void *__weave_reallocarray(const struct __weave_site *, void *, __weave_size_t, __weave_size_t)",
	"strdup":        "char *__weave_strdup(const struct __weave_site *, const char *)",
	"strndup":       "char *__weave_strndup(const struct __weave_site *, const char *, __weave_size_t)",
	"aligned_alloc": "void *__weave_aligned_alloc(const struct __weave_site *, __weave_size_t, __weave_size_t)",
	"memalign":      "void *__weave_memalign(const struct __weave_site *, __weave_size_t, __weave_size_t)",
	"valloc":        "void *__weave_valloc(const struct __weave_site *, __weave_size_t)",
	"pvalloc":       "void *__weave_pvalloc(const struct __weave_site *, __weave_size_t)",
}

// gccUnusedResult are the library functions gcc's builtins declare
// warn_unused_result (gcc 12's builtins.def), each with the C standard
// (__STDC_VERSION__) from which it is a builtin under a strict ISO mode
// (-std=c99, __STRICT_ANSI__), where the GNU extensions' are off: strdup
// and strndup are C2x's, aligned_alloc C11's.
var gccUnusedResult = map[string]int{"malloc": 0, "calloc": 0, "realloc": 0, "strdup": 202000, "strndup": 202000, "aligned_alloc": 201112}

// gccBuiltinUnused reports whether gcc's builtin name is declared
// warn_unused_result in this unit's dialect (gccUnusedResult).
func (w *weaver) gccBuiltinUnused(name string) bool {
	since, ok := gccUnusedResult[name]
	if !ok || since == 0 || w.u.AST.Macros["__STRICT_ANSI__"] == nil {
		return ok
	}
	v := 0
	if mac := w.u.AST.Macros["__STDC_VERSION__"]; mac != nil {
		if l := mac.ReplacementList(); len(l) == 1 {
			v, _ = strconv.Atoi(strings.TrimSuffix(l[0].SrcStr(), "L"))
		}
	}
	return v >= since
}

// adviceAttributes returns the allocation advice declared again with what
// the plain build's compiler knows of the library functions, past weave.h's
// attributes: gcc knows free's deallocations from its builtins (not under
// -fno-builtin: Options.Builtins), the advice's only from
// __attribute__((__malloc__(DEALLOCATOR, ARG))) (gcc 11 and later), to warn of a pointer used after a free (-Wuse-after-free),
// freed twice, or a free of what was not allocated (-Wfree-nonheap-object),
// as in the plain build (naming __weave_free); the library's free and
// realloc are among the deallocators, since a call left unwoven (a system
// header's inline function) frees a block the advice allocated. And a
// function the unit declares warn_unused_result (glibc's under
// _FORTIFY_SOURCE) has advice that is too.
func (w *weaver) adviceAttributes() string {
	m := w.u.AST.Macros
	gcc := m["__GNUC__"] != nil && m["__clang__"] == nil
	dealloc := gcc && macroInt(w.u.AST, "__GNUC__") >= 11
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(adviceDecls)) {
		var attrs []string
		if dealloc && w.builtins {
			attrs = append(attrs, "__malloc__(__weave_free, 2), __malloc__(__weave_realloc, 2), __malloc__(__weave_reallocarray, 2), "+
				"__malloc__(__builtin_free, 1), __malloc__(__builtin_realloc, 1)")
		}
		if w.unusedResult[name] || gcc && w.builtins && w.gccBuiltinUnused(name) {
			attrs = append(attrs, "__warn_unused_result__")
		}
		if len(attrs) > 0 {
			fmt.Fprintf(&b, "%s __attribute__((%s));\n", adviceDecls[name], strings.Join(attrs, ", "))
		}
	}
	if w.unusedResult["posix_memalign"] {
		b.WriteString("int __weave_posix_memalign(const struct __weave_site *, void **, __weave_size_t, __weave_size_t) __attribute__((__warn_unused_result__));\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n" + b.String()
}

// notHeap reports whether a pointer argument is certainly not a heap
// block: an object's address (&x) or an array. A free of one is left as
// it is: the compiler warns of it as the plain build's does, and the
// program fails at it as the plain one does.
func notHeap(arg cc.ExpressionNode) bool {
	switch x := strip(arg).(type) {
	case *cc.UnaryExpression:
		return x.Case == cc.UnaryExpressionAddrof
	case *cc.PrimaryExpression:
		d, _ := x.ResolvedTo().(*cc.Declarator)
		return x.Case == cc.PrimaryExpressionIdent && d != nil && d.Type() != nil && d.Type().Kind() == cc.Array
	}
	return false
}

// macroInt returns the value of a predefined macro that is one integer
// (__GNUC__, __clang_major__), or 0.
func macroInt(ast *cc.AST, name string) int {
	if mac := ast.Macros[name]; mac != nil {
		if l := mac.ReplacementList(); len(l) == 1 {
			n, _ := strconv.Atoi(l[0].SrcStr())
			return n
		}
	}
	return 0
}
