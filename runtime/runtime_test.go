package runtime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"weave/internal/memcheck"
	"weave/internal/testtool"
	"weave/profile"
)

// The test programs in testdata are hand-written "woven-style" C: they
// include weave.h (through testdata/woven.h), open every function body with
// the __weave_enter guard and call __weave_malloc & co. with static site
// records, as the weaver's output does.

func TestMain(m *testing.M) {
	if os.Getenv("WEAVE_RT_TEST_HELPER") != "" {
		// A subprocess of TestObjectCache: use the cache it was given.
		os.Exit(m.Run())
	}
	// Keep compiled runtimes out of the user's cache.
	dir, err := os.MkdirTemp("", "weave-rt-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var objects sync.Map // "cc flags" -> *objResult

type objResult struct {
	once sync.Once
	path string
	err  error
}

// object builds (once per test binary) the runtime for cc and flags.
func object(t testing.TB, cc string, flags ...string) string {
	t.Helper()
	testtool.Need(t, cc)
	v, _ := objects.LoadOrStore(cc+" "+strings.Join(flags, " "), &objResult{})
	r := v.(*objResult)
	r.once.Do(func() { r.path, r.err = Object([]string{cc}, flags) })
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.path
}

// build compiles testdata/<prog>.c with cc against the runtime built with
// the same compiler and sanitizer flags.
func build(t testing.TB, cc, prog string, sanitize ...string) string {
	t.Helper()
	obj := object(t, cc, sanitize...)
	exe := filepath.Join(t.TempDir(), prog)
	args := []string{"-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-I../pseudostack", "-Itestdata"}
	args = append(args, sanitize...)
	args = append(args, filepath.Join("testdata", prog+".c"), obj, "-o", exe, "-pthread")
	if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
	}
	return exe
}

type result struct {
	stdout, stderr string
	code           int
	dir            string // the working directory it ran in
}

// run runs exe in a fresh directory. env entries are added to the
// environment; WEAVE_OUT defaults to <dir>/out.prof.
func run(t testing.TB, exe string, env []string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_OUT="+filepath.Join(dir, "out.prof"))
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), dir: dir}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", exe, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s: timed out", exe)
	}
	return r
}

func (r result) profile() string { return filepath.Join(r.dir, "out.prof") }

// heapSummary is what valgrind's HEAP SUMMARY (and the runtime's) says: a
// memcheck.Totals, local so that the tests' literals may be positional.
type heapSummary struct {
	InUseBytes, InUseBlocks, Allocs, Frees, Bytes uint64
}

// summaryOf parses the summary in the lines of text starting with prefix.
func summaryOf(t testing.TB, text, prefix string) heapSummary {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			lines = append(lines, l)
		}
	}
	s, ok := memcheck.Parse(strings.Join(lines, "\n"))
	if !ok {
		t.Fatalf("no heap summary (%q) in:\n%s", prefix, text)
	}
	return heapSummary(s)
}

func weaveSummary(t testing.TB, r result) heapSummary {
	t.Helper()
	return summaryOf(t, r.stderr, "==weave== ")
}

// checkValgrind checks, as a subtest that needs valgrind only, that the
// runtime's totals for a run of exe equal valgrind's for another.
func checkValgrind(t *testing.T, got heapSummary, exe string, env []string, args ...string) {
	t.Helper()
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		if vg := heapSummary(memcheck.Run(t, "", env, append([]string{exe}, args...)...)); got != vg {
			t.Errorf("runtime says %+v, valgrind %+v", got, vg)
		}
	})
}

// ---------------------------------------------------------------- profiles

// prof is a profile as package profile reads it (which checks it against
// profile/format.go: header, record shapes, dense ids defined before use,
// tree shape, the E count), with what the tests ask of it.
type prof struct {
	*profile.Profile
	meta map[string]string
}

// readProfile reads a profile, which must be complete.
func readProfile(t testing.TB, path string) *prof {
	t.Helper()
	pp, err := profile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := &prof{pp, map[string]string{}}
	for _, m := range pp.Meta {
		p.meta[m.Key] = m.Value
	}
	for _, k := range []string{"pid", "ppid", "argv", "start_ns", "end_ns", "complete", "runtime", "end", "hidden"} {
		if _, ok := p.meta[k]; !ok {
			t.Errorf("%s: no M %s", path, k)
		}
	}
	if p.meta["complete"] != "1" || p.meta["runtime"] != "1" {
		t.Errorf("%s: metadata %v, want complete 1", path, p.meta)
	}
	checkMemory(t, path, p)
	return p
}

