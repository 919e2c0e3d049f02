package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// allocProfile is what a profile says about memory: every table built from
// the allocation call chains, whole chains, by call site; without the call
// counts of the functions named in frameless, which are not counted, and
// without the mark of counts made at calls (the frame policy's), and
// without the leak kinds of the exit scan, which is conservative: a
// pointer left in a register or stack slot of the other build's code
// makes a block reachable.
func allocProfile(t *testing.T, prof string, frameless map[string]bool) string {
	t.Helper()
	r := mustRun(t, "", nil, weaveBin, "report", "--format", "json", "--depth", "0", "--sites",
		"--tables", "leaks,bins,direct,graph", prof)
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	// A cycle of the call graph with such a member has its counts
	// changed too (its recursive calls), and the arcs into it.
	if graph, ok := rep["graph"].([]any); ok {
		frameless = maps.Clone(frameless)
		for _, e := range graph {
			e, _ := e.(map[string]any)
			members, _ := e["members"].([]any)
			for _, m := range members {
				if m, ok := m.(map[string]any); ok && frameless[fmt.Sprint(m["name"])] {
					frameless[fmt.Sprint(e["name"])] = true
				}
			}
		}
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "leak_kinds")
			delete(x, "kind")
			delete(x, "calls_at_calls") // how a count was made, which the frame policy decides
			if name, ok := x["name"].(string); ok && frameless[name] {
				callers, _ := x["callers"].([]any) // the arcs into it
				for _, m := range append(callers, x) {
					if m, ok := m.(map[string]any); ok {
						delete(m, "calls")
						delete(m, "recursive_calls")
						delete(m, "total_calls")
						delete(m, "calls_not_counted")
					}
				}
			}
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	// The leaks by chain, whatever their kind.
	byChain := map[string]map[string]float64{}
	leaks, _ := rep["leaks"].([]any)
	for _, l := range leaks {
		l, _ := l.(map[string]any)
		chain, _ := json.Marshal(l["chain"])
		sum := byChain[string(chain)]
		if sum == nil {
			sum = map[string]float64{}
			byChain[string(chain)] = sum
		}
		for _, k := range []string{"blocks_kept", "bytes_kept"} {
			v, _ := l[k].(float64)
			sum[k] += v
		}
	}
	rep["leaks"] = byChain
	var b strings.Builder
	for _, k := range []string{"totals", "leaks", "bins", "direct", "graph"} {
		strip(rep[k])
		j, _ := json.Marshal(rep[k])
		b.WriteString(k + " " + string(j) + "\n")
	}
	return b.String()
}

// framelessLine matches weave -v's lines for the functions whose calls
// are not all counted: frameless, or framed at their calls.
var framelessLine = regexp.MustCompile(`(?m)^weave: \S+:\d+: (\S+) (?:frameless|framed at its calls): `)

