package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// This file tests how woven builds compose with the build tools around
// them: build systems' probes, weave's own cache of woven text, compiler
// caches (ccache, sccache), distributed compilers (distcc, icecream),
// and the compiler's own options weave must keep (-pedantic,
// -save-temps); links_test.go tests the links, dialect_test.go the text
// (-Wextra's comments, C23, warnings in macros).

// TestProbesUnwoven: configure's and CMake's probes go to the compiler
// unwoven (with weave_api.h found), the same source under another output
// name is woven.
func TestProbesUnwoven(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := ccDir(t)
	src := "#include <stdlib.h>\n#include <weave_api.h>\nint main(void) { char *p = malloc(3); free(p); return 3; }\n"
	os.WriteFile(filepath.Join(dir, "conftest.c"), []byte(src), 0o644)
	os.WriteFile(filepath.Join(dir, "src.c"), []byte(src), 0o644)
	os.MkdirAll(filepath.Join(dir, "CMakeFiles", "cmTC_1a2b.dir"), 0o755)
	env := []string{"WEAVE_CC=gcc"}
	for _, c := range []struct {
		args  []string
		out   string
		woven bool
	}{
		{[]string{"-c", "conftest.c"}, "conftest.o", false},
		{[]string{"-O2", "-o", "conftest", "conftest.c"}, "conftest", false},
		{[]string{"conftest.c"}, "a.out", false},
		{[]string{"-o", "CMakeFiles/cmTC_1a2b.dir/src.c.o", "-c", "src.c"}, "CMakeFiles/cmTC_1a2b.dir/src.c.o", false},
		{[]string{"CMakeFiles/cmTC_1a2b.dir/src.c.o", "-o", "cmTC_1a2b"}, "cmTC_1a2b", false},
		{[]string{"-O2", "-o", "prog", "conftest.c"}, "prog", true},
		{[]string{"-c", "src.c"}, "src.o", true},
	} {
		r := run(t, dir, env, append([]string{weaveBin, "cc"}, c.args...)...)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("weave cc %q: exit %d\n%s", c.args, r.code, r.stderr)
		}
		if got := isWoven(t, filepath.Join(dir, c.out)); got != c.woven {
			t.Errorf("weave cc %q: %s woven %v, want %v", c.args, c.out, got, c.woven)
		}
		if strings.HasSuffix(c.out, ".o") {
			continue
		}
		p := run(t, dir, []string{"WEAVE_OUT="}, "./"+c.out)
		if p.code != 3 || p.stdout != "" {
			t.Errorf("%s: exit %d, stdout %q: want 3, nothing", c.out, p.code, p.stdout)
		}
	}
}

