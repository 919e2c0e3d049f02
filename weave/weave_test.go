package weave

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/pseudostack"
)

// weaveFile preprocesses and weaves a file with gcc, for tests.
func weaveFile(t *testing.T, src string) *Result {
	t.Helper()
	return weaveFileFrames(t, src, FramesAuto)
}

// weaveFileFrames is weaveFile with a frame policy.
func weaveFileFrames(t *testing.T, src string, frames Frames) *Result {
	t.Helper()
	return weaveFileOpts(t, src, Options{Frames: frames})
}

// weaveFileOpts preprocesses and weaves a file with gcc under opts (the
// prologue: weave.h), for tests.
func weaveFileOpts(t *testing.T, src string, opts Options) *Result {
	t.Helper()
	var stderr bytes.Buffer
	text, err := parse.Preprocess([]string{"gcc"}, nil, src, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	u, err := parse.Parse(src+".i", text, parse.NewDialect([]string{"gcc"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	hdr := pseudostack.Header() // weave.h and the guard variants generated from it
	opts.Prologue = hdr
	res, err := Weave(u, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestWeaveWidgets weaves mprof's example: every function is found at its
// line and woven, the malloc and free calls are advised (malloc with its
// sizeof type), and each piece of advice lands on its call's own source
// line, so that line numbers survive weaving. Every function is framed
// (--frames=all).
func TestWeaveWidgets(t *testing.T) {
	const src = "../testdata/widgets.c"
	res := weaveFileFrames(t, src, FramesAll)
	wantFns := []Function{{"random_flip", src, 20, "", false, false, false, false, false}, {"make_widget", src, 26, "", false, false, false, false, false}, {"make_red_widget", src, 39, "", false, false, false, false, false},
		{"make_blue_widget", src, 41, "", false, false, false, false, false}, {"consume_widget", src, 43, "", false, false, false, false, false}, {"main", src, 50, "", false, false, false, false, false}}
	if !slices.Equal(res.Functions, wantFns) || len(res.Skipped) != 0 {
		t.Errorf("functions %+v, skipped %+v\nwant %+v", res.Functions, res.Skipped, wantFns)
	}
	wantSites := []Site{{"make_widget", "malloc", src, 28, 14, "widget", 204, "sizeof(widget)"}, {"consume_widget", "free", src, 47, 2, "", 0, ""}}
	if !slices.Equal(res.Sites, wantSites) {
		t.Errorf("sites %+v\nwant %+v", res.Sites, wantSites)
	}
	// The guard of each function on the line of its opening brace, the
	// advice on the line of the call.
	lines := func(needle string) []int {
		m := parse.NewLineMap(res.Text)
		var r []int
		for off := 0; ; off++ {
			i := bytes.Index(res.Text[off:], []byte(needle))
			if i < 0 {
				return r
			}
			off += i
			phys, _ := m.LineCol(off)
			if loc := m.Lookup(phys); loc.File == src {
				r = append(r, loc.Line)
			}
		}
	}
	if got, want := lines("(&__weave_fns_"), []int{21, 27, 39, 41, 44, 51}; !slices.Equal(got, want) {
		t.Errorf("guards on lines %v, want %v", got, want)
	}
	if got, want := lines("= __weave_malloc(&__weave_sites_"), []int{28}; !slices.Equal(got, want) {
		t.Errorf("malloc advice on lines %v, want %v", got, want)
	}
	if got, want := lines(" __weave_free(&__weave_sites_"), []int{47}; !slices.Equal(got, want) {
		t.Errorf("free advice on lines %v, want %v", got, want)
	}
}

// TestSkipReasons: functions that must stay unwoven are listed with the
// reason, wherever their attribute stands; the others are woven (with
// frames, under --frames=all). (Not musttail: neither gcc 12 nor cc/v4
// parses it.)
func TestSkipReasons(t *testing.T) {
	src := filepath.Join(t.TempDir(), "skip.c")
	if err := os.WriteFile(src, []byte(`__attribute__((no_instrument_function)) static int lead(int x) { return x; }
static int __attribute__((no_instrument_function)) mid(int x) { return x; }
__attribute__((naked)) void bare(void) { __asm__("ret"); }
inline int ext(int x) { return x; }
__attribute__((unused)) static int plain(int x) { return x; }
int main(void) { return lead(1) + mid(1) + ext(0) + plain(0); }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := weaveFileFrames(t, src, FramesAll)
	got := map[string]string{}
	for _, f := range res.Skipped {
		got[f.Name] = f.Reason
	}
	want := map[string]string{"lead": "no_instrument_function attribute", "mid": "no_instrument_function attribute",
		"bare": "naked function", "ext": "inline function with external linkage"}
	if !maps.Equal(got, want) {
		t.Errorf("skipped %v, want %v", got, want)
	}
	if n := bytes.Count(res.Text, []byte("(&__weave_fns_")); n != 2 {
		t.Errorf("%d guards, want 2 (plain and main)", n)
	}
}

// TestAdviceNames checks adviceNames's one pass, hash filter and all,
// against every identifier of a text looked up by name: on each name
// alone, beside others, in random texts of names, their pieces and
// their neighbours' bytes, and on the C files of testdata.
func TestAdviceNames(t *testing.T) {
	names := []string{swapName}
	for n := range allocOps {
		names = append(names, n)
	}
	for n := range setjmpNames {
		names = append(names, n)
	}
	ident := regexp.MustCompile(`[A-Za-z0-9_]+`)
	want := func(text []byte) []int {
		var offs []int
		for _, m := range ident.FindAllIndex(text, -1) {
			if slices.Contains(names, string(text[m[0]:m[1]])) {
				offs = append(offs, m[0])
			}
		}
		return offs
	}
	for _, n := range names {
		text := []byte("x " + n + "(1); y_" + n + "(2); " + n + "_z(3); " + n)
		if got := adviceNames(text); len(got) != 2 || got[0] != 2 || got[1] != len(text)-len(n) {
			t.Errorf("adviceNames(%q) = %v", text, got)
		}
	}
	pieces := append(slices.Clone(names), "_", "1", "x", "alloc", "mal", "loc", "free", "dup", " ", "(", "\n", "\xc3\xa9", "/*", "#")
	rng := rand.New(rand.NewPCG(33, 1))
	var texts [][]byte
	for range 2000 {
		var b []byte
		for range 1 + rng.IntN(12) {
			b = append(b, pieces[rng.IntN(len(pieces))]...)
		}
		texts = append(texts, b)
	}
	files, _ := filepath.Glob("../testdata/*.c")
	if len(files) == 0 {
		t.Fatal("no testdata/*.c")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, b)
	}
	for _, text := range texts {
		if got, w := adviceNames(text), want(text); !slices.Equal(got, w) {
			t.Fatalf("adviceNames(%.200q) = %v, want %v", text, got, w)
		}
	}
}

// TestNestedFunctions checks that GNU nested functions are woven, also
// where the enclosing body names no allocation function.
func TestNestedFunctions(t *testing.T) {
	src := filepath.Join(t.TempDir(), "nested.c")
	if err := os.WriteFile(src, []byte(`#include <stdlib.h>
int outer(int n)
{
	int inner(int k) { return k + 1; }
	return inner(n);
}
void *outer2(void)
{
	{ void *mk(void) { return malloc(4); } return mk(); }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := weaveFile(t, src)
	var fns []string
	for _, f := range res.Functions {
		fns = append(fns, f.Name)
	}
	if got := strings.Join(fns, " "); got != "outer inner outer2 mk" {
		t.Errorf("functions %q, want outer inner outer2 mk", got)
	}
	if len(res.Sites) != 1 || res.Sites[0].Func != "mk" || res.Sites[0].Line != 9 {
		t.Errorf("sites %+v, want malloc in mk at line 9", res.Sites)
	}
	if n := bytes.Count(res.Text, []byte("(&__weave_fns_")); n != 4 {
		t.Errorf("%d guards, want 4", n)
	}
}

// TestGuardVariant: under gcc on x86-64 the guards call the asm fast
// paths: the local-exec ones (_lex64) for an executable's code (no flags:
// PIE or position-dependent, whichever gcc's default), the initial-exec
// ones (_iex64) for such code that may go into a shared object (a -c
// compile), the others (_x64) under -fPIC; with PortableGuard (and on
// other targets) the C ones; with CallGuard (no optimisation) the C ones
// as calls (_call), whose locals stay out of the woven function's frame.
func TestGuardVariant(t *testing.T) {
	src := filepath.Join(t.TempDir(), "g.c")
	if err := os.WriteFile(src, []byte("int f(int x) { return x + 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hdr := pseudostack.Header() // weave.h and the guard variants generated from it
	for _, c := range []struct {
		flags                []string
		portable, calls, exe bool
		want                 string
	}{
		{nil, false, false, true, "_lex64"},
		{nil, false, false, false, "_iex64"}, // default PIE, -c or -shared: it may go into a shared object (driver's forExecutable)
		{[]string{"-fPIE"}, false, false, true, "_lex64"},
		{[]string{"-fno-pie"}, false, false, true, "_lex64"},
		{[]string{"-fPIC"}, false, false, true, "_x64"},
		{nil, true, false, true, ""},
		{nil, true, true, true, "_call"},
	} {
		var stderr bytes.Buffer
		text, err := parse.Preprocess([]string{"gcc"}, c.flags, src, &stderr)
		if err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		u, err := parse.Parse(src+".i", text, parse.NewDialect([]string{"gcc"}, c.flags))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Weave(u, Options{Prologue: hdr, Frames: FramesAll, PortableGuard: c.portable, CallGuard: c.calls, Executable: c.exe})
		if err != nil {
			t.Fatal(err)
		}
		if goruntime.GOARCH != "amd64" && !c.calls {
			c.want = ""
		}
		want := fmt.Sprintf("cleanup(__weave_leave%s), unused)) = __weave_enter%s(&", c.want, c.want)
		if !bytes.Contains(res.Text, []byte(want)) {
			t.Errorf("flags %q, PortableGuard %v, Executable %v: no %q in the woven text", c.flags, c.portable, c.exe, want)
		}
	}
}