// TestFramesChains builds the test programs with --frames=auto and
// --frames=all: the allocation chains, totals and leaks must be the same,
// and the auto build must leave some functions frameless and say how many
// in the profile (the report's header).
func TestFramesChains(t *testing.T) {
	testtool.Need(t, "gcc")
	for _, p := range programs {
		p := p
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			profs := map[string]string{}
			for _, policy := range []string{"auto", "all"} {
				exe := filepath.Join(dir, p.name+"."+policy)
				args := []string{weaveBin, "cc", "--frames=" + policy, "-O2"}
				for _, s := range p.srcs {
					abs, _ := filepath.Abs(filepath.Join("../../testdata", s))
					args = append(args, abs)
				}
				mustRun(t, dir, []string{"WEAVE_CC=gcc"}, append(args, "-o", exe)...)
				profs[policy] = filepath.Join(dir, policy+".prof")
				run(t, dir, []string{"WEAVE_OUT=" + profs[policy]}, append([]string{exe}, p.args...)...)
			}
			frameless := map[string]bool{}
			for _, src := range p.srcs {
				abs, _ := filepath.Abs(filepath.Join("../../testdata", src))
				v := mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "-v", "-o", filepath.Join(dir, "w.c"), abs)
				for _, m := range framelessLine.FindAllStringSubmatch(v.stderr, -1) {
					frameless[m[1]] = true
				}
			}
			if auto, all := allocProfile(t, profs["auto"], frameless), allocProfile(t, profs["all"], frameless); auto != all {
				t.Errorf("--frames=auto changes the allocation profile:\nauto:\n%s\nall:\n%s", auto, all)
			}
			head := mustRun(t, "", nil, weaveBin, "report", profs["auto"]).stdout
			headAll := mustRun(t, "", nil, weaveBin, "report", profs["all"]).stdout
			if strings.Contains(headAll, "frameless") {
				t.Errorf("--frames=all report mentions frameless functions:\n%s", headAll)
			}
			first, _ := filepath.Abs(filepath.Join("../../testdata", p.srcs[0]))
			v := mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "-v", "-o", filepath.Join(dir, "w.c"), first)
			n := strings.Count(v.stderr, " frameless: ")
			if p.name == "fnptrs" && !strings.Contains(v.stderr, "via framed at its calls: ") {
				t.Errorf("weave -v does not list via as framed at its calls:\n%s", v.stderr)
			}
			if c := strings.Count(v.stderr, " framed at its calls: "); c > 0 && len(p.srcs) == 1 && !strings.Contains(head, plural(c, "function")+" framed at their calls") {
				t.Errorf("weave -v lists %d functions framed at their calls, the report says:\n%s", c, head)
			}
			if p.name == "widgets" && n != 2 { // random_flip, consume_widget
				t.Errorf("weave -v lists %d frameless functions in widgets.c, want 2:\n%s", n, v.stderr)
			}
			if n > 0 && len(p.srcs) == 1 && !strings.Contains(head, plural(n, "function")+" frameless") {
				t.Errorf("weave -v lists %d frameless functions, the report says:\n%s", n, head)
			}
		})
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// TestFramesAcrossUnits: weave cc's frame store. b.c's helpers call a.c's
// functions; compiled one by one as make does, b.c compiled before a.c
// keeps b_sum's frame (a.c's summary is not in the store yet), b.c
// compiled again after it leaves b_sum, which only calls a.c's leaf,
// frameless; --frames=unit ignores the store. The allocation profile
// (chains, totals, leaks) is the same as with --frames=all.
func TestFramesAcrossUnits(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.c", `#include <stdlib.h>
int a_leaf(int x) { return x * 3 + 1; }
char *a_make(int n) { char *p = malloc(n); if (p) p[0] = 0; return p; }
`)
	write("b.c", `#include <stdio.h>
#include <stdlib.h>
int a_leaf(int);
char *a_make(int);
static __attribute__((noinline)) int b_sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += a_leaf(i); return s; }
static __attribute__((noinline)) char *b_build(int n) { return a_make(n); }
static char *keep;
int main(void)
{
	int s = b_sum(10);
	for (int i = 0; i < 5; i++) {
		char *p = b_build(16 + i);
		if (i == 4)
			keep = p;
		else
			free(p);
	}
	keep = 0; /* leaked */
	printf("%d\n", s);
	return 0;
}
`)
	env := []string{"WEAVE_CC=gcc"}
	cc := func(args ...string) { mustRun(t, dir, env, append([]string{weaveBin, "cc", "-O2"}, args...)...) }
	header := func(exe string) (string, string) {
		prof := filepath.Join(dir, exe+".prof")
		r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, filepath.Join(dir, exe))
		if r.stdout != "145\n" {
			t.Fatalf("%s prints %q, want 145", exe, r.stdout)
		}
		return mustRun(t, "", nil, weaveBin, "report", prof).stdout, prof
	}
	cc("-c", "b.c")
	cc("-c", "a.c")
	cc("a.o", "b.o", "-o", "first")
	if h, _ := header("first"); !strings.Contains(h, "2 functions frameless") {
		t.Errorf("b.c before a.c: want 2 frameless (a_leaf, a_make), report:\n%s", h)
	}
	cc("-c", "b.c")
	cc("a.o", "b.o", "-o", "second")
	h, profAuto := header("second")
	if !strings.Contains(h, "3 functions frameless") {
		t.Errorf("b.c after a.c: want 3 frameless (a_leaf, a_make, b_sum), report:\n%s", h)
	}
	cc("--frames=unit", "-c", "b.c")
	cc("a.o", "b.o", "-o", "unit")
	if h, _ := header("unit"); !strings.Contains(h, "2 functions frameless") {
		t.Errorf("--frames=unit: want 2 frameless, report:\n%s", h)
	}
	cc("--frames=all", "a.c", "b.c", "-o", "all")
	_, profAll := header("all")
	frameless := map[string]bool{"a_leaf": true, "a_make": true, "b_sum": true}
	if auto, all := allocProfile(t, profAuto, frameless), allocProfile(t, profAll, frameless); auto != all {
		t.Errorf("the frame store changes the allocation profile:\nauto:\n%s\nall:\n%s", auto, all)
	}
	// --frame a_leaf (weave.conf) frames a_leaf alone, whichever unit
	// calls it: its 10 calls are counted, b_sum stays frameless (the
	// store says a_leaf cannot allocate), the allocations do not change.
	write("weave.conf", "frame a_leaf\n")
	cc("-c", "a.c")
	cc("-c", "b.c")
	cc("a.o", "b.o", "-o", "forced")
	h, profForced := header("forced")
	if !strings.Contains(h, "2 functions frameless") || forcedCalls(t, profForced) != 10 {
		t.Errorf("--frame a_leaf: want a_leaf's 10 calls, 2 frameless (a_make, b_sum), report:\n%s", h)
	}
	if forced, all := allocProfile(t, profForced, frameless), allocProfile(t, profAll, frameless); forced != all {
		t.Errorf("--frame changes the allocation profile:\nforced:\n%s\nall:\n%s", forced, all)
	}
	// A program compiled and linked in one command (its link started
	// early, driver/earlylink.go) saves its unit's summary too: a.c's
	// functions in a program of their own, built first in another
	// directory, leave b_sum frameless.
	dir = t.TempDir()
	a, _ := os.ReadFile(filepath.Join(filepath.Dir(profAll), "a.c"))
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(profAll), "b.c"))
	write("amain.c", string(a)+"int main(void) { char *p = a_make(4); free(p); return a_leaf(1) != 4; }\n")
	write("a.c", string(a))
	write("b.c", string(b))
	mustRun(t, dir, append(env, "WEAVE_CACHE=off"), weaveBin, "cc", "-O2", "amain.c", "-o", "aprog") // compiled, not from a cache
	cc("-c", "b.c")
	cc("-c", "a.c")
	cc("a.o", "b.o", "-o", "onestep")
	if h, _ := header("onestep"); !strings.Contains(h, "3 functions frameless") {
		t.Errorf("b.c after a one-step build of a.c's functions: want 3 frameless (a_leaf, a_make, b_sum), report:\n%s", h)
	}
}

// forcedCalls returns a_leaf's calls in a profile.
func forcedCalls(t *testing.T, prof string) int {
	t.Helper()
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	return calls(p, "a_leaf")
}

// TestFramesSiteCache: the x86-64 guard's site caches (weave.h) hand out
// a node only when it is the current node's child. testdata/frames/
// sitecache.c enters c from two parents in turn, mid inlined into a and
// b (a guard each), and rec from work and from itself, folded to an
// ancestor past two levels, on one thread and then on two, and prints its
// own count of each arc: the profile's graph must have the same. Under
// clang too where it is installed.
func TestFramesSiteCache(t *testing.T) {
	testtool.Need(t, "gcc")
	src, _ := filepath.Abs("../../testdata/frames/sitecache.c")
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			exe := filepath.Join(dir, "sc")
			mustRun(t, dir, []string{"WEAVE_CC=" + cc}, weaveBin, "cc", "-O2", src, "-o", exe, "-lpthread")
			for _, threads := range []string{"0", "1"} {
				siteCacheArcs(t, dir, exe, threads)
			}
		})
	}
}

// siteCacheArcs runs sitecache.c's exe with threads and compares the arcs
// it counted with its profile's.
func siteCacheArcs(t *testing.T, dir, exe, threads string) {
	prof := filepath.Join(dir, "sc"+threads+".prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe, threads)
	var rep struct {
		Graph []struct {
			Name           string
			Calls          uint64
			RecursiveCalls uint64 `json:"recursive_calls"`
			Callees        []struct {
				Name  string
				Calls uint64
			}
		}
	}
	j := mustRun(t, "", nil, weaveBin, "report", "--format", "json", "--depth", "0", "--tables", "graph", prof)
	if err := json.Unmarshal([]byte(j.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	arcs := map[string]uint64{}
	for _, g := range rep.Graph {
		arcs[g.Name+" "+g.Name] = g.RecursiveCalls
		for _, c := range g.Callees {
			arcs[g.Name+" "+c.Name] += c.Calls
		}
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 8 {
		t.Fatalf("threads %s: the program printed %q", threads, r.stdout)
	}
	for _, l := range lines {
		i := strings.LastIndexByte(l, ' ')
		want, _ := strconv.ParseUint(l[i+1:], 10, 64)
		if want == 0 || arcs[l[:i]] != want {
			t.Errorf("threads %s: arc %s: the program counted %d calls, the profile %d", threads, l[:i], want, arcs[l[:i]])
		}
	}
}

// TestIntelAsm: with -masm=intel the woven code and the runtime build
// (the guards use weave.h's C fast paths: its x86-64 ones are AT&T
// syntax), and the frames are there.
func TestIntelAsm(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "i.c")
	if err := os.WriteFile(src, []byte(`#include <stdlib.h>