// checkMemory checks the memory records (vmmap/vmmap.c): start and exit
// snapshots, a timeline, and, where no other thread moved the heap
// meanwhile, a heap at exit equal to what the contexts hold.
func checkMemory(t testing.TB, path string, p *prof) {
	t.Helper()
	start, exit := p.Snapshot("start"), p.Snapshot("exit")
	if start == nil || exit == nil || len(p.Timeline) < 2 {
		t.Errorf("%s: no start and exit snapshots, or fewer than 2 timeline points", path)
		return
	}
	var h profile.Heap
	for _, n := range p.Nodes {
		h.Add(&n.Heap)
	}
	bytes, blocks := h.TotalBytes()-h.TotalFreedBytes(), h.TotalAllocs()-h.TotalFrees()
	if len(p.Threads) == 1 && (exit.Bytes != bytes || exit.Blocks != blocks) {
		t.Errorf("%s: heap at exit %d bytes in %d blocks, the contexts hold %d in %d", path, exit.Bytes, exit.Blocks, bytes, blocks)
	}
	if pk, ok := p.HeapPeak(); !ok || pk.Bytes < exit.Bytes {
		t.Errorf("%s: heap peak %+v below the heap at exit", path, pk)
	}
}

// allocs returns the allocation leaves that allocated.
func (p *prof) allocs() []*profile.Node {
	var r []*profile.Node
	for _, n := range p.Nodes {
		if n.Kind == profile.KindAlloc && !n.Heap.IsZero() {
			r = append(r, n)
		}
	}
	return r
}

// called returns the function nodes with calls.
func (p *prof) called() []*profile.Node {
	var r []*profile.Node
	for _, n := range p.Nodes {
		if n.Kind == profile.KindFunc && n.Calls > 0 {
			r = append(r, n)
		}
	}
	return r
}

// bin returns the bin of requests of size bytes (profile.LargeBin: all
// over 1024), zero if none.
func (p *prof) bin(size int) profile.Bin {
	for _, b := range p.Bins {
		if b.Size == size {
			return b
		}
	}
	return profile.Bin{Size: size}
}

// timeMeta returns the time_* metadata.
func (p *prof) timeMeta() map[string]string {
	m := map[string]string{}
	for k, v := range p.meta {
		if strings.HasPrefix(k, "time_") {
			m[k] = v
		}
	}
	return m
}

// timed returns the nodes with self time (D records) and their sum.
func (p *prof) timed() (nodes []*profile.Node, total uint64) {
	for _, n := range p.Nodes {
		if n.Time > 0 {
			nodes = append(nodes, n)
			total += n.Time
		}
	}
	return nodes, total
}

// totals sums the heap counters of all allocation leaves.
func (p *prof) totals() heapSummary { return p.sum(func(*profile.Site) bool { return true }) }

// wovenTotals sums those of the sites in woven code (not hidden).
func (p *prof) wovenTotals() heapSummary {
	return p.sum(func(s *profile.Site) bool { return !s.Hidden })
}

// hiddenTotals sums those of the hidden sites.
func (p *prof) hiddenTotals() heapSummary {
	return p.sum(func(s *profile.Site) bool { return s.Hidden })
}

// sum sums the heap counters of the sites keep selects.
func (p *prof) sum(keep func(*profile.Site) bool) heapSummary {
	var h profile.Heap
	for _, n := range p.allocs() {
		if keep(n.Site) {
			h.Add(&n.Heap)
		}
	}
	a, f := h.TotalAllocs(), h.TotalFrees()
	return heapSummary{h.TotalBytes() - h.TotalFreedBytes(), a - f, a, f, h.TotalBytes()}
}

// chain is the function names from n's parent up, "f<g<main" style.
func chain(n *profile.Node) string {
	var names []string
	for n = n.Parent; n != nil && n.Kind == profile.KindFunc; n = n.Parent {
		names = append(names, n.Func.Name)
	}
	return strings.Join(names, "<")
}

