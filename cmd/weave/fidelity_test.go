package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// unusedResultSource drops the results of calls of a function declared
// warn_unused_result, each in a function framed at its calls.
const unusedResultSource = `extern int wur(int n) __attribute__((__warn_unused_result__));
void two(int n) { wur(n); }
void three(int n) { (void)wur(n); }
int four(int n) { return wur(n) + 1; }
`

// fidelitySources have the compiler's diagnostics on allocations and on
// lines weave inserts text into: columns after an insertion (an advised
// call, a guard after a function's {), a use after free, a double free,
// a free of a local, unused results of allocations, a missing return at
// a function's } behind a call weave wraps (abort's frame closes before it),
// allocation calls in operands that never run (sizeof's, _Alignof's,
// typeof's: a declared allocator's statement expression there made clang
// warn -Wunevaluated-expression), calls of allocation functions the unit
// does not declare (implicit.c: advised, they had no implicit declaration,
// and strdup's int result was not diagnosed; the woven program ran
// where the plain one, its pointer cut to 32 bits, crashed), and C89
// (c89.c: under -std=c89 -pedantic clang said the unit record's asm
// string was too long for C90; gcc warned of strdup's unused result,
// not a builtin there), and calls of functions whose dropped result is
// diagnosed (c23attrs.c, wur.c: gcc's copy of C23's [[__nodiscard__]] to
// a call's thunk was "attribute directive ignored" and lost nodiscard;
// clang's thunk lost warn_unused_result), calls of a deprecated
// function (deprecated.c: gcc named the callee's column, not the
// statement's, where the call was framed), and tokens apart in a line
// (spaced.c: the preprocessor puts one space for blanks or a comment
// between two tokens, so gcc and clang named the column of a warning
// after them 7 to 19 columns to the left: parse.Respace).
var fidelitySources = map[string]string{
	"c23attrs.c": `[[__nodiscard__]] extern int *nd(int n);
[[__maybe_unused__]] extern int mu(int n);
int *one(int n) { return nd(n); }
void two(int n) { nd(n); }
void three(int n) { (void)nd(n); }
int four(int n) { return mu(n); }
`,
	"wur.c": unusedResultSource,
	"deprecated.c": `__attribute__((deprecated)) int f(int);
int g(int);
int h(int x)
{
  return f (x);
}
int k(int x)
{
  int y = f (x);
  return y;
}
int m(int x)
{
  x = g (x);
  return x +
    f (x);
}
`,
	"unevaluated.c": `#include <stdlib.h>
__attribute__((malloc, alloc_size(1))) int *xmalloc(size_t n);
int f(void) { return (int)sizeof(*xmalloc(4)) + (int)_Alignof(*xmalloc(8)); }
int g(void) { __typeof__(xmalloc(4)) p = 0; return p != 0; }
int h(void) { return (int)sizeof(*(int *)malloc(4)) + (int)sizeof(realloc(0, 1)); }
`,
	"ret.c": `#include <stdlib.h>
int f(int x) { if (x != 1) abort(); }
int g(int x) { if (x) exit(x); }
`,
	"cols.c": `#include <stdlib.h>
#include <string.h>
static int g(int *q) { int x; free(q); if (x = 1) return x; return 0; }
int h(int n) { char *p = malloc(n); int y; if (p) memset(p, 0, n); free(p); return n + (y = 2) ? 1 : 0; }
int k(void *(*a)(size_t)) { char *s = a(4); unsigned u = 3; if (u < 0) return 1; free(s); return g(malloc(4)) + (int)(long)s; }
	int t(int n) {	char *p = calloc(n, 1);	int v;	if (v = n) { free(p); }	return v + (n == n); }
`,
	"spaced.c": `#include <stdlib.h>
#define TWICE(x) ((x) + (x))
int f(int x)
{
	int a = x;      int   b;	/* aligned */
	int c = a; /* a comment */ int d;
	char *p = malloc(4);  /* a "quoted" one */  int   g;  int e = TWICE(a);
	const char *s = "  a  string  ";    int h;
	free(p); return a + e + (int)s[0];
}
`,
	"uaf.c": `#include <stdlib.h>
#include <string.h>
int k(int n) { char *s = malloc(n); if (!s) return 0; memset(s, 0, n); free(s); return s[0]; }
int m(void) { char *s = strdup("x"); free(s); free(s); return 0; }
int l(void) { int x; free(&x); return 0; }
`,
	"implicit.c": `#include <stdio.h>
char *f(const char *s) { char *p = strdup(s); if (p) puts(p); return p; }
void *g(unsigned n) { void *p = malloc(n); free(p); return calloc(n, 1); }
`,
	"c89.c": `#include <stdlib.h>
#include <string.h>
#include <stdio.h>
struct node { struct node *next; int v; };
static struct node *push(struct node *h, int v)
{
	struct node *n = (struct node *)malloc(sizeof *n);
	if (!n) { perror("malloc"); exit(1); }
	n->next = h;
	n->v = v;
	return n;
}
static void fail(const char *m) { fprintf(stderr, "%s\n", m); abort(); }
int main(int argc, char **argv)
{
	struct node *h = 0;
	int i;
	char *s;
	for (i = 0; i < argc * 10; i++)
		h = push(h, i);
	s = (char *)calloc(10, 1);
	if (!s) fail(strcpy((char *)malloc(8), "calloc"));
	strcpy(s, argv[0] + strlen(argv[0]) - 1);
	while (h) { struct node *n = h->next; free(h); h = n; }
	free(s);
	return 0;
}
`,
	"unused.c": `#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
void f(void *p) { malloc(4); realloc(p, 8); calloc(1, 2); }
void g(void *p) { strdup("x"); strndup("x", 1); aligned_alloc(8, 8); reallocarray(p, 1, 2); valloc(3); memalign(8, 8); pvalloc(1); posix_memalign(&p, 8, 8); }
`,
}