// TestProbeLinksWovenObjects: a probe's link of objects weave cc wove
// links the runtime, as plain gcc's link of the plain objects succeeds:
// gnulib's "<wchar.h> uses 'inline' correctly" check (sed, grep, gawk's
// configure) compiles conftest1.c and conftest2.c, then links conftest
// from their objects, and stopped configure with "<wchar.h> cannot be used
// with this compiler"; CMake's try-compile linking a project's woven
// static library (cmTC_*) failed likewise.
func TestProbeLinksWovenObjects(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	files := map[string]string{
		"conftest1.c": "#include <wchar.h>\nextern int zero(void);\nint main(void) { return zero(); }\n",
		"conftest2.c": "#include <wchar.h>\n#include <stdlib.h>\nint zero(void) { char *p = malloc(4); free(p); return 3; }\n",
	}
	for name, text := range files {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	os.MkdirAll(filepath.Join(dir, "CMakeFiles", "cmTC_9f8e.dir"), 0o755)
	env := []string{"WEAVE_CC=gcc"}
	for _, steps := range [][][]string{
		{{"-c", "conftest1.c"}, {"-c", "conftest2.c"}, {"-o", "conftest", "conftest1.o", "conftest2.o"}},
		{{"-c", "conftest2.c", "-o", "libzero.a.o"}, {"ar", "rcs", "libzero.a", "libzero.a.o"},
			{"-o", "CMakeFiles/cmTC_9f8e.dir/m.o", "-c", "conftest1.c"},
			{"CMakeFiles/cmTC_9f8e.dir/m.o", "-o", "cmTC_9f8e", "-L.", "-lzero"}},
	} {
		var exe string
		for _, argv := range steps {
			if argv[0] == "ar" {
				mustRun(t, dir, nil, argv...)
				continue
			}
			mustRun(t, dir, env, append([]string{weaveBin, "cc"}, argv...)...)
			exe = argv[slices.Index(argv, "-o")+1]
		}
		if !isWoven(t, filepath.Join(dir, exe)) {
			t.Errorf("%s: the woven objects are linked without the runtime", exe)
		}
		// A probe, so silent, with no profile left (runtime/save.c).
		if p := run(t, dir, nil, "./"+exe); p.code != 3 || p.stdout != "" || p.stderr != "" {
			t.Errorf("%s: exit %d, %q %q: want 3, nothing", exe, p.code, p.stdout, p.stderr)
		}
	}
	if profs, _ := filepath.Glob(filepath.Join(dir, "*.prof")); len(profs) > 0 {
		t.Errorf("the probes left profiles: %v", profs)
	}
}

// TestCompilerNamedTwice: a compile whose -o comes with an input the
// compiler does not use, the compiler itself as CMake's launcher list
// "weave;cc" gives it (weave cc /usr/bin/gcc -c x.c -o x.o), stays unwoven
// as gcc builds it, but says so; it was silent (only gcc's "linker input
// file unused").
func TestCompilerNamedTwice(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := ccDir(t)
	gcc, _ := exec.LookPath("gcc")
	r := run(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", gcc, "-O1", "-c", "util.c", "-o", "util.o")
	if r.code != 0 || !strings.Contains(r.stderr, "weave: warning: util.c: not woven: -o with inputs the compiler does not use ("+gcc+")") {
		t.Errorf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if isWoven(t, filepath.Join(dir, "util.o")) {
		t.Errorf("util.o woven")
	}
	r = run(t, dir, []string{"WEAVE_CC=gcc", "WEAVE_STRICT=1"}, weaveBin, "cc", gcc, "-O1", "-c", "util.c", "-o", "util.o")
	if r.code == 0 || !strings.Contains(r.stderr, "error: util.c: not woven") {
		t.Errorf("WEAVE_STRICT=1: exit %d, stderr:\n%s", r.code, r.stderr)
	}
}

// otherWeave builds, once, a weave binary with another Go build ID: as a
// new version of weave is, to a cache.
var otherWeave = sync.OnceValues(func() (string, error) {
	out := filepath.Join(filepath.Dir(weaveBin), "weave-other")
	b, err := exec.Command("go", "build", "-ldflags=-buildid=weave-test-other", "-o", out, ".").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
})

// wovenEntries lists the woven cache's entries under a cache home.
func wovenEntries(t *testing.T, home string) []string {
	t.Helper()
	return cacheEntries(home, "woven")
}

// cacheEntries lists the entries of the cache directory name (woven,
// direct) under a cache home: not its dot files (a prune's .pruned mark).
func cacheEntries(home, name string) []string {
	ents, _ := os.ReadDir(filepath.Join(home, "weave", name))
	var r []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			r = append(r, e.Name())
		}
	}
	return r
}

// TestWovenCache: weave cc serves a unit whose preprocessed text, weave,
// flags and frame-store view did not change from its cache of woven text
// (the entry is what gets compiled), and weaves again when the frame
// policy, the weave binary or the source changes; the program built from
// the cache behaves and profiles as the one built without it.
func TestWovenCache(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := ccDir(t)
	home := t.TempDir()
	env := []string{"WEAVE_CC=gcc", "XDG_CACHE_HOME=" + home}
	build := func(extra ...string) {
		t.Helper()
		mustRun(t, dir, append(env, extra...), weaveBin, "cc", "-O2", "-c", "main.c", "util.c")
	}
	// The first build knows neither unit's summary, the second both (the
	// frame store): from the second on, the keys stay.
	build()
	build()
	n := len(wovenEntries(t, home))
	if n < 2 {
		t.Fatalf("%d woven cache entries after two builds", n)
	}
	build()
	if m := len(wovenEntries(t, home)); m != n {
		t.Errorf("an unchanged rebuild added entries: %d -> %d", n, m)
	}
	mustRun(t, dir, nil, weaveBin, "cc", "main.o", "util.o", "-o", "cached")
	mustRun(t, dir, []string{"WEAVE_CACHE=off", "XDG_CACHE_HOME=" + home, "WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-c", "main.c", "util.c")
	mustRun(t, dir, nil, weaveBin, "cc", "main.o", "util.o", "-o", "uncached")
	a, b := runProfiled(t, dir, "./cached"), runProfiled(t, dir, "./uncached")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("from the cache: %+v\nwoven again: %+v", a, b)
	}

	// The entries served are what gets compiled: util.c's entry in place
	// of main.c's gives a main.o that defines util.c's functions.
	before := map[string]bool{}
	for _, e := range wovenEntries(t, home) {
		before[e] = true
	}
	os.Remove(filepath.Join(dir, "main.o"))
	mustRun(t, dir, append(env, "WEAVE_FRAMES=unit"), weaveBin, "cc", "-O2", "-c", "main.c")
	var mainKey string
	for _, e := range wovenEntries(t, home) {
		if !before[e] {
			mainKey = e
		}
	}
	if mainKey == "" {
		t.Fatal("--frames unit: no new entry (a different frame policy must weave again)")
	}
	mustRun(t, dir, append(env, "WEAVE_FRAMES=unit"), weaveBin, "cc", "-O2", "-c", "util.c")
	var utilKey string
	for _, e := range wovenEntries(t, home) {
		if !before[e] && e != mainKey {
			utilKey = e
		}
	}
	if utilKey == "" {
		t.Fatal("util.c under --frames unit: no new entry")
	}
	entry := func(k string) string { return filepath.Join(home, "weave", "woven", k) }
	data, err := os.ReadFile(entry(utilKey))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(entry(mainKey), data, 0o600)
	mustRun(t, dir, append(env, "WEAVE_FRAMES=unit"), weaveBin, "cc", "-O2", "-c", "main.c")
	if syms := definedFuncs(t, filepath.Join(dir, "main.o")); !slices.Contains(syms, "dup_word") || slices.Contains(syms, "main") {
		t.Errorf("main.o from util.c's entry defines %v", syms)
	}
	os.Remove(entry(mainKey))

	// Another weave, another source: woven again.
	other, err := otherWeave()
	if err != nil {
		t.Fatal(err)
	}
	n = len(wovenEntries(t, home))
	mustRun(t, dir, env, other, "cc", "-O2", "-c", "util.c")
	if m := len(wovenEntries(t, home)); m != n+1 {
		t.Errorf("another weave binary: %d entries -> %d, want one more", n, m)
	}
	os.WriteFile(filepath.Join(dir, "util.c"), []byte(ccSources["util.c"]+"int extra(void) { return 1; }\n"), 0o644)
	build()
	if m := len(wovenEntries(t, home)); m != n+2 {
		t.Errorf("a changed source: %d entries -> %d, want one more", n+1, m)
	}
}

// TestWovenCacheExtern: the woven cache serves a unit again only while
// the frame store answers the weave's questions about other units'
// functions as it did. caller.c calls leaf (leaf.c: it cannot allocate)
// and grow (grow.c: it allocates). Compiled before either is known, both
// may allocate and caller is framed; once leaf.c is compiled the store
// knows leaf does not allocate, and caller.c woven from the cache must be
// what weaving it again gives (a miss); once grow.c is compiled too, its
// answer (it may allocate) is the one taken before, and the cache serves.
func TestWovenCacheExtern(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	home := t.TempDir()
	for name, text := range map[string]string{
		"leaf.c":   "int leaf(int x) { return 2 * x + 1; }\n",
		"grow.c":   "#include <stdlib.h>\nint *grow(int n) { return malloc(n * sizeof(int)); }\n",
		"caller.c": "int leaf(int);\nint *grow(int);\nint only_leaf(int n) { int s = 0; for (int i = 0; i < n; i++) s += leaf(i); return s; }\nint *both(int n) { return grow(leaf(n)); }\n",
	} {
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	env := []string{"WEAVE_CC=gcc", "XDG_CACHE_HOME=" + home}
	compile := func(src, out string, extra ...string) []byte {
		t.Helper()
		mustRun(t, dir, append(env, extra...), weaveBin, "cc", "-O2", "-c", src, "-o", out)
		b, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	first := compile("caller.c", "caller.o")
	compile("leaf.c", "leaf.o")
	cached := compile("caller.c", "caller.o")
	fresh := compile("caller.c", "fresh.o", "WEAVE_CACHE=off")
	if !bytes.Equal(cached, fresh) {
		t.Errorf("caller.o from the cache after leaf.c (%d bytes) differs from caller.c woven again (%d bytes)", len(cached), len(fresh))
	}
	if bytes.Equal(first, fresh) {
		t.Errorf("caller.o is the same whether the store knows leaf or not: the test shows nothing")
	}
	n := len(wovenEntries(t, home))
	compile("grow.c", "grow.o")
	if again := compile("caller.c", "caller.o"); !bytes.Equal(again, fresh) {
		t.Errorf("caller.o after grow.c differs from caller.c woven with leaf known")
	}
	if m := len(wovenEntries(t, home)); m != n+1 {
		t.Errorf("woven cache entries %d -> %d after grow.c and caller.c again: want grow.c's only (caller.c served)", n, m)
	}
}

// TestDirectCache: a unit compiled again with its source and headers
// unchanged skips the -E step (the direct cache) and repeats its
// diagnostics; a header changed in place (same size, same time) is a
// miss, and the object has the change; a unit whose files use __TIME__,
// or changed just before its compile, is not stored; WEAVE_CACHE=off
// preprocesses; the program built through the cache behaves and profiles
// as one built without it.
func TestDirectCache(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := ccDir(t)
	home := t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name, text string, tm time.Time) {
		t.Helper()
		writeDated(t, filepath.Join(dir, name), text, 0o755, tm)
	}
	// A compiler that logs the sources of its -E steps.
	write("logcc", "#!/bin/sh\ncase \" $* \" in *\" -E \"*) for a; do last=$a; done; case $last in *.c) echo \"$last\" >> \"$0.log\";; esac;; esac\nexec gcc \"$@\"\n", old)
	preprocessed := func() []string {
		t.Helper()
		b, _ := os.ReadFile(filepath.Join(dir, "logcc.log"))
		os.Remove(filepath.Join(dir, "logcc.log"))
		srcs := strings.Fields(string(b))
		slices.Sort(srcs)
		return srcs
	}
	header := func(n string) string {
		return strings.Replace(ccSources["util.h"], "#endif", "#define N "+n+"\n#endif", 1)
	}
	write("util.h", header("100"), old)
	write("main.c", "#warning direct cache\n"+strings.Replace(ccSources["main.c"], "sum(100)", "sum(N)", 1), old)
	write("util.c", ccSources["util.c"], old)
	env := []string{"WEAVE_CC=" + filepath.Join(dir, "logcc"), "XDG_CACHE_HOME=" + home}
	build := func(out string, extra ...string) string {
		t.Helper()
		r := run(t, dir, append(env, extra...), weaveBin, "cc", "-O2", "-o", out, "main.c", "util.c")
		if r.code != 0 {
			t.Fatalf("weave cc: exit %d\n%s", r.code, r.stderr)
		}
		return r.stderr
	}
	both := []string{"main.c", "util.c"}
	first := build("cached")
	if got := preprocessed(); !slices.Equal(got, both) {
		t.Fatalf("first build preprocessed %q", got)
	}
	if !strings.Contains(first, "#warning direct cache") {
		t.Fatalf("first build's diagnostics: %q", first)
	}
	if ents := cacheEntries(home, "direct"); len(ents) != 2 {
		t.Fatalf("%d direct cache entries after the first build, want 2", len(ents))
	}
	if again := build("cached"); again != first {
		t.Errorf("diagnostics from the cache:\n%s\nwant, as preprocessed:\n%s", again, first)
	}
	if got := preprocessed(); len(got) != 0 {
		t.Errorf("an unchanged rebuild preprocessed %q", got)
	}
	build("uncached", "WEAVE_CACHE=off")
	if got := preprocessed(); !slices.Equal(got, both) {
		t.Errorf("WEAVE_CACHE=off preprocessed %q", got)
	}
	a, b := runProfiled(t, dir, "./cached"), runProfiled(t, dir, "./uncached")
	if !reflect.DeepEqual(a, b) {
		t.Errorf("through the direct cache: %+v\nwithout: %+v", a, b)
	}

	// The header changed in place: same size, same time.
	write("util.h", header("010"), old)
	build("changed")
	if got := preprocessed(); !slices.Equal(got, both) {
		t.Errorf("after util.h changed, preprocessed %q, want both units", got)
	}
	if r := mustRun(t, dir, []string{"WEAVE_OUT="}, "./changed"); r.stdout != "woven 28\n" {
		t.Errorf("after util.h changed the program prints %q, want \"woven 28\\n\" (sum(010))", r.stdout)
	}
	build("changed")
	if got := preprocessed(); len(got) != 0 {
		t.Errorf("the rebuild after the change preprocessed %q", got)
	}

	// Not stored: __TIME__ in a header, a source changed just now.
	write("util.h", header("100")+"static const char *when = __TIME__;\n", old)
	write("util.c", ccSources["util.c"]+"\n", time.Now())
	for i := range 2 {
		build("prog")
		if got := preprocessed(); !slices.Equal(got, both) {
			t.Errorf("build %d with __TIME__ in util.h and util.c new: preprocessed %q, want both", i+1, got)
		}
	}
}

// TestDirectCacheHasInclude: a unit whose source asks __has_include for a
// header that does not exist yet is built again as gcc builds it once the
// header appears (same old times): the direct cache served the text
// without it before (the program printed 0, gcc's 42). A unit including
// <unistd.h>, whose system headers probe too, is still stored.
func TestDirectCacheHasInclude(t *testing.T) {
	testtool.Need(t, "gcc")
	dir, home := t.TempDir(), t.TempDir()
	old := time.Now().Add(-time.Hour)
	write := func(name, text string) {
		t.Helper()
		writeDated(t, filepath.Join(dir, name), text, 0o644, old)
	}
	write("main.c", "#include <stdio.h>\n#if __has_include(\"cfg.h\")\n#include \"cfg.h\"\n#else\n#define CFG 0\n#endif\n"+
		"int pid(void);\nint main(void) { printf(\"%d %d\\n\", CFG, pid() > 0); return 0; }\n")
	write("pid.c", "#include <unistd.h>\nint pid(void) { return (int)getpid(); }\n")
	env := []string{"WEAVE_CC=gcc", "XDG_CACHE_HOME=" + home}
	for i, cfg := range []string{"", "#define CFG 42\n"} {
		if cfg != "" {
			write("cfg.h", cfg)
		}
		mustRun(t, dir, env, weaveBin, "cc", "-O2", "-o", "woven", "main.c", "pid.c")
		mustRun(t, dir, nil, "gcc", "-O2", "-o", "plain", "main.c", "pid.c")
		got := mustRun(t, dir, []string{"WEAVE_OUT="}, "./woven").stdout
		if want := mustRun(t, dir, nil, "./plain").stdout; got != want {
			t.Errorf("build %d (cfg.h %q): the woven program prints %q, gcc's %q", i+1, cfg, got, want)
		}
		if ents := cacheEntries(home, "direct"); len(ents) != 1 {
			t.Errorf("build %d: %d direct cache entries, want 1 (pid.c's)", i+1, len(ents))
		}
	}
}

// definedFuncs returns the functions an object defines.
func definedFuncs(t *testing.T, obj string) []string {
	t.Helper()
	r := mustRun(t, "", nil, "nm", "--defined-only", obj)
	var fs []string
	for _, l := range strings.Split(r.stdout, "\n") {
		if f := strings.Fields(l); len(f) == 3 && (f[1] == "T" || f[1] == "t") {
			fs = append(fs, f[2])
		}
	}
	return fs
}

// profiled is what a run of ccSources' program printed and its profile.
type profiled struct {
	stdout string
	report jsonReport
}

// runProfiled runs ccSources' program prog in dir and reads its profile.
func runProfiled(t *testing.T, dir, prog string) profiled {
	t.Helper()
	prof := filepath.Join(dir, filepath.Base(prog)+".prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0", "WEAVE_HIDDEN=0"}, prog)
	if r.stdout != "woven 4950\n" {
		t.Errorf("%s printed %q", prog, r.stdout)
	}
	rep := readReport(t, prof)
	if rep.Totals.Allocs != 2 || rep.Totals.Frees != 2 {
		t.Errorf("%s: profile totals %+v, want 2 allocs and 2 frees", prog, rep.Totals)
	}
	return profiled{r.stdout, rep}
}

// TestCompilerCaches: with WEAVE_CC="ccache gcc" or "sccache gcc", a
// second woven build of an unchanged tree is served from the compiler's
// cache; another frame policy, or another weave binary (its #ident in
// the woven text), is a miss; the program behaves and profiles as one
// built without the cache.
func TestCompilerCaches(t *testing.T) {
	testtool.Need(t, "gcc")
	local := ccDir(t)
	mustRun(t, local, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "main.c", "util.c", "-o", "prog")
	want := runProfiled(t, local, "./prog")
	other, err := otherWeave()
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"ccache", "sccache"} {
		t.Run(tool, func(t *testing.T) {
			testtool.Need(t, tool)
			dir := ccDir(t)
			var env []string
			var stats func() (hits, misses int)
			switch tool {
			case "ccache":
				env = []string{"CCACHE_DIR=" + filepath.Join(dir, "cache")}
				stats = func() (int, int) { return ccacheStats(t, dir, env) }
			case "sccache":
				// A server that cannot bind its port (another process took
				// it after freePort) is not noticed by sccache 0.4's client
				// before its 10 s timeout: another port, up to three.
				var r result
				for try := 0; try < 3 && (try == 0 || r.code != 0); try++ {
					port, err := freePort()
					if err != nil {
						t.Fatal(err)
					}
					env = []string{"SCCACHE_DIR=" + filepath.Join(dir, "cache"), fmt.Sprintf("SCCACHE_SERVER_PORT=%d", port),
						"SCCACHE_IDLE_TIMEOUT=120", "SCCACHE_ERROR_LOG=" + filepath.Join(dir, "sccache.log")}
					r = run(t, dir, env, "sccache", "--start-server")
				}
				if r.code != 0 {
					log, _ := os.ReadFile(filepath.Join(dir, "sccache.log"))
					t.Fatalf("sccache --start-server: exit %d\n%s%s\nits log:\n%s", r.code, r.stdout, r.stderr, log)
				}
				t.Cleanup(func() { run(t, dir, env, "sccache", "--stop-server") })
				stats = func() (int, int) { return sccacheStats(t, dir, env) }
			}
			// WEAVE_CACHE=off: every build weaves, as on another machine.
			env = append(env, "WEAVE_CC="+tool+" gcc", "WEAVE_CACHE=off")
			// The new hits and misses of each build of the two units.
			// --frames all frames util.c's allocation leaves, which auto
			// leaves frameless; main.c's text (main framed either way),
			// and so its object, is the same.
			steps := []struct {
				name         string
				weave        string
				env          []string
				hits, misses int
			}{
				{"first build", weaveBin, nil, 0, 2},
				{"unchanged tree", weaveBin, nil, 2, 0},
				{"--frames all", weaveBin, []string{"WEAVE_FRAMES=all"}, 1, 1},
				{"another weave", other, nil, 0, 2},
				{"unchanged again", weaveBin, nil, 2, 0},
			}
			h0, m0 := 0, 0
			for _, s := range steps {
				os.Remove(filepath.Join(dir, "main.o"))
				os.Remove(filepath.Join(dir, "util.o"))
				mustRun(t, dir, append(env, s.env...), s.weave, "cc", "-O2", "-c", "main.c", "util.c")
				h, m := stats()
				if h-h0 != s.hits || m-m0 != s.misses {
					t.Errorf("%s: %d hits, %d misses; want %d, %d", s.name, h-h0, m-m0, s.hits, s.misses)
				}
				h0, m0 = h, m
			}
			mustRun(t, dir, env, weaveBin, "cc", "main.o", "util.o", "-o", "prog")
			if got := runProfiled(t, dir, "./prog"); !reflect.DeepEqual(got, want) {
				t.Errorf("built through %s: %+v\nbuilt locally: %+v", tool, got, want)
			}
		})
	}
}