// checkConsistent checks that the profile's heap counters and bins agree
// with the heap summary the runtime printed.
func checkConsistent(t testing.TB, p *prof, s heapSummary) {
	t.Helper()
	if got := p.totals(); got != s {
		t.Errorf("H records sum to %+v, summary says %+v", got, s)
	}
	var b [4]uint64
	for _, v := range p.Bins {
		b[0], b[1], b[2], b[3] = b[0]+v.Allocs, b[1]+v.Frees, b[2]+v.Bytes, b[3]+v.FreedBytes
	}
	if b != [4]uint64{s.Allocs, s.Frees, s.Bytes, s.Bytes - s.InUseBytes} {
		t.Errorf("B records sum to %v, summary says %+v", b, s)
	}
}

// ------------------------------------------------------------------- tests

func TestSource(t *testing.T) {
	h, err := os.ReadFile("../pseudostack/weave.h")
	if err != nil {
		t.Fatal(err)
	}
	if Header() != string(h) {
		t.Error("Header() differs from pseudostack/weave.h")
	}
	src := Source()
	if strings.Count(src, string(h)) != 1 {
		t.Error("Source() does not contain the header exactly once")
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
// from several processes agree and leave no temporary files.
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
	if len(entries) != 1 {
		t.Errorf("cache holds %d files, want 1", len(entries))
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

// TestObjectHelper is run by TestObjectCache in subprocesses.
func TestObjectHelper(t *testing.T) {
	if os.Getenv("WEAVE_RT_TEST_HELPER") == "" {
		return // only TestObjectCache's subprocesses run it (a skip would clutter the skip list)
	}
	p, err := Object([]string{"gcc"}, []string{"-Wall"})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(p)
}

// TestWidgets: mprof's example; totals equal valgrind's, the leak line
// names the calling context.
func TestWidgets(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "widgets")
	r := run(t, exe, nil)
	got := weaveSummary(t, r)
	checkValgrind(t, got, exe, nil)
	want := heapSummary{1020000, 5000, 10000, 5000, 2040000}
	if got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	if !regexp.MustCompile(`(?m)^==weave==   1,020,000 bytes in 5,000 blocks definitely lost at \S*widgets.c:\d+ make_widget <- make_red_widget <- main$`).MatchString(r.stderr) {
		t.Errorf("no leak line in:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "==weave== profile written to "+r.profile()) {
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
	for _, prog := range []string{"widgets", "allfns", "longjmp"} {
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
	p := checkAgainstValgrind(t, build(t, "gcc", "longjmp"))
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

// threadTotals is what testdata/threads.c must report for n blocks per
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

// checkThreads checks a run of testdata/threads.c with n blocks per
// thread of the default sizes (0-2999 bytes).
func checkThreads(t *testing.T, r result, n uint64) { checkThreadsSized(t, r, n, 3000) }

// checkThreadsSized checks a run of testdata/threads.c with n blocks per
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
func TestThreads(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "threads")
	checkThreadsSized(t, run(t, exe, nil, "1000000", "64"), 1000000, 64)
	checkThreads(t, run(t, exe, nil), 100000)
}

// TestTSan: the runtime is free of data races under ThreadSanitizer, with
// gcc and clang; a racy program proves TSan is watching.
func TestTSan(t *testing.T) {
	for _, cc := range []string{"clang", "gcc"} {
		t.Run(cc, func(t *testing.T) {
			t.Parallel()
			tsan := []string{"-fsanitize=thread"}
			r := run(t, build(t, cc, "threads", tsan...), nil, "100000", "64")
			if strings.Contains(r.stderr, "ThreadSanitizer") {
				t.Fatalf("ThreadSanitizer reports:\n%s", r.stderr)
			}
			checkThreadsSized(t, r, 100000, 64)
			for _, prog := range []string{"nowoven", "fork", "deep", "churn"} {
				r := run(t, build(t, cc, prog, tsan...), nil, "20000")
				if strings.Contains(r.stderr, "ThreadSanitizer") || r.code != 0 {
					t.Errorf("%s: exit %d\n%s", prog, r.code, r.stderr)
				}
			}
			r = run(t, build(t, cc, "racy", tsan...), nil)
			if !strings.Contains(r.stderr, "WARNING: ThreadSanitizer: data race") {
				t.Errorf("TSan missed the race in racy.c:\n%s", r.stderr)
			}
		})
	}
}

// TestThreadChurn: 2000 short-lived threads, each with its own tree.
func TestThreadChurn(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "churn")
	r := run(t, exe, nil)
	got := weaveSummary(t, r)
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if w := p.wovenTotals(); r.code != 0 || w != (heapSummary{0, 0, 6000, 6000, 128000}) {
		t.Fatalf("exit %d, woven allocations %+v\n%s", r.code, w, r.stderr)
	}
	// With the C library's allocations for the threads, valgrind's totals.
	checkValgrind(t, got, exe, nil)
	if len(p.Threads) != 2001 {
		t.Errorf("%d threads, want 2001", len(p.Threads))
	}
}

// TestExitWhileRunning: main returns while other threads allocate, create
// contexts and threads; the runtime must still exit cleanly with a
// well-formed profile (the counts themselves are a snapshot).
func TestExitWhileRunning(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "running")
	for i := 0; i < 10; i++ {
		r := run(t, exe, nil)
		if r.code != 0 {
			t.Fatalf("run %d: exit %d\n%s", i, r.code, r.stderr)
		}
		weaveSummary(t, r)
		readProfile(t, r.profile())
	}
}

// TestUnknownPointers: with library allocations not recorded
// (WEAVE_HIDDEN=0), blocks the runtime never saw pass through free and
// realloc, and a block freed behind its back is noticed when its address
// comes back. Recorded (the default), it sees every block: valgrind's
// totals.
func TestUnknownPointers(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "unknown")
	r := run(t, exe, []string{"WEAVE_HIDDEN=0"})
	got := weaveSummary(t, r)
	want := heapSummary{0, 0, 3, 3, 224}
	if r.stdout != "reused\n" {
		want = heapSummary{48, 1, 3, 2, 224}
	}
	if r.code != 0 || got != want {
		t.Errorf("exit %d, summary %+v, want %+v\n%s", r.code, got, want, r.stderr)
	}
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if p.meta["hidden"] != "0" {
		t.Errorf("WEAVE_HIDDEN=0: M hidden %s", p.meta["hidden"])
	}
	checkAgainstValgrind(t, exe)
}

// TestSideTableSpill: blocks packed 8 bytes apart (several to a granule of
// the side table's radix part) and blocks of 1 GiB and more (too big for a
// radix slot) take the spill table; the runtime's totals must equal the
// program's own tally.
func TestSideTableSpill(t *testing.T) {
	t.Parallel()
	r := run(t, build(t, "gcc", "granules"), nil)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got, want := weaveSummary(t, r), summaryOf(t, r.stdout, "")
	if got != want {
		t.Errorf("runtime says %+v, the program %+v\n%s", got, want, r.stderr)
	}
	checkConsistent(t, readProfile(t, r.profile()), got)
}

// checkAgainstValgrind runs exe with the runtime's defaults (library
// allocations recorded) and checks its profile is consistent and its totals
// are valgrind's.
func checkAgainstValgrind(t *testing.T, exe string) *prof {
	t.Helper()
	r := run(t, exe, nil)
	got := weaveSummary(t, r)
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if p.meta["hidden"] != "1" {
		t.Errorf("M hidden %s", p.meta["hidden"])
	}
	checkValgrind(t, got, exe, nil)
	return p
}

// TestErrno: errno is preserved across successful calls and set as by the
// library on failures.
func TestErrno(t *testing.T) {
	t.Parallel()
	r := run(t, build(t, "gcc", "errno"), nil)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := weaveSummary(t, r)
	if got.InUseBlocks != 0 || got.Allocs != 11 || !strings.Contains(r.stderr, "All heap blocks were freed") {
		t.Errorf("summary %+v\n%s", got, r.stderr)
	}
	checkConsistent(t, readProfile(t, r.profile()), got)
}

// TestEmpty: a program that allocates nothing.
func TestEmpty(t *testing.T) {
	t.Parallel()
	r := run(t, build(t, "gcc", "empty"), nil)
	got := weaveSummary(t, r)
	if got != (heapSummary{}) || !strings.Contains(r.stderr, "==weave== All heap blocks were freed -- no leaks are possible\n") {
		t.Errorf("summary:\n%s", r.stderr)
	}
	p := readProfile(t, r.profile())
	if len(p.Threads) != 1 || len(p.Nodes) != 2 || len(p.allocs()) != 0 || len(p.Bins) != 0 || len(p.Sites) != 0 {
		t.Errorf("profile %v", p)
	}
	if n := p.Nodes[1]; n.Kind != profile.KindFunc || n.Calls != 1 || n.Func.Name != "main" {
		t.Errorf("profile %v", p)
	}
	if pid := p.meta["pid"]; p.Threads[0].TID != uint64(atoi(t, pid)) || !strings.HasSuffix(p.meta["argv"], "empty") {
		t.Errorf("metadata %v, thread %d", p.meta, p.Threads[0].TID)
	}
}

func atoi(t testing.TB, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestProfileName: without WEAVE_OUT the profile goes to
// weave-<prog>.<pid>.prof, never replacing an existing file.
func TestProfileName(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "empty")
	for _, clash := range []bool{false, true} {
		var args []string
		if clash {
			args = []string{"clash"}
		}
		r := runNoOut(t, exe, args...)
		entries, _ := os.ReadDir(r.dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		m := regexp.MustCompile(`profile written to (weave-empty\.(\d+)(\.1)?\.prof) `).FindStringSubmatch(r.stderr)
		if m == nil || (m[3] != "") != clash {
			t.Fatalf("clash=%v: %s", clash, r.stderr)
		}
		want := []string{m[1]}
		if clash {
			want = []string{"weave-empty." + m[2] + ".1.prof", "weave-empty." + m[2] + ".prof"}
			if b, _ := os.ReadFile(filepath.Join(r.dir, want[1])); string(b) != "mine\n" {
				t.Errorf("existing file replaced: %q", b)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("clash=%v: files %v, want %v", clash, names, want)
		}
		readProfile(t, filepath.Join(r.dir, m[1]))
	}
}

// runNoOut is run without any WEAVE_ variable in the environment.
func runNoOut(t testing.TB, exe string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "WEAVE_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, stderr.String())
	}
	return result{stderr: stderr.String(), dir: dir}
}

// TestEnv: WEAVE_SUMMARY=0, WEAVE_OUT= (no profile), WEAVE_LEAKS, %p.
func TestEnv(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "allfns")
	r := run(t, exe, []string{"WEAVE_SUMMARY=0"})
	if r.stderr != "" {
		t.Errorf("WEAVE_SUMMARY=0 printed %q", r.stderr)
	}
	readProfile(t, r.profile())

	r = run(t, exe, []string{"WEAVE_OUT="})
	if entries, _ := os.ReadDir(r.dir); len(entries) != 0 || strings.Contains(r.stderr, "profile") {
		t.Errorf("WEAVE_OUT= wrote a profile: %v\n%s", entries, r.stderr)
	}
	weaveSummary(t, r)

	r = run(t, exe, []string{"WEAVE_LEAKS=2", "WEAVE_OUT=sub%p/x.%p.prof"})
	if !strings.Contains(r.stderr, "cannot write profile sub") {
		t.Errorf("missing directory not reported:\n%s", r.stderr)
	}
	if n := len(regexp.MustCompile(` blocks (definitely|indirectly|possibly) lost at `).FindAllString(r.stderr, -1)); n != 2 ||
		!regexp.MustCompile(`==weave==   \.\.\. and \d+ more\n`).MatchString(r.stderr) {
		t.Errorf("WEAVE_LEAKS=2: %d leak lines\n%s", n, r.stderr)
	}
	weaveSummary(t, r)

	r = run(t, exe, []string{"WEAVE_OUT=p.%p.prof", "WEAVE_LEAKS=0"})
	m := regexp.MustCompile(`profile written to p\.(\d+)\.prof`).FindStringSubmatch(r.stderr)
	if m == nil || strings.Contains(r.stderr, "top leaks") {
		t.Fatalf("WEAVE_OUT=p.%%p.prof:\n%s", r.stderr)
	}
	p := readProfile(t, filepath.Join(r.dir, "p."+m[1]+".prof"))
	if p.meta["pid"] != m[1] {
		t.Errorf("pid %s in p.%s.prof", p.meta["pid"], m[1])
	}
	if entries, _ := os.ReadDir(r.dir); len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
}

// TestNoWovenFunction: allocations outside any woven frame, in the main
// thread and in a thread that never runs woven code, go to the roots.
func TestNoWovenFunction(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "nowoven")
	r := run(t, exe, []string{"WEAVE_HIDDEN=0"})
	got := weaveSummary(t, r)
	if want := (heapSummary{500, 2, 3, 1, 600}); got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if len(p.Threads) != 2 {
		t.Errorf("%d threads", len(p.Threads))
	}
	for _, n := range p.allocs() {
		if n.Parent.Kind != profile.KindRoot {
			t.Errorf("node %d not below a root", n.ID)
		}
		// The 100-byte block: main thread's, freed by the other thread.
		if h := n.Heap; h.TotalBytes() == 100 && (h.TotalFrees() != 1 || n.Thread.ID != 0) {
			t.Errorf("100-byte block: %+v in thread %d", h, n.Thread.ID)
		}
		if n.Heap.TotalBytes() == 300 && n.Thread.ID != 1 {
			t.Errorf("300-byte block in thread %d", n.Thread.ID)
		}
	}
	if !regexp.MustCompile(`300 bytes in 1 blocks at \S+nowoven.c:\d+ start\n`).MatchString(r.stderr) {
		t.Errorf("leak lines:\n%s", r.stderr)
	}
	checkAgainstValgrind(t, exe)
}

// TestSignal: a signal handler that allocates, interrupting allocation:
// no deadlock, crash, or leak.
func TestSignal(t *testing.T) {
	t.Parallel()
	r := run(t, build(t, "gcc", "signal"), nil)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "handled ") {
		t.Fatalf("exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
	got := weaveSummary(t, r)
	if got.InUseBlocks != 0 || got.Allocs != got.Frees {
		t.Errorf("summary %+v", got)
	}
	checkConsistent(t, readProfile(t, r.profile()), got)
}

// TestFork: parent and child each write their own profile; the child's
// counts only what it did, and what it inherited is in its metadata.
func TestFork(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "fork")
	dir := t.TempDir()
	r := run(t, exe, []string{"WEAVE_OUT=" + filepath.Join(dir, "p.%p.prof")})
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p.*.prof"))
	if len(files) != 2 {
		t.Fatalf("profiles %v", files)
	}
	byPid := map[string]*prof{}
	for _, f := range files {
		p := readProfile(t, f)
		if filepath.Base(f) != "p."+p.meta["pid"]+".prof" {
			t.Errorf("%s has pid %s", f, p.meta["pid"])
		}
		byPid[p.meta["pid"]] = p
	}
	var parent, child *prof
	for _, p := range byPid {
		if byPid[p.meta["ppid"]] != nil {
			child = p
		} else {
			parent = p
		}
	}
	if parent == nil || child == nil {
		t.Fatal("no parent/child pair")
	}
	if pt, ct := parent.totals(), child.totals(); pt != (heapSummary{10, 1, 2, 1, 25}) || ct != (heapSummary{20, 1, 1, 0, 20}) {
		t.Errorf("parent %+v child %+v", pt, ct)
	}
	if child.meta["inherited"] != "2 25" || child.meta["inherited_freed"] != "1 15" || parent.meta["inherited"] != "" {
		t.Errorf("inherited: child %q %q, parent %q", child.meta["inherited"], child.meta["inherited_freed"], parent.meta["inherited"])
	}
	if len(child.Threads) != 1 || child.meta["end"] != "exit" {
		t.Errorf("child: %d threads, end %q", len(child.Threads), child.meta["end"])
	}
	for _, n := range child.called() {
		if n.Func.Name != "child" || n.Calls != 1 {
			t.Errorf("child profile: %s called %d times, want child once", n.Func.Name, n.Calls)
		}
	}
	if child.Threads[0].TID != uint64(atoi(t, child.meta["pid"])) {
		t.Errorf("child's thread tid %d, pid %s", child.Threads[0].TID, child.meta["pid"])
	}
}

// TestForkFixedOut: with WEAVE_OUT a fixed path, the child writes it first
// and the parent, writing later, never replaces it: the parent's name gets
// its pid, and its summary says so. A later run replaces the earlier run's
// file.
func TestForkFixedOut(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "fork")
	dir := t.TempDir()
	out := filepath.Join(dir, "fixed.prof")
	for round := 1; round <= 2; round++ {
		r := run(t, exe, []string{"WEAVE_OUT=" + out})
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		child := readProfile(t, out)
		parentPath := filepath.Join(dir, "fixed."+child.meta["ppid"]+".prof")
		parent := readProfile(t, parentPath)
		if parent.meta["pid"] != child.meta["ppid"] || parent.meta["inherited"] != "" || child.meta["inherited"] == "" {
			t.Errorf("round %d: %s is not the parent's (pid %s) or %s not the child's", round, parentPath, parent.meta["pid"], out)
		}
		if !strings.Contains(r.stderr, "profile written to "+parentPath+" ") {
			t.Errorf("round %d: the parent's summary does not name %s:\n%s", round, parentPath, r.stderr)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "fixed*.prof")); len(files) != round+1 {
			t.Errorf("round %d: files %v", round, files)
		}
	}
}

