package runtime

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
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

// buildSignal builds testdata/signal.c linked with testdata/sigsafe.c's
// allocator (a shared library ahead of the C library), whose malloc holds
// signals off: the program's handler allocates, and glibc's malloc is not
// async-signal-safe, so without it the test would fail now and then on
// the program's undefined behaviour rather than the runtime's. The
// program calls nothing of the library's, hence --no-as-needed.
func buildSignal(t testing.TB) string {
	t.Helper()
	obj := object(t, "gcc")
	dir := t.TempDir()
	lib := filepath.Join(dir, "libsigsafe.so")
	exe := filepath.Join(dir, "signal")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-O1", "-Wall", "-Wextra", "-Werror", filepath.Join("testdata", "sigsafe.c"), "-o", lib},
		{"-std=gnu11", "-O1", "-g", "-Wall", "-Wextra", "-Werror", "-I../pseudostack", "-Itestdata",
			filepath.Join("testdata", "signal.c"), obj, "-Wl,--no-as-needed", lib, "-Wl,-rpath," + dir, "-o", exe, "-pthread"},
	} {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return exe
}

type result struct {
	stdout, stderr string
	code           int
	dir            string // the working directory it ran in
}

// run runs exe in a fresh directory. env entries are added to the
// environment; WEAVE_OUT defaults to <dir>/out.prof, WEAVE_SUMMARY to 1.
func run(t testing.TB, exe string, env []string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_OUT="+filepath.Join(dir, "out.prof"), "WEAVE_SUMMARY=1")
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
	return summaryOf(t, summaryPrefix.ReplaceAllString(r.stderr, "==weave== "), "==weave== ")
}

// summaryPrefix starts each line of the runtime's summary: the pid in it.
var summaryPrefix = regexp.MustCompile(`(?m)^==weave \d+== `)

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
