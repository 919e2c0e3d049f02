package weave

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// framesSrc has one function for each case of the frame analysis; the
// framed ones are named f_*, the frameless ones n_*.
const framesSrc = `#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <stdio.h>
extern void elsewhere(void);
extern void undefined_here(void);
static jmp_buf jb;
static int n_leaf(int x) { return x * 2 + 1; }
static inline int n_inline(int x) { return n_leaf(x) + (int)strlen("ab") + abs(x); }
static void n_frees(void *p) { free(p); }
static int n_rec(int x) { return x ? n_rec(x - 1) + __builtin_popcount(x) : 0; }
static int n_mutual_a(int x);
static int n_mutual_b(int x) { return x ? n_mutual_a(x - 1) : 0; }
static int n_mutual_a(int x) { return x ? (n_mutual_b)(x - 1) : 1; }
static void *f_alloc(size_t n) { return malloc(n); }
static void *f_indirect(size_t n) { return n_leaf((int)n) ? f_alloc(n) : 0; }
static void f_extern(void) { undefined_here(); }
static void n_global(void) { elsewhere(); }
static void f_printf(int x) { printf("%d\n", x); }
static int f_fnptr(int (*g)(int)) { return g(1); }
static int f_setjmp(void) { return setjmp(jb); }
static int f_rec_alloc(int x) { if (!x) { free(malloc(1)); return 0; } return f_rec_alloc(x - 1); }
static int f_top(int x) { return f_rec_alloc(x) + n_inline(x); }
int main(void)
{
	void *p = f_indirect(4);
	n_frees(p);
	f_extern();
	n_global();
	f_printf(n_mutual_a(3) + n_rec(3));
	return f_fnptr(n_leaf) + f_setjmp() + f_top(2);
}
void elsewhere(void) {}
`