// TestDeep: recursion beyond the maximum pseudo-stack depth. Folded, it
// costs the runtime a few nodes and 16 bytes of pseudo-stack a level, not a
// node per level: compare the peak RSS with a shallow run's.
func TestDeep(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "deep")
	r := run(t, exe, []string{"WEAVE_STATS=1"})
	got := weaveSummary(t, r)
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if w := p.wovenTotals(); r.code != 0 || w != (heapSummary{6, 3, 3, 0, 6}) {
		t.Fatalf("exit %d, woven allocations %+v\n%s", r.code, w, r.stderr)
	}
	for _, n := range p.allocs() {
		c, b := chain(n), n.Heap.TotalBytes()
		switch {
		case n.Site.Hidden:
		case b == 1:
			// Recursion is folded: deep below deep holds every level.
			if c != "deep<deep<run" {
				t.Errorf("deepest block at %q", c)
			}
		case b == 2:
			if c != "run" {
				t.Errorf("2-byte block at %q", c)
			}
		case b == 3:
			if c != "main" {
				t.Errorf("3-byte block at %q", c)
			}
		}
	}
	// Calls: deep once from run, then from deep until the pseudo-stack is
	// full (1<<20 entries; deeper calls are not pushed).
	for _, n := range p.called() {
		switch c := n.Calls; chain(n) {
		case "run":
			if c != 1 {
				t.Errorf("run > deep called %d times", c)
			}
		case "deep<run":
			if c < 1<<20-4 || c >= 1<<20 {
				t.Errorf("deep > deep called %d times", c)
			}
		}
	}
	m := regexp.MustCompile(`runtime: ([\d,]+) nodes`).FindStringSubmatch(r.stderr)
	if m == nil || atoi(t, strings.ReplaceAll(m[1], ",", "")) > 20 {
		t.Errorf("runtime stats:\n%s", r.stderr)
	}
	// Per level, the deep run may cost its C stack frame and a 16-byte
	// pseudo-stack entry; a calling-context node per level (32 bytes or
	// more) would exceed the 8 MiB of slack several times over.
	const depth = 1<<20 + 1000
	frame := stackUsage(t, "deep", "deep")
	deep, shallow := maxRSS(t, exe), maxRSS(t, exe, "10")
	limit := shallow + depth*(frame+16)/1024 + 8<<10
	if deep > limit {
		t.Errorf("peak RSS %d KiB at depth %d, %d KiB at depth 10: more than %d KiB (C frames of %d bytes and the pseudo-stack)",
			deep, depth, shallow, limit, frame)
	}
}