// diagnosticAt matches a diagnostic's place and option, the function it
// names left out (the advice's name, __weave_free, stands for free's).
var diagnosticAt = regexp.MustCompile(`(?m)^([\w.<>]+:\d+:\d+): (warning|error): .*?(\[-W[\w=-]+\])?$`)

func diagnostics(stderr string) string {
	var b strings.Builder
	for _, m := range diagnosticAt.FindAllStringSubmatch(stderr, -1) {
		b.WriteString(m[1] + " " + m[2] + " " + m[3] + "\n")
	}
	return b.String()
}

// TestCompilerDiagnostics: a woven compile prints the plain compile's
// warnings at the plain compile's lines and columns: weave's text put
// into a line leaves what follows at its column (a linemarker and blanks),
// and the allocation advice carries what the compiler knows of malloc &
// co. (their deallocators, warn_unused_result, as gcc's builtins or the
// library's declarations have them). So does the compile of weave -o's
// output with the same flags, which before had neither gcc's builtins'
// deallocators nor their warn_unused_result (weave -o did not tell the
// weaver the flags' builtins, as weave cc did).
func TestCompilerDiagnostics(t *testing.T) {
	dir := t.TempDir()
	for name, src := range fidelitySources {
		os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644)
	}
	for _, cc := range []string{"gcc", "clang"} {
		for _, flags := range [][]string{{"-O0"}, {"-O2"}, {"-O2", "-D_FORTIFY_SOURCE=2"}, {"-O2", "-fno-builtin"}, {"-O2", "-std=c89", "-pedantic"}} {
			t.Run(cc+strings.Join(flags, ""), func(t *testing.T) {
				testtool.Need(t, cc)
				for name := range fidelitySources {
					args := append([]string{"-Wall", "-Wextra", "-c", "-o", "/dev/null", name}, flags...)
					p := run(t, dir, nil, append([]string{cc}, args...)...)
					w := run(t, dir, []string{"WEAVE_CC=" + cc}, append([]string{weaveBin, "cc"}, args...)...)
					if diagnostics(w.stderr) != diagnostics(p.stderr) || w.code != p.code {
						t.Errorf("%s: woven (exit %d):\n%s\nplain (exit %d):\n%s", name, w.code, diagnostics(w.stderr), p.code, diagnostics(p.stderr))
					}
					if slices.Contains(flags, "-pedantic") {
						continue // weave -o's output: its linemarkers are a GCC extension (docs/building.md)
					}
					// weave -o with the compile's flags, then the plain compile of its output
					out := "w-" + name
					mustRun(t, dir, []string{"WEAVE_CC=" + cc}, append([]string{weaveBin, "-o", out, name}, flags...)...)
					o := run(t, dir, nil, append([]string{cc, "-Wall", "-Wextra", "-c", "-o", "/dev/null", out}, flags...)...)
					if diagnostics(o.stderr) != diagnostics(p.stderr) || o.code != p.code {
						t.Errorf("%s: weave -o's output (exit %d):\n%s\nplain (exit %d):\n%s", name, o.code, diagnostics(o.stderr), p.code, diagnostics(p.stderr))
					}
				}
			})
		}
	}
}