static __attribute__((noinline)) void *mk(int n) { return malloc(n); }
int main(void) { void *p = mk(10); free(p); return p == 0; }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, prof := filepath.Join(dir, "i"), filepath.Join(dir, "i.prof")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--frames=all", "-O2", "-masm=intel", src, "-o", exe)
	mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe)
	r := mustRun(t, "", nil, weaveBin, "report", "--format", "json", prof)
	if !strings.Contains(r.stdout, `"mk"`) {
		t.Errorf("no frame of mk in the profile:\n%s", r.stdout)
	}
}

// objectFuncs lists the functions object file obj defines, but weave's
// own, and (space-separated) the symbols it leaves undefined (nm).
func objectFuncs(t *testing.T, obj string) (own []string, undef string) {
	t.Helper()
	for _, l := range strings.Split(mustRun(t, "", nil, "nm", obj).stdout, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "U":
			undef += f[1] + " "
		case len(f) == 3 && strings.ContainsAny(f[1], "tT") && !strings.HasPrefix(f[2], "__weave"):
			own = append(own, f[2])
		}
	}
	return own, undef
}

// TestFramesInlining: the guard of a framed function does not change the
// compiler's inlining decisions. testdata/frames/inline.c has a small
// framed helper (label: it calls a function of another unit), an
// allocation leaf and a frameless leaf, which gcc -O2 inlines, and a
// noinline one; functions framed at their calls of other units'
// functions, which take them through thunks (weave/thunks.go): Lua's
// lessthanothers, which gcc inlines at its limit, and one with a cold
// noreturn call. The woven object must define the same functions of the
// program as the plain one, and still frame label (its guard's calls of
// the runtime are there); under gcc, gcc's estimate of the size of each
// of the functions framed at their calls must be the plain one's. Under
// clang too where it is installed.
func TestFramesInlining(t *testing.T) {
	testtool.Need(t, "gcc", "nm")
	src, _ := filepath.Abs("../../testdata/frames/inline.c")
	funcs := func(obj string) ([]string, string) { return objectFuncs(t, obj) }
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			plain, woven := filepath.Join(dir, "plain.o"), filepath.Join(dir, "woven.o")
			mustRun(t, dir, nil, cc, "-O2", "-c", src, "-o", plain)
			mustRun(t, dir, []string{"WEAVE_CC=" + cc}, weaveBin, "cc", "-O2", "-save-temps", "-c", src, "-o", woven)
			p, _ := funcs(plain)
			w, undef := funcs(woven)
			if strings.Join(p, " ") != strings.Join(w, " ") {
				t.Errorf("woven object defines %q, the plain one %q", w, p)
			}
			if !strings.Contains(strings.Join(p, " "), "sum") {
				t.Errorf("plain object defines %q, no sum", p)
			}
			if !strings.Contains(undef, "__weave_enter") {
				t.Errorf("woven object calls no enter of the runtime (undefined: %s)", undef)
			}
			if cc != "gcc" {
				return
			}
			ps := gccSizes(t, dir, "plain", src)
			ws := gccSizes(t, dir, "woven", filepath.Join(dir, "woven.woven.i"))
			for _, f := range []string{"less_others", "checked_get"} {
				if ps[f] == 0 || ws[f] != ps[f] {
					t.Errorf("gcc's estimate of %s's size: %d woven, %d plain", f, ws[f], ps[f])
				}
			}
		})
	}
}

