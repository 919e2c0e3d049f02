package runtime

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/pseudostack"
)

func TestSource(t *testing.T) {
	h, err := os.ReadFile("../pseudostack/weave.h")
	if err != nil {
		t.Fatal(err)
	}
	v := pseudostack.GuardVariants(string(h))
	if Header() != string(h)+v {
		t.Error("Header() is not pseudostack/weave.h and the guard variants generated from it")
	}
	src := Source()
	if strings.Count(src, string(h)) != 1 || strings.Count(src, v) != 1 {
		t.Error("Source() does not contain the header and its guard variants exactly once")
	}
	if regexp.MustCompile(`(?m)^\s*#\s*include\s*"`).MatchString(src) {
		t.Error("Source() still #includes a part")
	}
	if !strings.Contains(src, "__weave_enter_slow(const struct __weave_fn *fn)\n{") {
		t.Error("Source() lacks the runtime")
	}
}

// TestLineDirectives: every line of Source is the line its #line
// directives name, in the part's own file, and every C file of the
// runtime's folders is a part.
func TestLineDirectives(t *testing.T) {
	files := map[string][]string{}
	lineOf := func(file string, n int) (string, bool) {
		if _, ok := files[file]; !ok {
			b, err := os.ReadFile(filepath.Join("..", file))
			if err != nil {
				t.Fatalf("#line names %q: %v", file, err)
			}
			files[file] = strings.SplitAfter(string(b), "\n")
		}
		l := files[file]
		if n < 1 || n > len(l) {
			return "", false
		}
		return l[n-1], true
	}
	re := regexp.MustCompile(`^#line (\d+) "([^"]+)"\n$`)
	file, n, checked := "", 0, 0
	for _, l := range strings.SplitAfter(Source(), "\n") {
		if m := re.FindStringSubmatch(l); m != nil {
			file = m[2]
			n, _ = strconv.Atoi(m[1])
			continue
		}
		if l == "" {
			continue
		}
		if file == "" {
			t.Fatalf("Source() starts without a #line directive: %q", l)
		}
		if strings.HasSuffix(file, " (guard variants)") || strings.HasSuffix(file, " (ABI mark)") || strings.HasSuffix(file, " (for size)") {
			continue // generated: TestSource checks the variants, cmd/weave's TestABIMark the mark, TestForSize the pragmas
		}
		want, ok := lineOf(file, n)
		if !ok {
			t.Fatalf("%s:%d: beyond the end of the file", file, n)
		}
		// A part's #include "internal.h" is blank once the header is in; the
		// out-of-line copies drop the extern-inline prefix.
		if want != l && !(l == "\n" && strings.HasPrefix(want, "#include \"")) &&
			l != strings.TrimPrefix(want, "extern __inline __attribute__((__gnu_inline__, __always_inline__)) ") {
			t.Fatalf("%s:%d: Source() has %q, the file %q", file, n, l, want)
		}
		n++
		checked++
	}
	for _, dir := range []string{"runtime", "pseudostack"} {
		ents, err := os.ReadDir(filepath.Join("..", dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			name := dir + "/" + e.Name()
			if ext := filepath.Ext(name); (ext == ".c" || ext == ".h") && files[name] == nil {
				t.Errorf("%s is not a part of the runtime (runtime/parts.go)", name)
			}
		}
	}
	t.Logf("%d lines in %d files", checked, len(files))
}

// TestOutOfLine: the runtime defines every inline fast path of weave.h out
// of line, from weave.h's own text.
func TestOutOfLine(t *testing.T) {
	obj := object(t, "gcc")
	out, err := exec.Command("nm", "--defined-only", obj).Output()
	if err != nil {
		t.Skipf("nm: %v", err)
	}
	defined := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && f[1] == "T" {
			defined[f[2]] = true
		}
	}
	re := regexp.MustCompile(`(?m)^extern __inline __attribute__\(\(__gnu_inline__, __always_inline__\)\) [^\n]*\n(\w+)\(`)
	fns := re.FindAllStringSubmatch(Header(), -1)
	if len(fns) < 3 {
		t.Fatalf("found %d inline functions in weave.h", len(fns))
	}
	for _, m := range fns {
		if !defined[m[1]] {
			t.Errorf("the runtime object does not define %s", m[1])
		}
	}
}