// TestFortifyHeap: _FORTIFY_SOURCE's checks of heap buffers hold in the
// woven program (the advice has malloc's alloc_size): an overflow of a
// malloc'd buffer ends it as it ends the plain one, and a copy that fits
// runs as before.
func TestFortifyHeap(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.c"), []byte(`#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv)
{
	char *p = malloc(8), *q = calloc(2, 4), *r;
	strcpy(p, argc > 1 ? argv[1] : "short");
	r = strdup(p);
	memcpy(q, r, strlen(r) + 1);
	printf("%s %s\n", p, q);
	free(p), free(q), free(r);
	return 0;
}
`), 0o644)
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			for _, level := range []string{"2", "3"} {
				flags := []string{"-O2", "-D_FORTIFY_SOURCE=" + level, "f.c"}
				mustRun(t, dir, nil, append([]string{cc, "-o", "plain"}, flags...)...)
				mustRun(t, dir, []string{"WEAVE_CC=" + cc}, append([]string{weaveBin, "cc", "-o", "woven"}, flags...)...)
				for _, arg := range []string{"seven", "0123456789abcdef"} {
					p, w := run(t, dir, nil, "./plain", arg), run(t, dir, []string{"WEAVE_SUMMARY=0"}, "./woven", arg)
					if w.code != p.code || w.stdout != p.stdout || strings.Contains(p.stderr, "overflow") != strings.Contains(w.stderr, "overflow") {
						t.Errorf("_FORTIFY_SOURCE=%s, %s: woven %+v, plain %+v", level, arg, w, p)
					}
				}
			}
		})
	}
}

// TestDeadCallLinks: a call of an undefined function that gcc -O0 drops
// (in if (0), in __builtin_constant_p's argument) links woven as it links
// plain: no call thunk keeps a reference to it (c-torture's medce-1.c,
// bcp-1.c); so does weave -o's output, woven with the compile's flags
// (before, weave -o made thunks for -O0 too, and its output did not link).
func TestDeadCallLinks(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "d.c"), []byte(`extern void link_error(void);
int func(void);
static int ok;
static void bar(void) { ok = 1; }
static void foo(int x) { if (0) link_error(); if (x) bar(); }
static int cp(void) { return __builtin_constant_p(func()); }
int main(void) { foo(1); return !ok + cp(); }
`), 0o644)
	for _, opt := range []string{"-O0", "-O2"} {
		mustRun(t, dir, nil, "gcc", opt, "-o", "plain", "d.c")
		mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", opt, "-o", "woven", "d.c")
		if w := run(t, dir, []string{"WEAVE_SUMMARY=0"}, "./woven"); w.code != 0 {
			t.Errorf("%s: woven exits %d", opt, w.code)
		}
	}
	// weave -o, told the compile's flags (none: -O0), then gcc
	mustRun(t, dir, nil, weaveBin, "runtime", "-o", "rt.c")
	for _, opt := range [][]string{{}, {"-O0"}, {"-O2"}} {
		mustRun(t, dir, []string{"WEAVE_CC=gcc"}, append([]string{weaveBin, "-o", "w.c", "d.c"}, opt...)...)
		os.Remove(filepath.Join(dir, "woven"))
		if r := run(t, dir, nil, append([]string{"gcc", "-o", "woven", "w.c", "rt.c"}, opt...)...); r.code != 0 {
			t.Errorf("weave -o %v, gcc %v: exit %d\n%s", opt, opt, r.code, r.stderr)
		} else if w := run(t, dir, []string{"WEAVE_SUMMARY=0"}, "./woven"); w.code != 0 {
			t.Errorf("weave -o %v, gcc %v: woven exits %d", opt, opt, w.code)
		}
	}
}

// TestUnusedResultNames: a dropped result of a call of a function
// declared warn_unused_result is diagnosed naming the function, as in the
// plain build (the call's thunk, __weave_t1, was named).
func TestUnusedResultNames(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "wur.c"), []byte(unusedResultSource), 0o644)
	args := []string{"-O2", "-Wall", "-c", "-o", "/dev/null", "wur.c"}
	p := run(t, dir, nil, append([]string{"gcc"}, args...)...)
	w := run(t, dir, []string{"WEAVE_CC=gcc"}, append([]string{weaveBin, "cc"}, args...)...)
	if w.stderr != p.stderr || !strings.Contains(p.stderr, "wur") {
		t.Errorf("woven:\n%s\nplain:\n%s", w.stderr, p.stderr)
	}
}

// TestUnusedAllocationNames: a dropped result of an allocation call
// (`malloc(10);`, declared warn_unused_result by glibc) is diagnosed naming
// the allocator, as in the plain build, in a compile and in a one-step
// compile and link, in the C locale and coloured: the woven call's
// runtime entry, __weave_malloc, was named. Only the diagnostics' own
// lines are compared: gcc underlines the plain call, not the woven one,
// whose arguments the weave spreads over lines (a known difference).
func TestUnusedAllocationNames(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := "#include <stdlib.h>\n#include <string.h>\nint main(void) { malloc(10); realloc(0, 5); strdup(\"x\"); return 0; }\n"
	os.WriteFile(filepath.Join(dir, "wa.c"), []byte(src), 0o644)
	for _, c := range [][]string{{"-c", "-o", "/dev/null"}, {"-o", "wa"}, {"-c", "-o", "/dev/null", "-fdiagnostics-color=always"}} {
		args := append([]string{"-O2", "-Wall", "wa.c"}, c...)
		env := []string{"LC_ALL=C"}
		p := run(t, dir, env, append([]string{"gcc"}, args...)...)
		w := run(t, dir, append(env, "WEAVE_CC=gcc"), append([]string{weaveBin, "cc"}, args...)...)
		if !strings.Contains(p.stderr, "malloc") || diagLines(w.stderr) != diagLines(p.stderr) || w.code != p.code {
			t.Errorf("%v: woven (exit %d):\n%s\nplain (exit %d):\n%s", c, w.code, w.stderr, p.code, p.stderr)
		}
	}
}

// diagLines returns the lines of a compiler's stderr that name a file's
// line and column: its diagnostics without their source lines and carets.
func diagLines(stderr string) string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "wa.c:") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestAggregateReturnWarnings: under gcc's -Waggregate-return (xz's and
// libxml2's flags) the woven compile prints the plain compile's stderr,
// byte for byte: the warnings the runtime's calls draw (frames' entries
// and a declared allocator's wrapper return a structure; xz 5.4's woven
// build drew 59, its plain build none) are dropped, the program's own
// kept, coloured or not; in a compile (-c) and in a one-step compile and
// link, whose stderr holds the compiler's and the linker's diagnostics.
func TestAggregateReturnWarnings(t *testing.T) {
	testtool.Need(t, "gcc")
	src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "diagnostics"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(t.TempDir(), "aggregate")
	for _, mode := range [][]string{{"-c", "-o", "/dev/null"}, {"-o", exe}} {
		for _, flags := range [][]string{{"-O0"}, {"-O1"}, {"-O2"}, {"-O2", "-fdiagnostics-color=always"}, {"-O0", "-ftabstop=4"}} {
			args := slices.Concat([]string{"-Wall", "-Waggregate-return"}, mode, []string{"aggregate.c"}, flags)
			p := run(t, src, nil, append([]string{"gcc"}, args...)...)
			w := run(t, src, []string{"WEAVE_CC=gcc"}, append([]string{weaveBin, "cc"}, args...)...)
			if !strings.Contains(p.stderr, "aggregate-return") && flags[0] == "-O0" {
				t.Errorf("%v %v: the plain compile draws no -Waggregate-return: the test tests nothing", mode, flags)
			}
			if w.stderr != p.stderr || w.code != p.code {
				t.Errorf("%v %v: woven (exit %d):\n%s\nplain (exit %d):\n%s", mode, flags, w.code, w.stderr, p.code, p.stderr)
			}
		}
	}
}