// gccSizes returns gcc -O2's estimates of the sizes of src's functions
// before inlining (the self sizes of -fdump-ipa-fnsummary).
func gccSizes(t *testing.T, dir, name, src string) map[string]int {
	t.Helper()
	mustRun(t, dir, nil, "gcc", "-O2", "-c", src, "-o", filepath.Join(dir, name+"-sizes.o"),
		"-fdump-ipa-fnsummary-details", "-dumpbase", name, "-dumpdir", dir+"/")
	dumps, _ := filepath.Glob(filepath.Join(dir, name+".*fnsummary"))
	if len(dumps) != 1 {
		t.Fatalf("gcc's fnsummary dump: %v", dumps)
	}
	b, err := os.ReadFile(dumps[0])
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{}
	re := regexp.MustCompile(`(?m)^IPA function summary for ([\w.]+)/\d+.*\n(?:\s+.*\n)*?\s+self size:\s+(\d+)`)
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		if _, ok := sizes[m[1]]; !ok {
			sizes[m[1]], _ = strconv.Atoi(m[2])
		}
	}
	return sizes
}

// TestFramesGuardFS: the x86-64 guards that get the thread's offset from
// the GOT with __builtin_thread_pointer (weave.h's _x64 entry points, for
// code compiled with -fPIC), from %fs:0 (_fsx64, which gcc 9 and 10 and
// clang 11 to 13 get there) and from the GOT in the asm (_iex64, a -c
// compile's with the compiler's defaults) behave as the local-exec one
// (_lex64, an executable's): forced here by renaming the entry points in
// gcc's woven text, testdata/widgets.c gives the unwoven program's output
// and the _lex64 build's allocation chains, and frames/inline.c's object
// still defines the plain object's functions and calls the asm's stub.
// Under clang-13 too (.ci/run installs it), which gets it from weave cc
// itself.
func TestFramesGuardFS(t *testing.T) {
	testtool.Need(t, "gcc", "nm")
	dir := t.TempDir()
	rename := func(woven, out, suffix string) {
		b, err := os.ReadFile(filepath.Join(dir, woven))
		if err != nil {
			t.Fatal(err)
		}
		n := bytes.Count(b, []byte("= __weave_enter_lex64("))
		for _, f := range []string{"= __weave_enter%s(", "cleanup(__weave_leave%s)", "__weave_enter_ptr%s(&"} {
			b = bytes.ReplaceAll(b, []byte(fmt.Sprintf(f, "_lex64")), []byte(fmt.Sprintf(f, suffix)))
		}
		if n == 0 {
			t.Fatalf("%s: no _lex64 guard to rename", woven)
		}
		if err := os.WriteFile(filepath.Join(dir, out), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	widgets, _ := filepath.Abs("../../testdata/widgets.c")
	inline, _ := filepath.Abs("../../testdata/frames/inline.c")
	env := []string{"WEAVE_CC=gcc"}
	mustRun(t, dir, env, weaveBin, "-o", "w.woven.c", widgets, "-O2", "-fPIE") // for an executable: _lex64
	mustRun(t, dir, env, weaveBin, "runtime", "-o", "rt.c")
	mustRun(t, dir, nil, "gcc", "-O2", "-c", "rt.c")
	rename("w.woven.c", "w.fs.c", "_fsx64")
	rename("w.woven.c", "w.x64.c", "_x64")
	rename("w.woven.c", "w.iex64.c", "_iex64")
	mustRun(t, dir, nil, "gcc", "-O2", "w.woven.c", "rt.o", "-o", "lex64", "-lpthread", "-ldl")
	mustRun(t, dir, nil, "gcc", "-O2", "w.x64.c", "rt.o", "-o", "x64", "-lpthread", "-ldl")
	mustRun(t, dir, nil, "gcc", "-O2", "w.fs.c", "rt.o", "-o", "fs", "-lpthread", "-ldl")
	mustRun(t, dir, nil, "gcc", "-O2", "w.iex64.c", "rt.o", "-o", "iex64", "-lpthread", "-ldl")
	mustRun(t, dir, nil, "gcc", "-O2", widgets, "-o", "plain")
	want := run(t, dir, nil, "./plain", "20000")
	chains := map[string]string{}
	for _, bin := range []string{"lex64", "x64", "fs", "iex64"} {
		prof := filepath.Join(dir, bin+".prof")
		got := run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TIME=off"}, "./"+bin, "20000")
		sameRun(t, bin, want, got)
		chains[bin] = mustRun(t, dir, nil, weaveBin, "report", "--format", "folded", prof).stdout
	}
	for _, bin := range []string{"x64", "fs", "iex64"} {
		if chains[bin] != chains["lex64"] || chains[bin] == "" {
			t.Errorf("allocation chains with the %s guard:\n%s\nwith the _lex64 one:\n%s", bin, chains[bin], chains["lex64"])
		}
	}
	mustRun(t, dir, env, weaveBin, "-o", "i.woven.c", inline, "-O2", "-fPIE")
	rename("i.woven.c", "i.fs.c", "_fsx64")
	mustRun(t, dir, nil, "gcc", "-O2", "-c", inline, "-o", "plain.o")
	mustRun(t, dir, nil, "gcc", "-O2", "-c", "i.fs.c", "-o", "fs.o")
	nmFuncs := func(obj string) (string, string) {
		own, undef := objectFuncs(t, filepath.Join(dir, obj))
		return strings.Join(own, " "), undef
	}
	p, _ := nmFuncs("plain.o")
	w, undef := nmFuncs("fs.o")
	if p != w {
		t.Errorf("the %%fs:0 guard's object defines %q, the plain one %q", w, p)
	}
	if !strings.Contains(undef, "__weave_enter_stub") {
		t.Errorf("the %%fs:0 guard's object calls no asm stub (undefined: %s)", undef)
	}
	t.Run("clang-13", func(t *testing.T) {
		testtool.Need(t, "clang-13")
		mustRun(t, dir, []string{"WEAVE_CC=clang-13"}, weaveBin, "cc", "-O2", "-c", inline, "-o", "c13.o")
		w, undef := nmFuncs("c13.o")
		p, _ := nmFuncs("plain.o")
		if !strings.Contains(undef, "__weave_enter_stub") {
			t.Errorf("clang-13's woven object calls no asm stub (undefined: %s)", undef)
		}
		mustRun(t, dir, nil, "clang-13", "-O2", "-c", inline, "-o", "plain13.o")
		if p13, _ := nmFuncs("plain13.o"); p13 != w {
			t.Errorf("clang-13's woven object defines %q, its plain one %q (gcc's: %q)", w, p13, p)
		}
	})
}