func TestFrames(t *testing.T) {
	src := filepath.Join(t.TempDir(), "frames.c")
	if err := os.WriteFile(src, []byte(framesSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, policy := range []Frames{FramesAuto, FramesAll} {
		res := weaveFileFrames(t, src, policy)
		var frameless, siteFrames []string
		for _, f := range res.Functions {
			if f.Frameless {
				frameless = append(frameless, f.Name)
			}
			if f.SiteFrames {
				siteFrames = append(siteFrames, f.Name)
			}
		}
		slices.Sort(frameless)
		want, wantSite := []string(nil), []string(nil)
		if policy == FramesAuto {
			// elsewhere is defined after its caller, and extern: still a
			// function of this unit, and a leaf. f_alloc is an allocation
			// leaf: frameless, its site makes its frame.
			want = []string{"elsewhere", "f_alloc", "n_frees", "n_global", "n_inline", "n_leaf", "n_mutual_a", "n_mutual_b", "n_rec"}
			wantSite = []string{"f_alloc"}
		}
		if !slices.Equal(frameless, want) || !slices.Equal(siteFrames, wantSite) {
			t.Errorf("%v: frameless %v (allocation leaves %v), want %v (%v)", policy, frameless, siteFrames, want, wantSite)
		}
		if n := bytes.Count(res.Text, []byte("__WEAVE_SITE_FRAME, ")); n != len(wantSite) {
			t.Errorf("%v: %d sites with __WEAVE_SITE_FRAME, want %d", policy, n, len(wantSite))
		}
	}
}

func TestParseFrames(t *testing.T) {
	for s, want := range map[string]Frames{"": FramesAuto, "auto": FramesAuto, "all": FramesAll, "unit": FramesUnit} {
		if got, err := ParseFrames(s); err != nil || got != want {
			t.Errorf("ParseFrames(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseFrames("some"); err == nil {
		t.Error("ParseFrames(some): no error")
	}
}

// TestFramesExtern: what Options.Extern says about functions of other
// units decides their callers' frames, and the unit's Summary says what
// other units need about its own functions of external linkage.
func TestFramesExtern(t *testing.T) {
	src := filepath.Join(t.TempDir(), "api.c")
	if err := os.WriteFile(src, []byte(`#include <stdlib.h>
extern int ext1(int);
extern int ext2(int);
static int s_helper(int x) { return ext1(x) + 1; }
int api_calls(int x) { return s_helper(x) + ext2(x); }
int api_leaf(int x) { return x * 2; }
void *api_alloc(int n) { return malloc(n); }
int api_ptr(int (*g)(int)) { return g(1); }
static int s_only(int x) { return ext1(x); }
int api_static(int x) { return s_only(x) + api_leaf(x); }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		extern    map[string]bool
		frameless []string
	}{
		{nil, []string{"api_alloc", "api_leaf"}},
		{map[string]bool{"ext1": false}, []string{"api_alloc", "api_leaf", "api_static", "s_helper", "s_only"}},
		{map[string]bool{"ext1": false, "ext2": false}, []string{"api_alloc", "api_calls", "api_leaf", "api_static", "s_helper", "s_only"}},
		{map[string]bool{"ext1": true, "ext2": false}, []string{"api_alloc", "api_leaf"}},
	} {
		res := weaveFileOpts(t, src, Options{Extern: c.extern})
		var frameless []string
		for _, f := range res.Functions {
			if f.Frameless {
				frameless = append(frameless, f.Name)
			}
		}
		slices.Sort(frameless)
		if !slices.Equal(frameless, c.frameless) {
			t.Errorf("Extern %v: frameless %v, want %v", c.extern, frameless, c.frameless)
		}
		want := Summary{
			"api_calls":  {Calls: []string{"ext1", "ext2"}},
			"api_leaf":   {},
			"api_alloc":  {Allocs: true},
			"api_ptr":    {Allocs: true},
			"api_static": {Calls: []string{"ext1"}},
		}
		if !reflect.DeepEqual(res.Summary, want) {
			t.Errorf("Extern %v: summary %v, want %v", c.extern, res.Summary, want)
		}
	}
	if res := weaveFileOpts(t, src, Options{Frames: FramesAll}); res.Summary != nil {
		t.Errorf("--frames=all: summary %v, want none", res.Summary)
	}
}

// TestResolve: a function may allocate iff it allocates or calls one that
// may, through chains of summaries of several units; unknown functions
// may; cycles without an allocation do not; of two summaries of one name,
// the one that allocates wins.
func TestResolve(t *testing.T) {
	got := Resolve([]Summary{
		{"a": {Calls: []string{"b"}}, "k": {Calls: []string{"unknown"}}, "p": {Calls: []string{"q"}}},
		{"b": {Calls: []string{"c"}}, "q": {Calls: []string{"p"}}, "r": {Calls: []string{"p", "alloc"}}},
		{"c": {}, "alloc": {Allocs: true}, "dup": {}, "top": {Calls: []string{"k"}}},
		{"dup": {Allocs: true}},
	})
	want := map[string]bool{"a": false, "b": false, "c": false, "k": true, "p": false, "q": false,
		"r": true, "alloc": true, "dup": true, "top": true}
	if !maps.Equal(got, want) {
		t.Errorf("Resolve = %v, want %v", got, want)
	}
}

// coldSrc has a function for each way a call is cold.
const coldSrc = `#include <stdlib.h>
#include <stdio.h>
#include <assert.h>
#define unlikely(x) __builtin_expect(!!(x), 0)
#define likely(x) __builtin_expect(!!(x), 1)
extern void die(const char *) __attribute__((noreturn));
extern _Noreturn void die11(int);
__attribute__((cold)) extern void warn_rare(int);
extern int ext(int);
static void *mk(size_t n) { void *p = malloc(n); if (!p) die("oom"); return p; }
static int c_noreturn(int x) { if (x < 0) die("neg"); return x * 2; }
static int c_noreturn11(int x) { if (x < 0) die11(x); return x * 2; }
static int c_cold(int x) { if (x > 100) warn_rare(x); return x; }
static int c_unlikely(int x) { if (unlikely(x > 1000)) { printf("%d\n", x); free(mk(4)); } return x; }
static int c_likely_else(int x) { if (likely(x < 10)) return x; else return ext(x); }
static int c_or(int x) { return likely(x > 0) || ext(x); }
static int c_and(int x) { return unlikely(x > 5) && ext(x); }
static int c_ternary(int x) { return unlikely(x == 3) ? ext(x) : x; }
static int c_args(int x) { if (x == 7) die(mk(8)); return x; }
static int c_assert(int x) { assert(x != 12345); return x + 1; }
static int f_hot(int x) { if (x > 100) printf("%d\n", x); return ext(x); }
static int f_likely(int x) { for (int i = 0; i < x; i++) if (likely(x > 1000)) printf("%d\n", i); return x; }
static int f_label(int x) { again: if (x-- > 0) { printf("%d\n", x); goto again; } return x; }
static int c_one(int x) { if (x > 100) printf("%d\n", x); return x; }
static int c_one_macro(int x) { do { if (x > 100) ext(x); } while (0); return x; }
static int c_paths(int x) { if (x > 100) return ext(x); else if (x < -100) { printf("%d\n", x); return 0; } return x; }
static int f_paths(int x) { if (x > 100) { if (x > 200) ext(x); } else printf("%d\n", x); return ext(x + 1); }
static int f_ptr(int (*g)(int), int x) { if (unlikely(x < 0)) die("neg"); return g(x) + ext(x); }
static int f_ptr_cold(int (*g)(int), int x) { if (unlikely(x < 0)) printf("%d\n", x); return g(x); }
static int c_ptr(int (*g)(int), int x) { return g(x); }
int main(int argc, char **argv)
{
	(void)argv;
	free(mk(1));
	return c_noreturn(argc) + c_noreturn11(argc) + c_cold(argc) + c_unlikely(argc) + c_likely_else(argc) +
	       c_or(argc) + c_and(argc) + c_ternary(argc) + c_args(argc) + c_assert(argc) + f_hot(argc) +
	       f_likely(argc) + f_label(argc) + c_one(argc) + c_one_macro(argc) + c_paths(argc) + f_paths(argc) + f_ptr(c_cold, argc) + f_ptr_cold(c_cold, argc) + c_ptr(ext, argc);
}
`

// TestFramesCold: a function whose only calls that may allocate are on
// cold paths (a noreturn or cold callee with its arguments, a branch that
// __builtin_expect marks unlikely), but for at most one outside loops, is
// framed at its calls, not at entry; more such calls on a hot path, or a
// pointer's call on a hot path (which would push on every activation),
// keep the frame at entry.
func TestFramesCold(t *testing.T) {
	src := filepath.Join(t.TempDir(), "cold.c")
	if err := os.WriteFile(src, []byte(coldSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	res := weaveFileFrames(t, src, FramesAuto)
	var callFramed, framed []string
	for _, f := range res.Functions {
		switch {
		case f.CallFrames:
			callFramed = append(callFramed, f.Name)
		case !f.Frameless:
			framed = append(framed, f.Name)
		}
	}
	slices.Sort(callFramed)
	slices.Sort(framed)
	// f_ptr has a hot call of ext; f_ptr_cold's pointer call would push
	// its frame on every activation anyway. c_ptr's only call is a
	// pointer's.
	// c_one and c_one_macro make one call that may allocate, outside
	// loops, c_paths two, each on its own way out: framed at them, they
	// push at most once an activation. f_hot and f_paths make two on one
	// path, f_likely's is in a loop, f_label's after a label.
	wantCalls := []string{"c_and", "c_args", "c_assert", "c_cold", "c_likely_else", "c_noreturn", "c_noreturn11", "c_one", "c_one_macro", "c_or", "c_paths", "c_ptr", "c_ternary", "c_unlikely"}
	wantFramed := []string{"f_hot", "f_label", "f_likely", "f_paths", "f_ptr", "f_ptr_cold", "main", "mk"}
	if !slices.Equal(callFramed, wantCalls) || !slices.Equal(framed, wantFramed) {
		t.Errorf("framed at their calls %v, want %v\nframed at entry %v, want %v", callFramed, wantCalls, framed, wantFramed)
	}
	// Each cold call is framed where it is made: die in c_noreturn, the
	// printf and the call of mk in c_unlikely, die and mk in c_args.
	text := string(res.Text)
	for _, fn := range []string{"c_noreturn", "c_unlikely", "c_args"} {
		i := strings.Index(text, "static int "+fn+"(")
		j := strings.Index(text[i+1:], "\nstatic ") + 1 // the functions are one line each
		if i < 0 || j < 1 || !strings.Contains(text[i:i+j], "__weave_enter") && !thunkFramed(text, text[i:i+j]) {
			t.Errorf("%s: no frame pushed around its cold calls:\n%s", fn, text[max(i, 0):max(i, 0)+max(j, 0)])
		}
		// die(mk(8)): mk runs inside die's frame, pushed once (pushed
		// again, it would show c_args twice in mk's chain).
		if n := strings.Count(text[i:i+j], "__weave_enter"); fn == "c_args" && n != 1 {
			t.Errorf("c_args: %d frames pushed, want 1 around die(mk(8)):\n%s", n, text[i:i+j])
		}
	}
}

// thunkFramed reports whether fn (a function's woven text) calls a call
// thunk (thunks.go) whose definition in text pushes a frame.
func thunkFramed(text, fn string) bool {
	for _, m := range regexp.MustCompile(`__weave_t\d+\(`).FindAllString(fn, -1) {
		def := regexp.MustCompile(`\) ` + regexp.QuoteMeta(m) + `(__typeof__|void).*\n`).FindString(text)
		return strings.Contains(def, "__weave_enter")
	}
	return false
}

// TestFramesKept: a function framed at its calls that one run may make
// several of (one in a loop, two on one path) and every run makes one of
// has a guard at its entry that pushes nothing, pushed by the first of
// those calls that runs (Kept); one that makes at most one a run, or
// whose runs may make none (c_loop's loop may not run), keeps a frame
// around each.
func TestFramesKept(t *testing.T) {
	src := filepath.Join(t.TempDir(), "kept.c")
	if err := os.WriteFile(src, []byte(`#include <stdlib.h>
static int k_loop(int (*g)(int), int n) { int s = 0, i = 0; do s += g(i); while (++i < n); return s; }
static int k_ever(int (*g)(int), int n) { int s = 0; for (;;) { s += g(n); if (--n <= 0) break; } return s; }
static int c_loop(int (*g)(int), int n) { int s = 0; for (int i = 0; i < n; i++) s += g(i); return s; }
static int k_two(int (*g)(int), int x) { int a = g(x); return a + g(a); }
static int k_local(int (*g)(int), int x) { return k_two(g, x) + k_two(g, x + 1); }
static int c_one(int (*g)(int), int x) { return x > 0 ? g(x) : 0; }
static int c_paths(int (*g)(int), int x) { if (x > 0) return k_two(g, x); return k_loop(g, x); }
static int f(int x) { return (int)(size_t)malloc((size_t)x); }
int main(int argc, char **argv)
{
	(void)argv;
	return k_loop(f, argc) + k_ever(f, argc) + c_loop(f, argc) + k_local(f, argc) + c_one(f, argc) + c_paths(f, argc);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := weaveFileFrames(t, src, FramesAuto)
	var kept, calls []string
	for _, f := range res.Functions {
		switch {
		case f.Kept && f.CallFrames:
			kept = append(kept, f.Name)
		case f.CallFrames:
			calls = append(calls, f.Name)
		}
	}
	slices.Sort(kept)
	slices.Sort(calls)
	if want := []string{"k_ever", "k_local", "k_loop", "k_two", "main"}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v", kept, want)
	}
	if want := []string{"c_loop", "c_one", "c_paths"}; !slices.Equal(calls, want) {
		t.Errorf("framed at each call %v, want %v", calls, want)
	}
	text := string(res.Text)
	for _, fn := range []string{"k_loop", "k_ever", "k_two", "c_loop", "c_one"} {
		i := strings.Index(text, "static int "+fn+"(")
		j := strings.Index(text[i+1:], "\nstatic ") + 1
		body := text[i : i+j]
		entry := strings.Contains(body, "= __weave_no_frame();")
		once := strings.Count(body, "if (!__weave_pushed")
		if kept := fn[0] == 'k'; entry != kept || (once > 0) != kept || strings.Contains(body, "__weave_c") == kept {
			t.Errorf("%s (kept %v): guard at entry %v, %d pushes if not pushed:\n%s", fn, kept, entry, once, body)
		}
	}
}

// TestFramesPending: a call of a function declared in the program's own
// text that the frame store does not know yet (a unit compiled later) is
// framed where it is made, not at its caller's entry, unless it is in a
// loop; the C library's (a system header's declaration) and a known
// allocating one keep the entry frame; a known non-allocating one none.
func TestFramesPending(t *testing.T) {
	src := filepath.Join(t.TempDir(), "pending.c")
	if err := os.WriteFile(src, []byte(`#include <stdio.h>
extern int pend(int);
static int p_some(int x) { if (x > 0) return pend(x) + pend(x + 1); return 0; }
static int p_two(int x) { int a = x > 0 ? pend(x) : 0; return a + pend(a); }
static int p_loop(int n) { int s = 0; for (int i = 0; i < n; i++) s += pend(i); return s; }
static int s_some(int x) { if (x > 0) return puts("a") + puts("b"); return 0; }
int main(int argc, char **argv)
{
	(void)argv;
	return p_some(argc) + p_two(argc) + p_loop(argc) + s_some(argc);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		extern                        map[string]bool
		entry, calls, kept, frameless []string
	}{
		{nil, []string{"main", "p_loop", "s_some"}, []string{"p_some"}, []string{"p_two"}, nil},
		{map[string]bool{"pend": true}, []string{"main", "p_loop", "p_some", "p_two", "s_some"}, nil, nil, nil},
		{map[string]bool{"pend": false}, []string{"s_some"}, []string{"main"}, nil, []string{"p_loop", "p_some", "p_two"}},
	} {
		res := weaveFileOpts(t, src, Options{Extern: c.extern})
		var entry, calls, kept, frameless []string
		for _, f := range res.Functions {
			switch {
			case f.Frameless && !f.CallFrames:
				frameless = append(frameless, f.Name)
			case f.Kept && f.CallFrames:
				kept = append(kept, f.Name)
			case f.CallFrames:
				calls = append(calls, f.Name)
			default:
				entry = append(entry, f.Name)
			}
		}
		for _, l := range [][]string{entry, calls, kept, frameless} {
			slices.Sort(l)
		}
		if !slices.Equal(entry, c.entry) || !slices.Equal(calls, c.calls) || !slices.Equal(kept, c.kept) || !slices.Equal(frameless, c.frameless) {
			t.Errorf("Extern %v: at entry %v, at each call %v, kept %v, frameless %v; want %v, %v, %v, %v",
				c.extern, entry, calls, kept, frameless, c.entry, c.calls, c.kept, c.frameless)
		}
	}
}
