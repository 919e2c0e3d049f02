package weave

import (
	"bytes"
	"os"
	"path/filepath"
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
	for s, want := range map[string]Frames{"": FramesAuto, "auto": FramesAuto, "all": FramesAll} {
		if got, err := ParseFrames(s); err != nil || got != want {
			t.Errorf("ParseFrames(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseFrames("some"); err == nil {
		t.Error("ParseFrames(some): no error")
	}
}