// stackUsage returns the bytes of C stack a call of function fn of
// testdata/<prog>.c takes (gcc -fstack-usage, return address included),
// compiled as build compiles it.
func stackUsage(t *testing.T, prog, fn string) int64 {
	t.Helper()
	dir := t.TempDir()
	obj := filepath.Join(dir, prog+".o")
	args := []string{"-std=gnu11", "-O1", "-g", "-I.", "-I../pseudostack", "-Itestdata", "-fstack-usage", "-c",
		filepath.Join("testdata", prog+".c"), "-o", obj}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	su, err := os.ReadFile(filepath.Join(dir, prog+".su"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m):` + fn + `\t(\d+)\tstatic$`).FindSubmatch(su)
	if m == nil {
		t.Fatalf("no static stack usage of %s in:\n%s", fn, su)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// maxRSS runs exe and returns its peak resident set size in KiB.
func maxRSS(t *testing.T, exe string, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "WEAVE_OUT=", "WEAVE_SUMMARY=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	return cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss
}

// BenchmarkPairs runs testdata/bench.c and reports its ns per
// malloc+free pair, plain and through the runtime.
func BenchmarkPairs(b *testing.B) {
	exe := build(b, "gcc", "bench")
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(exe, "5000000", "1000000")
		// WEAVE_HIDDEN=0: the program's own malloc calls stay the baseline.
		cmd.Env = append(os.Environ(), "WEAVE_OUT=", "WEAVE_SUMMARY=0", "WEAVE_HIDDEN=0")
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[1], 64)
			b.ReportMetric(v, f[0]+"-ns")
		}
	}
}