// TestCacheInFront: ccache in front of weave (CC="ccache weave cc", a
// CMake project's ccache launcher before CC=weave-cc) cannot see
// WEAVE_FRAMES and the like, so every compile it runs says so, and the
// warning comes back with each object it serves, the stale one too; run
// by make, weave says nothing.
func TestCacheInFront(t *testing.T) {
	testtool.Need(t, "gcc", "ccache")
	dir := ccDir(t)
	env := []string{"CCACHE_DIR=" + filepath.Join(dir, "cache"), "WEAVE_CC=gcc"}
	const warning = "weave: warning: ccache runs weave"
	for _, frames := range []string{"auto", "all"} {
		r := mustRun(t, dir, append(env, "WEAVE_FRAMES="+frames), "ccache", weaveBin, "cc", "-O2", "-c", "util.c")
		if strings.Count(r.stderr, warning) != 1 {
			t.Errorf("WEAVE_FRAMES=%s through ccache: stderr %q, want the warning once", frames, r.stderr)
		}
	}
	if hits, _ := ccacheStats(t, dir, env); hits != 1 {
		t.Errorf("the second compile was not served by ccache (%d hits): the test shows nothing", hits)
	}
	if r := mustRun(t, dir, env, weaveBin, "cc", "-O2", "-c", "util.c"); r.stderr != "" {
		t.Errorf("weave cc not under ccache: stderr %q", r.stderr)
	}
}

