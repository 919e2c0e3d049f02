package weave

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
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