// TestWarnings: the runtime compiles warning-free with gcc and clang.
func TestWarnings(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			t.Parallel()
			object(t, cc, "-Wall", "-Wextra", "-Werror")
			object(t, cc, "-O0", "-Wall", "-Wextra", "-Werror")
		})
	}
}

// TestObjectCache: Object reuses its cached object, and concurrent builds
// from several processes agree and leave no temporary files (the object
// and one index entry).
func TestObjectCache(t *testing.T) {
	testtool.Need(t, "gcc")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	const n = 6
	outs := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestObjectHelper$")
			cmd.Env = append(os.Environ(), "WEAVE_RT_TEST_HELPER=1")
			outs[i], errs[i] = cmd.Output()
		}()
	}
	wg.Wait()
	var path string
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("helper %d: %v\n%s", i, errs[i], outs[i])
		}
		got := strings.TrimSpace(strings.SplitN(string(outs[i]), "\n", 2)[0])
		if i == 0 {
			path = got
		} else if got != path {
			t.Fatalf("helpers disagree: %q vs %q", got, path)
		}
	}
	if !strings.HasPrefix(path, filepath.Join(cache, "weave", "rt-")) || !strings.HasSuffix(path, ".o") {
		t.Fatalf("object %q not in the cache %s", path, cache)
	}
	entries, err := os.ReadDir(filepath.Join(cache, "weave"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if e.Name() != "rt.lock" { // the lock on builds (lockBuilds)
			names = append(names, e.Name())
		}
	}
	if len(names) != 2 || names[0] != filepath.Base(path) || !strings.HasPrefix(names[1], indexPrefix) || strings.HasSuffix(names[1], ".tmp") {
		t.Errorf("cache holds %q, want the object and its index entry", names)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Object([]string{"gcc"}, []string{"-Wall"})
	if err != nil || again != path {
		t.Fatalf("Object again = %q, %v; want %q", again, err, path)
	}
	if fi2, _ := os.Stat(path); !fi2.ModTime().Equal(fi.ModTime()) {
		t.Error("cached object was rebuilt")
	}
	other, err := Object([]string{"gcc"}, []string{"-Wall", "-DX=1"})
	if err != nil || other == path {
		t.Fatalf("Object with other flags = %q, %v", other, err)
	}
	if _, err := Object([]string{"gcc"}, []string{"-fno-such-flag-weave"}); err == nil {
		t.Error("Object with broken flags succeeded")
	}
	if _, err := Object([]string{"no-such-compiler-weave"}, nil); err == nil {
		t.Error("Object with a missing compiler succeeded")
	}
}

// TestObjectBuiltOnce: processes that want the same runtime object at
// once (a parallel make's links) compile it once; the others wait for it.
func TestObjectBuiltOnce(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	log, cc := filepath.Join(dir, "compiles"), filepath.Join(dir, "cc")
	script := "#!/bin/sh\ncase \"$*\" in *' -c '*) echo compile >> " + log + ";; esac\nexec gcc \"$@\"\n"
	if err := os.WriteFile(cc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestObjectHelper$")
			cmd.Env = append(os.Environ(), "WEAVE_RT_TEST_HELPER=1", "WEAVE_RT_TEST_CC="+cc)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("%v\n%s", err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(log); strings.Count(string(b), "compile") != 1 {
		t.Errorf("4 processes at once compiled the runtime %d times, want 1", strings.Count(string(b), "compile"))
	}
}

// TestObjectHelper is run by TestObjectCache and TestObjectBuiltOnce in
// subprocesses.
func TestObjectHelper(t *testing.T) {
	if os.Getenv("WEAVE_RT_TEST_HELPER") == "" {
		return // only TestObjectCache's subprocesses run it (a skip would clutter the skip list)
	}
	cc := "gcc"
	if c := os.Getenv("WEAVE_RT_TEST_CC"); c != "" {
		cc = c
	}
	p, err := Object([]string{cc}, []string{"-Wall"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(p)
}

// TestWidgets: mprof's example; totals equal valgrind's, the leak line
// names the calling context.
func TestWidgets(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "widgets10k")
	r := run(t, exe, nil)
	got := weaveSummary(t, r)
	checkValgrind(t, got, exe, nil)
	want := heapSummary{1020000, 5000, 10000, 5000, 2040000}
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if !regexp.MustCompile(`(?m)^==weave \d+==   1,020,000 bytes in 5,000 blocks definitely lost at \S*widgets10k.c:\d+ make_widget <- make_red_widget <- main$`).MatchString(r.stderr) {
		t.Errorf("no leak line in:\n%s", r.stderr)
	}
	if !regexp.MustCompile(`==weave \d+== profile written to ` + regexp.QuoteMeta(r.profile())).MatchString(r.stderr) {
		t.Errorf("no profile line in:\n%s", r.stderr)
	}
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if len(p.Sites) != 1 || p.Sites[0].Type != "struct widget" || p.Sites[0].TypeSize != 204 || p.Sites[0].Op != "malloc" {
		t.Errorf("sites %+v", p.Sites)
	}
	chains := map[string]profile.Heap{}
	for _, n := range p.allocs() {
		chains[chain(n)] = n.Heap
	}
	// 204-byte blocks: size class medium (33-256 bytes).
	red, blue := chains["make_widget<make_red_widget<main"], chains["make_widget<make_blue_widget<main"]
	const m = profile.Medium
	if red != (profile.Heap{Allocs: [4]uint64{m: 5000}, Bytes: [4]uint64{m: 1020000}}) ||
		blue != (profile.Heap{Allocs: [4]uint64{m: 5000}, Bytes: [4]uint64{m: 1020000}, Frees: [4]uint64{m: 5000}, FreedBytes: [4]uint64{m: 1020000}}) {
		t.Errorf("heap counters %v", chains)
	}
	if b := p.bin(204); b != (profile.Bin{Size: 204, Allocs: 10000, Frees: 5000, Bytes: 2040000, FreedBytes: 1020000}) || len(p.Bins) != 1 {
		t.Errorf("bins %+v", p.Bins)
	}
	// Calls: main once, make_widget 5000 times under each colour.
	for _, n := range p.called() {
		want := map[string]uint64{"main": 1, "make_widget": 5000, "make_red_widget": 5000,
			"make_blue_widget": 5000, "consume": 10000}[n.Func.Name]
		if n.Calls != want {
			t.Errorf("%s called %d times, want %d", n.Func.Name, n.Calls, want)
		}
	}
}

// TestAllFunctions: every allocation function and realloc's corner cases
// give valgrind's totals.
func TestAllFunctions(t *testing.T) {
	t.Parallel()
	p := checkAgainstValgrind(t, build(t, "gcc", "allfns"))
	ops := map[string]bool{}
	for _, s := range p.Sites {
		ops[s.Op] = true
	}
	for _, op := range []string{"malloc", "calloc", "realloc", "reallocarray", "strdup", "strndup",
		"aligned_alloc", "posix_memalign", "memalign", "valloc"} {
		if !ops[op] {
			t.Errorf("no allocation site for %s", op)
		}
	}
	if p.bin(profile.LargeBin).Allocs == 0 || p.bin(0).Allocs != 2 {
		t.Errorf("bins 0 and >1024: %+v %+v", p.bin(0), p.bin(profile.LargeBin))
	}
}

// TestClang: the runtime and a program built with clang agree with gcc.
func TestClang(t *testing.T) {
	t.Parallel()
	for _, prog := range []string{"widgets10k", "allfns", "jumpback"} {
		g := weaveSummary(t, run(t, build(t, "gcc", prog), nil))
		c := weaveSummary(t, run(t, build(t, "clang", prog), nil))
		if g != c {
			t.Errorf("%s: gcc %+v, clang %+v", prog, g, c)
		}
	}
}

// TestLongjmp: after longjmp and __weave_setjmp_return, allocations are
// charged to the frame that called setjmp.
func TestLongjmp(t *testing.T) {
	t.Parallel()
	p := checkAgainstValgrind(t, build(t, "gcc", "jumpback"))
	want := map[uint64]string{11: "c<b<a<main", 13: "after<a<main", 17: "a<main", 19: "main"}
	for _, n := range p.allocs() {
		if b, c := n.Heap.TotalBytes(), chain(n); want[b] != c {
			t.Errorf("%d-byte block charged to %q, want %q", b, c, want[b])
		}
	}
	if len(p.allocs()) != 4 {
		t.Errorf("%d allocating contexts, want 4", len(p.allocs()))
	}
}

// threadTotals is what testdata/threadchurn.c must report for n blocks per
// thread of sizes i % m.
func threadTotals(n, m uint64) heapSummary {
	const nt = 8
	var s heapSummary
	for i := uint64(0); i < n; i++ {
		size := i % m
		s.Allocs++
		s.Bytes += size
		if i%4 < 2 {
			s.Frees++
		} else {
			s.InUseBlocks++
			s.InUseBytes += size
		}
	}
	for i := uint64(0); i < n/2; i++ {
		s.Allocs++
		s.Frees++
		s.Bytes += 24 + i%8
	}
	s.Allocs++ // the thread's blocks array, freed by main
	s.Frees++
	s.Bytes += 8 * n
	return heapSummary{s.InUseBytes * nt, s.InUseBlocks * nt, s.Allocs * nt, s.Frees * nt, s.Bytes * nt}
}

// checkThreads checks a run of testdata/threadchurn.c with n blocks per
// thread of the default sizes (0-2999 bytes).
func checkThreads(t *testing.T, r result, n uint64) { checkThreadsSized(t, r, n, 3000) }

// checkThreadsSized checks a run of testdata/threadchurn.c with n blocks per
// thread of sizes i % m.
func checkThreadsSized(t *testing.T, r result, n, m uint64) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := weaveSummary(t, r)
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	// The woven allocations exactly; besides them, the C library's own
	// (thread set-up: a few per thread), recorded as hidden.
	if want, w := threadTotals(n, m), p.wovenTotals(); w != want {
		t.Errorf("woven allocations %+v, want %+v", w, want)
	}
	if h := p.hiddenTotals(); h.Allocs > 4*9 {
		t.Errorf("hidden allocations %+v: more than thread set-up", h)
	}
	if len(p.Threads) != 9 {
		t.Errorf("%d threads, want 9", len(p.Threads))
	}
	// Each worker's alloc_phase leaf: n allocations, half of them freed,
	// a quarter by the neighbouring thread.
	leaves := 0
	for _, node := range p.allocs() {
		if chain(node) != "alloc_phase<worker" {
			continue
		}
		leaves++
		a, f := node.Heap.TotalAllocs(), node.Heap.TotalFrees()
		if a != n || f != (n+1)/2 {
			t.Errorf("alloc_phase leaf: %d allocs %d frees, want %d %d", a, f, n, (n+1)/2)
		}
	}
	if leaves != 8 {
		t.Errorf("%d alloc_phase leaves, want 8", leaves)
	}
}

// TestThreads: 8 threads x 1M allocations (blocks of 0-63 bytes, so that
// the live half fits in memory), and x 100k of 0-2999 bytes, frees across
// threads: exact totals.