// sccacheStats returns sccache's cache hits and misses.
func sccacheStats(t *testing.T, dir string, env []string) (hits, misses int) {
	t.Helper()
	r := mustRun(t, dir, env, "sccache", "--show-stats")
	num := func(name string) int {
		m := regexp.MustCompile(`(?m)^` + name + `\s+(\d+)$`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("sccache --show-stats: no %q line:\n%s", name, r.stdout)
		}
		var n int
		fmt.Sscan(m[1], &n)
		return n
	}
	return num("Cache hits"), num("Cache misses")
}

// freePort returns a TCP port free on 127.0.0.1 now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// TestDistcc: WEAVE_CC="distcc gcc" with a real distccd on localhost:
// weave preprocesses and weaves locally, the daemon compiles each woven
// unit (its log), the objects are those of a local build, and the program
// behaves and profiles as the one built locally.
func TestDistcc(t *testing.T) {
	testtool.Need(t, "gcc", "distcc", "distccd")
	local, want := builtLocally(t)

	dir := ccDir(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "distccd.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	args := []string{"--daemon", "--no-detach", "--listen", "127.0.0.1", "--allow", "127.0.0.1",
		"--port", fmt.Sprint(port), "--log-stderr", "--log-level=info", "--jobs", "2"}
	if os.Geteuid() == 0 {
		args = append(args, "--user", "nobody") // distccd will not run jobs as root
	}
	d := exec.Command("distccd", args...)
	d.Stderr = logf
	// Its own process group: the preforked children go with it.
	d.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-d.Process.Pid, syscall.SIGKILL); d.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i == 100 {
			t.Fatalf("distccd does not listen on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// No fallback to a local compile: a job the daemon did not run fails.
	os.Mkdir(filepath.Join(dir, "distcc"), 0o755)
	env := []string{"WEAVE_CC=distcc gcc", "WEAVE_CACHE=off", "DISTCC_HOSTS=" + addr, "DISTCC_FALLBACK=0",
		"DISTCC_SKIP_LOCAL_RETRY=1", "DISTCC_DIR=" + filepath.Join(dir, "distcc")}
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-c", "main.c", "util.c")
	mustRun(t, dir, env, weaveBin, "cc", "main.o", "util.o", "-o", "prog")
	log := ""
	for i := 0; i < 50; i++ { // the log line may come after the client is done
		b, _ := os.ReadFile(logf.Name())
		if log = string(b); strings.Count(log, "COMPILE_OK") >= 2 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	ok := regexp.MustCompile(`COMPILE_OK .*\.woven\.i`).FindAllString(log, -1)
	if len(ok) != 2 || !strings.Contains(log, "main.woven.i") || !strings.Contains(log, "util.woven.i") {
		t.Errorf("distccd compiled %d woven units, want main's and util's:\n%s", len(ok), log)
	}
	sameAsLocal(t, "distcc", dir, local, want)
}

// builtLocally builds ccSources' program woven in a new directory, which
// it returns, and what the program printed and profiled.
func builtLocally(t *testing.T) (string, profiled) {
	t.Helper()
	local := ccDir(t)
	mustRun(t, local, []string{"WEAVE_CC=gcc", "WEAVE_CACHE=off"}, weaveBin, "cc", "-O2", "-c", "main.c", "util.c")
	mustRun(t, local, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "main.o", "util.o", "-o", "prog")
	return local, runProfiled(t, local, "./prog")
}

// sameAsLocal checks that the objects built in dir through tool are those
// built in local, and that the program prints and profiles as want.
func sameAsLocal(t *testing.T, tool, dir, local string, want profiled) {
	t.Helper()
	for _, o := range []string{"main.o", "util.o"} {
		a, _ := os.ReadFile(filepath.Join(dir, o))
		b, _ := os.ReadFile(filepath.Join(local, o))
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s from %s (%d bytes) differs from the local one (%d bytes)", o, tool, len(a), len(b))
		}
	}
	if got := runProfiled(t, dir, "./prog"); !reflect.DeepEqual(got, want) {
		t.Errorf("built through %s: %+v\nbuilt locally: %+v", tool, got, want)
	}
}

// TestIcecream: WEAVE_CC="icecc gcc" with a real icecream cluster on
// localhost, set up as icecream's own tests set theirs up (a scheduler, a
// local daemon that takes no jobs, a "remote" daemon, their own network
// name and ports): weave preprocesses and weaves locally, the remote
// daemon compiles each woven unit in its chroot (its log and the
// scheduler's), the objects are those of a local build, and the program
// behaves and profiles as the one built locally. The scheduler gives a
// job only to a host whose CPU is not all busy, from its /proc/stat: on a
// loaded machine (any CI run's) it would hold the jobs for minutes, so the
// remote daemon runs in a mount namespace of its own whose /proc/stat
// never moves (an idle host). Root: the daemon compiles in a chroot.
func TestIcecream(t *testing.T) {
	asRoot(t)
	testtool.Need(t, "gcc", "icecc", "iceccd", "icecc-scheduler", "icecc-create-env", "unshare")
	local, want := builtLocally(t)

	dir := ccDir(t)
	// The daemons run as the user icecc: they write their logs, sockets
	// and compiler environments here.
	ice := t.TempDir()
	for _, d := range []string{filepath.Dir(ice), ice} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	sched, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	remotePort, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	idle := filepath.Join(ice, "stat")
	os.WriteFile(idle, []byte("cpu  1 0 1 100 0 0 0 0 0 0\ncpu0 1 0 1 100 0 0 0 0 0 0\n"), 0o644)
	net := fmt.Sprintf("weavetest%d", os.Getpid())
	env := append(os.Environ(), "ICECC_TESTS=1", fmt.Sprintf("ICECC_SCHEDULER=:%d", sched))
	start := func(name string, argv ...string) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(env, "ICECC_TEST_SOCKET="+filepath.Join(ice, "socket-"+name))
		cmd.Dir = ice
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	}
	logOf := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(ice, name+".log"))
		return string(b)
	}
	daemon := func(name string, extra ...string) []string {
		return append([]string{"iceccd", "-b", filepath.Join(ice, "envs-"+name), "-l", filepath.Join(ice, name+".log"),
			"-n", net, "-N", name, "-m", "2", "-v", "-v", "-v"}, extra...)
	}
	start("scheduler", "icecc-scheduler", "-p", fmt.Sprint(sched), "-l", filepath.Join(ice, "scheduler.log"), "-n", net, "-v", "-v", "-v")
	start("localice", daemon("localice", "--no-remote")...)
	remote := strings.Join(daemon("remoteice", "-p", fmt.Sprint(remotePort)), " ")
	start("remoteice", "unshare", "--mount", "sh", "-c", "mount --bind "+idle+" /proc/stat && exec "+remote)
	for i := 0; !strings.Contains(logOf("localice"), "Connected to scheduler") ||
		!strings.Contains(logOf("remoteice"), "Connected to scheduler"); i++ {
		if i == 600 {
			t.Fatalf("the daemons did not connect to the scheduler in 60 s:\n%s\n%s\n%s",
				logOf("scheduler"), logOf("localice"), logOf("remoteice"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	// ICECC_PREFERRED_HOST: the remote daemon or nothing.
	cenv := []string{"WEAVE_CC=icecc gcc", "WEAVE_CACHE=off", "ICECC_TEST_SOCKET=" + filepath.Join(ice, "socket-localice"),
		"ICECC_TEST_REMOTEBUILD=1", "ICECC_PREFERRED_HOST=remoteice", "ICECC_DEBUG=debug",
		"ICECC_LOGFILE=" + filepath.Join(ice, "icecc.log")}
	mustRun(t, dir, cenv, weaveBin, "cc", "-O2", "-c", "main.c", "util.c")
	mustRun(t, dir, cenv, weaveBin, "cc", "main.o", "util.o", "-o", "prog")
	done := "Remote compilation completed with exit code 0"
	for i := 0; strings.Count(logOf("remoteice"), done) < 2 && i < 100; i++ {
		time.Sleep(100 * time.Millisecond) // the log line may come after the client is done
	}
	if n := strings.Count(logOf("remoteice"), done); n != 2 {
		t.Errorf("the remote daemon completed %d compiles, want 2:\n%s", n, logOf("remoteice"))
	}
	s := logOf("scheduler")
	jobs := regexp.MustCompile(`(?m)^.*BEGIN: \d+ client=localice\S* server=remoteice.*$`).FindAllString(s, -1)
	if len(jobs) != 2 || !regexp.MustCompile(`NEW \d+ .*main\.woven\.i`).MatchString(s) ||
		!regexp.MustCompile(`NEW \d+ .*util\.woven\.i`).MatchString(s) {
		t.Errorf("the scheduler sent %d jobs to the remote daemon, want main's and util's woven units:\n%s", len(jobs), s)
	}
	sameAsLocal(t, "icecream", dir, local, want)
}

// TestPedanticWoven: what weave cc adds to the woven text (its #ident,
// the runtime reference) passes -std=c99 -pedantic -Werror under gcc and
// clang: the unit is woven, with no diagnostic.
func TestPedanticWoven(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := ccDir(t)
			r := run(t, dir, []string{"WEAVE_CC=" + cc}, weaveBin, "cc", "-std=c99", "-pedantic", "-Werror", "-Wall", "-Wextra", "-O2", "-c", "util.c")
			if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, "util.o")) {
				t.Errorf("exit %d, stderr %q: want a woven util.o and no diagnostic", r.code, r.stderr)
			}
		})
	}
}

// writeDated writes text to path with permissions perm and sets its
// access and modification times to tm (the direct cache's tests date
// files as a build tree's are, or make two versions look the same).
func writeDated(t *testing.T, path, text string, perm os.FileMode, tm time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, tm, tm); err != nil {
		t.Fatal(err)
	}
}

// TestSaveTemps: weave cc -save-temps keeps every file gcc keeps, at the
// names gcc gives them, plus the woven text beside each unit's .i
// (NAME.woven.i), which is what the object was compiled from; an input
// that is itself a .i is never written over.
func TestSaveTemps(t *testing.T) {
	t.Parallel()
	src := map[string]string{
		"prog.c": "#include <stdlib.h>\nint f(void);\nint main(void) { char *p = malloc(8); free(p); return f() - 1; }\n",
		"lib.c":  "int f(void) { return 1; }\n",
		"solo.c": "#include <stdlib.h>\nint main(void) { char *p = malloc(8); free(p); return 0; }\n",
	}
	for _, args := range [][]string{
		{"prog.c", "lib.c"},
		{"solo.c"},                   // one source, no -o: a-solo.i
		{"-o", "sub/solo", "solo.c"}, // the output's name: sub/solo.i
		{"-o", "sub/y", "prog.c", "lib.c"},
		{"-c", "prog.c"},
		{"-c", "-o", "sub/x.o", "prog.c"},
		{"-S", "lib.c"},
		{"-save-temps=obj", "-o", "sub/z", "prog.c", "lib.c"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			files := func(cc ...string) map[string]bool {
				dir := t.TempDir()
				os.Mkdir(filepath.Join(dir, "sub"), 0o755)
				for name, text := range src {
					os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
				}
				argv := append(append(append([]string{}, cc...), "-O2"), args...)
				if !strings.HasPrefix(args[0], "-save-temps") {
					argv = append(argv, "-save-temps")
				}
				mustRun(t, dir, nil, argv...)
				got := map[string]bool{}
				filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
					if err == nil && !d.IsDir() {
						rel, _ := filepath.Rel(dir, p)
						got[rel] = true
						if strings.HasSuffix(rel, ".woven.i") {
							if b, _ := os.ReadFile(p); !bytes.Contains(b, []byte("__weave_")) {
								t.Errorf("%s holds no woven code", rel)
							}
						}
					}
					return nil
				})
				return got
			}
			plain, woven := files("gcc"), files(weaveBin, "cc")
			for f := range plain {
				if !woven[f] {
					t.Errorf("gcc keeps %s, weave cc does not (weave cc kept %v)", f, woven)
				}
			}
			for f := range woven {
				if !plain[f] && !(strings.HasSuffix(f, ".woven.i") && plain[strings.TrimSuffix(f, ".woven.i")+".i"]) {
					t.Errorf("weave cc keeps %s, which gcc does not (gcc kept %v)", f, plain)
				}
			}
		})
	}
	// clang names its temporaries after the input, in the working
	// directory: the woven text is compiled from NAME.woven.i, so they are
	// named after it, never after weave's temporary file (0-prog.woven.s).
	t.Run("clang", func(t *testing.T) {
		testtool.Need(t, "clang")
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "sub"), 0o755)
		os.WriteFile(filepath.Join(dir, "prog.c"), []byte(src["prog.c"]+src["lib.c"]), 0o644)
		mustRun(t, dir, []string{"WEAVE_CC=clang"}, weaveBin, "cc", "-O2", "-save-temps", "-o", "sub/y", "prog.c")
		var got []string
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				rel, _ := filepath.Rel(dir, p)
				got = append(got, rel)
			}
			return nil
		})
		for _, f := range got {
			if regexp.MustCompile(`(^|/)[0-9]+-`).MatchString(f) {
				t.Errorf("a temporary named after weave's own file: %s (all: %v)", f, got)
			}
		}
		if !slices.Contains(got, "sub/y-prog.woven.i") || !slices.Contains(got, "sub/y-prog.o") {
			t.Errorf("kept %v, want sub/y-prog.woven.i and sub/y-prog.o among them", got)
		}
	})
	t.Run("a .i input", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "prog.c"), []byte(src["prog.c"]), 0o644)
		pre := mustRun(t, dir, nil, "gcc", "-E", "prog.c").stdout
		os.WriteFile(filepath.Join(dir, "prog.i"), []byte(pre), 0o644)
		mustRun(t, dir, nil, weaveBin, "cc", "-save-temps", "-c", "prog.i")
		if b, _ := os.ReadFile(filepath.Join(dir, "prog.i")); string(b) != pre {
			t.Error("prog.i, the input, was written over")
		}
		if _, err := os.Stat(filepath.Join(dir, "prog.woven.i")); err != nil {
			t.Error(err)
		}
	})
}

// TestUnwritableCacheHome: a home weave cannot make its cache in
// (HOME=/nonexistent in a build sandbox, a read-only home) builds all the
// same, with the cache under the temporary directory; it failed ("weave:
// building the runtime: runtime: cache directory: mkdir /nonexistent:
// permission denied") where plain cc builds.
func TestUnwritableCacheHome(t *testing.T) {
	testtool.Need(t, "gcc")
	dir, tmp := ccDir(t), t.TempDir()
	nohome := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(nohome, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// XDG_CACHE_HOME a file's subdirectory: no user, root included, can make it.
	env := []string{"WEAVE_CC=gcc", "XDG_CACHE_HOME=" + filepath.Join(nohome, "cache"), "TMPDIR=" + tmp}
	mustRun(t, dir, env, weaveBin, "cc", "-o", "prog", "main.c", "util.c")
	if !isWoven(t, filepath.Join(dir, "prog")) {
		t.Error("prog is not woven")
	}
	uid := strconv.Itoa(os.Getuid())
	if fi, err := os.Stat(filepath.Join(tmp, "weave-"+uid)); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("no private cache under TMPDIR: %v", err)
	}
}

// macroWarnSource compares an array's address with NULL inside a macro
// (cJSON's cJSON_SetNumberValue in its tests): gcc and clang say nothing
// in the macro's expansion, but warn on the preprocessed text weave
// compiles (gcc -Waddress, clang -Wtautological-pointer-compare).
