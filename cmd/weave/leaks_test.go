package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// buildLeaks weaves and builds testdata/leaks/<name>.c into dir.
func buildLeaks(t *testing.T, dir, name string) (exe, src string) {
	t.Helper()
	testtool.Need(t, "gcc")
	src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "leaks", name+".c"))
	if err != nil {
		t.Fatal(err)
	}
	exe = filepath.Join(dir, name)
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O1", "-g", "-o", exe, src, "-pthread")
	return exe, src
}

// leaksSource is the absolute path of testdata/leaks/<name>.
func leaksSource(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "testdata", "leaks", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// siteLines maps the "site:NAME" comments of a source file to their lines.
func siteLines(t *testing.T, src string) map[string]int {
	t.Helper()
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`site:(\w+)`)
	lines := map[string]int{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			lines[m[1]] = n
		}
	}
	return lines
}

// kindsAt sums the K records of the leaves allocating at line of file.
func kindsAt(p *profile.Profile, file string, line int) profile.LeakKinds {
	var k profile.LeakKinds
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc || n.Leaks == nil || n.Site.Line != line || n.Site.File != file {
			continue
		}
		for i, c := range n.Leaks {
			k[i].Blocks += c.Blocks
			k[i].Bytes += c.Bytes
		}
	}
	return k
}

// checkSiteKinds checks the blocks by leak kind of each "site:NAME" line
// of src in profile prof.
func checkSiteKinds(t *testing.T, prof, src string, want map[string][profile.NumLeakKinds]uint64) {
	t.Helper()
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	lines := siteLines(t, src)
	for site, w := range want {
		if got := blocksOf(kindsAt(p, src, lines[site])); got != w {
			t.Errorf("site %s: blocks by kind %v, want %v", site, got, w)
		}
	}
}

func kindBlocks(d, i, p, r uint64) (k [profile.NumLeakKinds]uint64) {
	return [profile.NumLeakKinds]uint64{d, i, p, r}
}

func blocksOf(k profile.LeakKinds) (b [profile.NumLeakKinds]uint64) {
	for i, c := range k {
		b[i] = c.Blocks
	}
	return b
}

// TestLeakKinds: blocks of known kinds (a list whose head is dropped, a
// cycle, a block pointed to only from its middle, one kept by a global,
// one kept by a local of a thread still running) are classified as
// valgrind memcheck classifies them, site by site, and the summary's
// LEAK SUMMARY is valgrind's for the same program; the profile's K
// records add up to the blocks in use; report, check, suppressions and
// the exit status follow.
func TestLeakKinds(t *testing.T) {
	dir := t.TempDir()
	exe, src := buildLeaks(t, dir, "kinds")
	prof := filepath.Join(dir, "k.prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe)
	got, ok := memcheck.ParseKinds(r.stderr)
	if !ok {
		t.Fatalf("no LEAK SUMMARY in:\n%s", r.stderr)
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	lines := siteLines(t, src)
	for _, c := range []struct {
		sites []string
		want  [profile.NumLeakKinds]uint64
	}{
		{[]string{"list"}, kindBlocks(1, 9, 0, 0)},
		{[]string{"cycle", "cycle2"}, kindBlocks(1, 1, 0, 0)},
		{[]string{"interior"}, kindBlocks(0, 0, 1, 0)},
		{[]string{"global"}, kindBlocks(0, 0, 0, 1)},
		{[]string{"local"}, kindBlocks(0, 0, 0, 1)},
	} {
		var sum [profile.NumLeakKinds]uint64
		for _, s := range c.sites {
			b := blocksOf(kindsAt(p, src, lines[s]))
			for i := range sum {
				sum[i] += b[i]
			}
		}
		if sum != c.want {
			t.Errorf("sites %v: blocks by kind %v, want %v", c.sites, sum, c.want)
		}
	}
	var inUse, inK uint64
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc {
			continue
		}
		inUse += n.Heap.TotalAllocs() - n.Heap.TotalFrees()
		if n.Leaks != nil {
			for _, c := range n.Leaks {
				inK += c.Blocks
			}
		}
	}
	if inUse != inK {
		t.Errorf("K records hold %d blocks, H records %d in use", inK, inUse)
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		// The running thread's DTV, the dynamic linker's block, is still
		// reachable for weave (a root), possibly lost for memcheck (an
		// interior pointer from the thread descriptor): moved over.
		vg := memcheck.RunLeaks(t, dir, nil, exe)
		l := linkerBlocks(p)
		if l.Blocks == 0 {
			t.Errorf("no block of the dynamic linker's in a program with a thread")
		}
		vg[2].Blocks, vg[2].Bytes = vg[2].Blocks-l.Blocks, vg[2].Bytes-l.Bytes
		vg[3].Blocks, vg[3].Bytes = vg[3].Blocks+l.Blocks, vg[3].Bytes+l.Bytes
		if vg != got {
			t.Errorf("weave's leak summary %+v, valgrind's with the linker's %+v as reachable %+v", got, l, vg)
		}
	})

	// The report's kind column, filtered.
	rep := mustRun(t, dir, nil, weaveBin, "report", "--tables", "leaks", "--leak-kinds", "definite,indirect", prof)
	_, table, _ := strings.Cut(rep.stdout, "MEMORY LEAKS")
	if !strings.Contains(table, "kind") || !strings.Contains(table, "indirect") ||
		strings.Contains(table, "reachable") || strings.Contains(table, "possible") {
		t.Errorf("report --leak-kinds definite,indirect:\n%s", rep.stdout)
	}

	// weave check: leaks (1), suppressed (0), unreadable (2).
	if c := run(t, dir, nil, weaveBin, "check", prof); c.code != 1 || !strings.Contains(c.stdout, "4 leaks") {
		t.Errorf("weave check: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	supp := filepath.Join(dir, "leaks.supp")
	if err := os.WriteFile(supp, []byte("# the test's leaks\nleak:lose_cycle\nleak:main>lose_list>make_list\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := run(t, dir, nil, weaveBin, "check", "--suppressions", supp, prof); c.code != 0 {
		t.Errorf("weave check --suppressions: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	partial := filepath.Join(dir, "partial.supp")
	if err := os.WriteFile(partial, []byte("leak:kinds.c$\nleak:lose_list>main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := run(t, dir, nil, weaveBin, "check", "--suppressions", partial, prof); c.code != 0 {
		t.Errorf("leak:kinds.c$ should suppress every leak: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	if err := os.WriteFile(partial, []byte("leak:lose_list>main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if c := run(t, dir, nil, weaveBin, "check", "--suppressions", partial, prof); c.code != 1 {
		t.Errorf("leak:lose_list>main (callee>caller) must not match: exit %d\n%s", c.code, c.stdout)
	}
	if c := run(t, dir, nil, weaveBin, "check", prof, filepath.Join(dir, "missing.prof")); c.code != 2 {
		t.Errorf("weave check with a missing profile: exit %d, want 2", c.code)
	}
	bad := filepath.Join(dir, "bad.supp")
	os.WriteFile(bad, []byte("leak:x\nrace:y\n"), 0o644)
	if c := run(t, dir, nil, weaveBin, "check", "--suppressions", bad, prof); c.code != 2 || !strings.Contains(c.stderr, "bad.supp:2:1:") {
		t.Errorf("bad suppressions: exit %d, stderr %q", c.code, c.stderr)
	}

	// At exit: WEAVE_LEAK_EXITCODE, WEAVE_SUPPRESSIONS, WEAVE_LEAK_SCAN=0.
	x := run(t, dir, []string{"WEAVE_OUT=", "WEAVE_LEAK_EXITCODE=23"}, exe)
	if x.code != 23 || x.stdout != r.stdout {
		t.Errorf("WEAVE_LEAK_EXITCODE=23: exit %d, stdout %q (want 23, %q)", x.code, x.stdout, r.stdout)
	}
	// Misset: one line, and still a failing status (was 0 for "abc" and
	// "-1", 300 & 255 for 300).
	for _, v := range []string{"abc", "-1", "300", "2x"} {
		x := run(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0", "WEAVE_LEAK_EXITCODE=" + v}, exe)
		if x.code != 23 || !regexp.MustCompile(`^==weave [0-9]+== WEAVE_LEAK_EXITCODE: want a number from 0 to 255; using 23\n$`).MatchString(x.stderr) {
			t.Errorf("WEAVE_LEAK_EXITCODE=%s: exit %d, stderr %q; want 23 and one line", v, x.code, x.stderr)
		}
	}
	if x := run(t, dir, []string{"WEAVE_OUT=", "WEAVE_LEAK_EXITCODE=0"}, exe); x.code != 0 {
		t.Errorf("WEAVE_LEAK_EXITCODE=0: exit %d", x.code)
	}
	x = run(t, dir, []string{"WEAVE_OUT=", "WEAVE_LEAK_EXITCODE=23", "WEAVE_SUPPRESSIONS=" + supp}, exe)
	if x.code != 0 || !strings.Contains(x.stderr, "suppressed: 384 bytes in 12 blocks") {
		t.Errorf("WEAVE_SUPPRESSIONS: exit %d\n%s", x.code, x.stderr)
	}
	x = mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_LEAK_SCAN=0"}, exe)
	if strings.Contains(x.stderr, "LEAK SUMMARY") {
		t.Errorf("WEAVE_LEAK_SCAN=0 still scanned:\n%s", x.stderr)
	}
	if p, err := profile.ReadFile(prof); err != nil || p.Scanned() {
		t.Errorf("WEAVE_LEAK_SCAN=0: profile scanned %v (%v)", p != nil && p.Scanned(), err)
	}
}

// TestLeakCopies: blocks whose addresses the runtime copies into memory of
// its own (testdata/leaks/copies.c: the events of a traced allocation site,
// the pool table's objects of a pool still alive) are classified as
// memcheck classifies the same blocks of the plain build (the pool
// requests as VALGRIND_MEMPOOL_*'s): the runtime's memory is no root. Both
// were still reachable before, every block of them.
func TestLeakCopies(t *testing.T) {
	dir := t.TempDir()
	exe, src := buildLeaks(t, dir, "copies")
	lines := siteLines(t, src)
	var sites [profile.NumLeakKinds]profile.LeakCount
	for _, env := range [][]string{nil, {"WEAVE_TRACE=alloc:*"}} {
		prof := filepath.Join(dir, "c.prof")
		mustRun(t, dir, append(env, "WEAVE_OUT="+prof), exe)
		p, err := profile.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		// The pool's list of 8: its head lost, 6 through it, its tail at
		// the backing's start (a global's pointer); 5 malloc'd blocks lost.
		pooled, traced := kindsAt(p, src, lines["pooled"]), kindsAt(p, src, lines["traced"])
		if b := blocksOf(pooled); b != kindBlocks(1, 6, 0, 1) {
			t.Errorf("%v: the pool's objects by kind %v, want %v", env, b, kindBlocks(1, 6, 0, 1))
		}
		if b := blocksOf(traced); b != kindBlocks(5, 0, 0, 0) {
			t.Errorf("%v: the malloc'd blocks by kind %v, want %v", env, b, kindBlocks(5, 0, 0, 0))
		}
		for i := range sites {
			sites[i].Blocks, sites[i].Bytes = pooled[i].Blocks+traced[i].Blocks, pooled[i].Bytes+traced[i].Bytes
		}
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		inc := filepath.Join(dir, "inc")
		mustRun(t, dir, nil, weaveBin, "api", "-o", inc)
		plain := filepath.Join(dir, "plain")
		mustRun(t, dir, nil, "gcc", "-O1", "-g", "-DVG_POOLS", "-I", inc, "-o", plain, src)
		// Lost blocks only: memcheck's reachable ones include stdout's
		// buffer, the C library's.
		vg := memcheck.RunLeaks(t, dir, nil, plain)
		for i, k := range vg[:profile.Reachable] {
			if k.Blocks != sites[i].Blocks || k.Bytes != sites[i].Bytes {
				t.Errorf("%s: memcheck %+v, weave %+v", memcheck.KindWords[i], k, sites[i])
			}
		}
	})
}

// TestLeakGraph: random graphs of blocks laid out by address rank
// (testdata/leaks/graph.c: cycles of lost blocks pointed into from above
// and below, chains, interior pointers) get valgrind memcheck's numbers
// per kind, each way the leak scan can take: with the graph of every
// block and the blocks' nodes kept; for a heap with more pointers than
// that graph holds (dense), with the lost blocks' edges only; for one of
// small blocks (small), without the graph or the nodes.
func TestLeakGraph(t *testing.T) {
	dir := t.TempDir()
	exe, _ := buildLeaks(t, dir, "graph")
	// Without the timing signal: its frames, pushed below the stack
	// pointer at random moments, leave register copies that a later
	// frame's unwritten slots may still hold at exit (an interior
	// pointer: possibly lost), which valgrind's run, without the signal,
	// does not have.
	env := []string{"WEAVE_OUT=", "WEAVE_TIME=off"}
	for _, args := range [][]string{{"1"}, {"2"}, {"3", "dense"}, {"4", "small"}} {
		r := mustRun(t, dir, env, append([]string{exe}, args...)...)
		got, ok := memcheck.ParseKinds(r.stderr)
		if !ok {
			t.Fatalf("%v: no LEAK SUMMARY in:\n%s", args, r.stderr)
		}
		for i, k := range got {
			if k.Blocks == 0 {
				t.Errorf("%v: no %s blocks: %+v", args, memcheck.KindWords[i], got)
			}
		}
		testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
			// Now and then a stale word in valgrind's run (a register or
			// the stack at its exit) points into a lost block, which it
			// then calls possibly lost, and what it reaches from there
			// indirectly lost: up to six runs until they agree (on a
			// loaded machine three runs of valgrind's have given three
			// different summaries, weave's the same each time). Its run
			// too is without the timing signal.
			var vg memcheck.Kinds
			for attempt := 0; attempt < 6; attempt++ {
				if attempt > 0 {
					got, _ = memcheck.ParseKinds(mustRun(t, dir, env, append([]string{exe}, args...)...).stderr)
				}
				if vg = memcheck.RunLeaks(t, dir, []string{"WEAVE_TIME=off"}, append([]string{exe}, args...)...); vg == got {
					return
				}
				t.Logf("%v, attempt %d: weave's leak summary %+v, valgrind's %+v", args, attempt, got, vg)
			}
			t.Errorf("%v: weave's leak summary %+v, valgrind's %+v", args, got, vg)
		})
	}
}

// TestLeakRuntimeOnly: a lost block whose address only the runtime's
// memory holds (a mark's and a region's labels, copied by the runtime, made
// of the address's bytes) is definitely lost, as memcheck says of the
// unwoven program: the runtime's memory is not a root.
func TestLeakRuntimeOnly(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := leaksSource(t, "runtime_only.c")
	api, err := filepath.Abs(filepath.Join("..", "..", "api"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "runtime_only")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O1", "-g", "-I", api, "-o", exe, src)
	r := mustRun(t, dir, []string{"WEAVE_OUT=", "WEAVE_TIME=off"}, exe)
	got, ok := memcheck.ParseKinds(r.stderr)
	if !ok {
		t.Fatalf("no LEAK SUMMARY in:\n%s", r.stderr)
	}
	if got[0].Blocks != 1 || got[3].Blocks != 0 {
		t.Errorf("the block only the runtime points to: %+v, want 1 definitely lost, none reachable", got)
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		plain := filepath.Join(dir, "plain")
		mustRun(t, dir, nil, "gcc", "-O1", "-g", "-I", api, "-o", plain, src)
		if vg := memcheck.RunLeaks(t, dir, nil, plain); vg != got {
			t.Errorf("weave's leak summary %+v, valgrind's of the unwoven program %+v", got, vg)
		}
	})
}

// TestLeakSeccomp: a program under a seccomp filter that kills the
// process for a clone, set before its exec as a container's is
// (testdata/leaks/seccomp.c), exits as the unwoven one does, with its
// leaks reported: the leak scan makes no helper thread there, even when
// WEAVE_LEAK_THREADS asks for some. A filter the program sets itself
// (file(1)'s sandbox) may refuse any system call of the exit's, which
// would then end the process by SIGSYS (gettid did): the program exits
// as the unwoven one, and no profile is written. OpenSSH's sandbox
// refuses openat (EACCES), so the runtime could not read that it was
// under a new filter, and kills the thread for readlink: the main
// thread died in the exit's profile writer, and the sampler kept the
// process (sshd's pre-authentication child: every session hung) or ended
// it by SIGSYS; with the filter set by the seccomp system call
// (libseccomp's way), the refused open tells.
func TestLeakSeccomp(t *testing.T) {
	dir := t.TempDir()
	exe, src := buildLeaks(t, dir, "seccomp")
	plain := filepath.Join(dir, "plain")
	mustRun(t, dir, nil, "gcc", "-O1", "-g", "-o", plain, src)
	for _, arg := range []string{"self", "gettid", "sshd", "sshd-syscall"} {
		want := run(t, dir, nil, plain, arg)
		out := filepath.Join(dir, arg+".prof")
		r := runWithin(t, time.Minute, dir, []string{"WEAVE_OUT=" + out}, exe, arg)
		if r != want || want.code != 0 {
			t.Errorf("woven %s: %+v; plain %+v", arg, r, want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("a profile under the program's own filter (%s)", arg)
		}
	}
	want := mustRun(t, dir, nil, plain, "inherit")
	out := filepath.Join(dir, "p.prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + out, "WEAVE_TIME=off", "WEAVE_LEAK_THREADS=3"}, exe, "inherit")
	if r.stdout != want.stdout {
		t.Errorf("stdout %q, unwoven %q", r.stdout, want.stdout)
	}
	got, ok := memcheck.ParseKinds(r.stderr)
	if !ok {
		t.Fatalf("no LEAK SUMMARY in:\n%s", r.stderr)
	}
	if got[0].Blocks < 6143 || got[0].Blocks > 6144 { // one may look reachable from a stale register copy
		t.Errorf("definitely lost %+v, want the 6144 blocks of site lost", got[0])
	}
	p, err := profile.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := p.MetaValue("leak_scan_threads"); n != "1" {
		t.Errorf("M leak_scan_threads %q under a seccomp filter, want 1", n)
	}
}

// underSeccomp tells whether this process (and so the programs it runs)
// is under a seccomp filter, where the leak scan makes no helper threads.
func underSeccomp() bool {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Seccomp:"); ok {
			return strings.TrimSpace(v) != "0"
		}
	}
	return false
}

// TestLeakParallel: the leak scan's passes split among helper threads
// (WEAVE_LEAK_THREADS=3: raw clones at exit) give the serial scan's
// numbers, site by site, in a program with a thread still running at exit
// and in its forked child (testdata/leaks/parallel.c), and valgrind's
// LEAK SUMMARY; graph.c's heaps, each way the scan can take, give the
// serial scan's numbers (which TestLeakGraph compares with valgrind's).
func TestLeakParallel(t *testing.T) {
	dir := t.TempDir()
	exe, src := buildLeaks(t, dir, "parallel")
	lines := siteLines(t, src)
	var parent *profile.Profile
	var summary memcheck.Kinds
	for _, threads := range []string{"1", "3"} {
		sub := filepath.Join(dir, "t"+threads)
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, dir, []string{"WEAVE_OUT=" + filepath.Join(sub, "p.%p.prof"), "WEAVE_TIME=off", "WEAVE_LEAK_THREADS=" + threads}, exe)
		got, ok := memcheck.ParseKinds(r.stderr)
		if !ok {
			t.Fatalf("threads %s: no LEAK SUMMARY in:\n%s", threads, r.stderr)
		}
		if threads != "1" && got != summary {
			t.Errorf("threads %s: leak summary %+v, serial %+v", threads, got, summary)
		}
		summary = got
		files, _ := filepath.Glob(filepath.Join(sub, "*.prof"))
		if len(files) != 2 {
			t.Fatalf("threads %s: profiles %v, want the parent's and the child's", threads, files)
		}
		for _, f := range files {
			p, err := profile.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			_, child := p.MetaValue("inherited")
			if n, _ := p.MetaValue("leak_scan_threads"); n != threads && !(underSeccomp() && n == "1") {
				t.Errorf("threads %s, child %v: M leak_scan_threads %q", threads, child, n)
			}
			want := map[string][profile.NumLeakKinds]uint64{
				"node": kindBlocks(8, 1592, 0, 0), "thread": kindBlocks(0, 0, 0, 100),
				"global": kindBlocks(0, 0, 0, 50), "interior": kindBlocks(0, 0, 1, 0),
			}
			if child {
				// The parent's blocks are inherited: not the child's.
				want = map[string][profile.NumLeakKinds]uint64{"child": kindBlocks(8, 1592, 0, 0), "node": {}}
			} else {
				parent = p
			}
			for site, w := range want {
				if b := blocksOf(kindsAt(p, src, lines[site])); b != w {
					t.Errorf("threads %s, child %v: site %s: blocks by kind %v, want %v", threads, child, site, b, w)
				}
			}
		}
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		// As in TestLeakKinds: the running thread's DTV moved over.
		vg := memcheck.RunLeaks(t, dir, []string{"VALGRIND_OPTS=--child-silent-after-fork=yes"}, exe)
		l := linkerBlocks(parent)
		vg[2].Blocks, vg[2].Bytes = vg[2].Blocks-l.Blocks, vg[2].Bytes-l.Bytes
		vg[3].Blocks, vg[3].Bytes = vg[3].Blocks+l.Blocks, vg[3].Bytes+l.Bytes
		if vg != summary {
			t.Errorf("weave's leak summary %+v, valgrind's with the linker's %+v as reachable %+v", summary, l, vg)
		}
	})

	graph, _ := buildLeaks(t, dir, "graph")
	for _, args := range [][]string{{"1"}, {"3", "dense"}, {"4", "small"}} {
		var serial, par memcheck.Kinds
		for attempt := 0; attempt < 3; attempt++ {
			for i, threads := range []string{"1", "3"} {
				r := mustRun(t, dir, []string{"WEAVE_OUT=", "WEAVE_TIME=off", "WEAVE_LEAK_THREADS=" + threads}, append([]string{graph}, args...)...)
				k, ok := memcheck.ParseKinds(r.stderr)
				if !ok {
					t.Fatalf("%v: no LEAK SUMMARY in:\n%s", args, r.stderr)
				}
				if i == 0 {
					serial = k
				} else {
					par = k
				}
			}
			if serial == par {
				break
			}
			// A stale word in either run (see TestLeakGraph): again.
			t.Logf("%v, attempt %d: 3 threads %+v, serial %+v", args, attempt, par, serial)
		}
		if serial != par {
			t.Errorf("%v: 3 threads %+v, serial %+v", args, par, serial)
		}
	}
}

// TestLeakThreads: eight threads leaking from one line make one summary
// line, merged across threads; definitely and indirectly lost are
// valgrind's.
func TestLeakThreads(t *testing.T) {
	dir := t.TempDir()
	exe, src := buildLeaks(t, dir, "threadleaks")
	r := mustRun(t, dir, []string{"WEAVE_OUT="}, exe)
	line := fmt.Sprintf("1,280,000 bytes in 8 blocks definitely lost at %s:%d work <- run\n", src, siteLines(t, src)["lost"])
	if !strings.Contains(r.stderr, line) {
		t.Errorf("no line %q in:\n%s", line, r.stderr)
	}
	got, ok := memcheck.ParseKinds(r.stderr)
	if !ok {
		t.Fatalf("no LEAK SUMMARY in:\n%s", r.stderr)
	}
	// The dynamic linker's blocks for the threads (DTVs), known only by
	// interior pointers from the thread descriptors glibc caches, are the
	// C library's bookkeeping: still reachable, never a leak line.
	if strings.Contains(r.stderr, "lost at (hidden") {
		t.Errorf("the C library's blocks reported lost:\n%s", r.stderr)
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		// The C library's thread blocks are possibly lost or reachable
		// depending on which thread stacks were reused: not compared. A
		// stale word left in an exited thread's memory can make a lost
		// block possibly lost, in either tool, depending on scheduling:
		// the two runs are repeated (up to three times) until they agree.
		var vg memcheck.Kinds
		for attempt := 0; attempt < 3; attempt++ {
			if attempt > 0 {
				r := mustRun(t, dir, []string{"WEAVE_OUT="}, exe)
				got, _ = memcheck.ParseKinds(r.stderr)
			}
			vg = memcheck.RunLeaks(t, dir, nil, exe)
			if vg[0] == got[0] && vg[1] == got[1] {
				return
			}
			t.Logf("attempt %d: weave's leak summary %+v, valgrind's %+v", attempt, got, vg)
		}
		t.Errorf("weave's leak summary %+v, valgrind's %+v", got, vg)
	})
}

// TestConfigureLeavesNothing: ./configure CC="weave cc" builds and runs
// conftest (autoconf's probe; cmTC_* is CMake's): without WEAVE_OUT it
// (or with a directory in it) leaves no profile in the user's tree and
// prints no summary. The same
// program under another name writes its profile as usual.
func TestConfigureLeavesNothing(t *testing.T) {
	testtool.Need(t, "gcc", "sh")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "conftest.c"), []byte("#include <stdlib.h>\nint main(void) { return malloc(5) == 0; }\n"), 0o644)
	script := `set -e
$CC -o conftest conftest.c
./conftest 2>conftest.err
test ! -s conftest.err
$CC -o cmTC_1a2b conftest.c
./cmTC_1a2b
$CC -o prog conftest.c
./prog
`
	os.WriteFile(filepath.Join(dir, "configure"), []byte(script), 0o755)
	env := []string{"CC=" + weaveBin + " cc", "WEAVE_CC=gcc"}
	r := run(t, dir, env, "sh", "./configure")
	if r.code != 0 {
		t.Fatalf("configure: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "weave-*.prof"))
	if len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "weave-prog.") {
		t.Errorf("profiles left: %v (want only prog's)", files)
	}
	// WEAVE_OUT=DIR/ (a test suite's): the probes write none there either.
	r = run(t, dir, append(env, "WEAVE_OUT="+filepath.Join(dir, "profs")+"/"), "sh", "./configure")
	files, _ = filepath.Glob(filepath.Join(dir, "profs", "*"))
	if r.code != 0 || len(files) != 1 || !strings.HasPrefix(filepath.Base(files[0]), "weave-prog.") {
		t.Errorf("WEAVE_OUT=profs/: exit %d, profiles %v (want only prog's)\n%s", r.code, files, r.stderr)
	}
}

// TestUnderValgrind: a woven program run under memcheck, as test suites
// do (sed's runs sed under valgrind --error-exitcode=1), makes no error
// of its own and leaves memcheck's leak check true. The leak scan's reads
// of stacks and unwritten blocks, and the free's read of the C library's
// chunk header, were reported (sed's bug32082.sh and newline-dfa-bug.sh
// failed); the scan also found memcheck's own records of the blocks
// (every block reachable) and left their addresses in the runtime's
// memory, where memcheck found them too. Under valgrind the runtime does
// not scan: memcheck's summary is the one it gives with WEAVE_LEAK_SCAN=0.
// Its own stack (ownstack.c) is one memcheck knows: no warning either.
func TestUnderValgrind(t *testing.T) {
	testtool.Need(t, "gcc", "valgrind")
	dir := t.TempDir()
	src := leaksSource(t, "kinds.c")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", "woven", src)
	mustRun(t, dir, nil, "gcc", "-O2", "-g", "-o", "plain", src)
	vg := []string{"valgrind", "--error-exitcode=99", "--run-libc-freeres=no", "--leak-check=full", "--show-leak-kinds=none", "--errors-for-leak-kinds=none"}
	p := run(t, dir, nil, append(vg, "./plain")...)
	if p.code == 99 {
		t.Fatalf("the plain program has memcheck errors:\n%s", p.stderr)
	}
	env := func(name string) []string {
		return []string{"WEAVE_OUT=" + filepath.Join(dir, name+".prof"), "WEAVE_SUMMARY=1", "WEAVE_CONTROL=0", "WEAVE_LOG=" + filepath.Join(dir, name+".log")}
	}
	want := memcheck.RunLeaks(t, dir, env("noscan"), "./woven")
	w := run(t, dir, env("kinds"), append(vg, "--show-leak-kinds=all", "./woven")...)
	var errs []string
	for _, l := range strings.Split(w.stderr, "\n") {
		// memcheck's warnings too: the exit writer's jump to the
		// runtime's own stack was 'client switching stacks?' (json-c's
		// suite keeps each test's memcheck output).
		if strings.Contains(l, "== Invalid") || strings.Contains(l, "uninitialised") || strings.Contains(l, "== Warning:") && !strings.Contains(p.stderr, "== Warning:") {
			errs = append(errs, l)
		}
	}
	if w.code != p.code || w.stdout != p.stdout || len(errs) > 0 {
		t.Errorf("exit %d (plain %d), memcheck's errors:\n%s", w.code, p.code, strings.Join(errs, "\n"))
	}
	if got, ok := memcheck.ParseKinds(w.stderr); !ok || got != want {
		t.Errorf("memcheck's leak summary %+v, with WEAVE_LEAK_SCAN=0 %+v", got, want)
	}
	if r := run(t, dir, nil, weaveBin, "check", filepath.Join(dir, "kinds.prof")); !strings.Contains(r.stdout+r.stderr, "under valgrind") {
		t.Errorf("weave check does not say why there is no leak scan: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// memcheck redirects the executable's malloc too (the runtime's
	// interposed one): the C library's allocations and frees never reach
	// the runtime, which the report says, rather than print totals
	// that look complete (2 allocations of hid.c's 203).
	if r := run(t, dir, nil, weaveBin, "report", filepath.Join(dir, "kinds.prof")); !strings.Contains(r.stdout, "ran under valgrind, whose malloc and free replace") {
		t.Errorf("the report does not say that valgrind's malloc hid the C library's allocations:\n%s", r.stdout)
	}
	// --soname-synonyms=somalloc=nouserintercepts: memcheck leaves the
	// executable's malloc alone, so every call reaches the runtime's (the
	// C library's malloc behind it is memcheck's), and the profile's
	// totals are memcheck's of the same run (it had hidden off: the
	// stdout buffer's and the C library's other blocks unseen).
	nu := run(t, dir, env("nouser"), append(vg, "--soname-synonyms=somalloc=nouserintercepts", "./woven")...)
	m, ok := memcheck.Parse(nu.stderr)
	vt := totals{Allocs: int64(m.Allocs), Frees: int64(m.Frees), BytesAllocated: int64(m.Bytes), BytesInUse: int64(m.InUseBytes), BlocksInUse: int64(m.InUseBlocks)}
	if got := reportTotals(t, filepath.Join(dir, "nouser.prof")); !ok || got != vt {
		t.Errorf("nouserintercepts: weave's totals %+v, memcheck's of the same run %+v", got, vt)
	}
	// Without WEAVE_OUT, the profile is named after the program, not
	// after valgrind's tool.
	run(t, dir, []string{"WEAVE_SUMMARY=0"}, append(vg, "./woven")...)
	named, _ := filepath.Glob(filepath.Join(dir, "weave-*.prof"))
	if len(named) != 1 || !strings.HasPrefix(filepath.Base(named[0]), "weave-woven.") {
		t.Fatalf("profiles %v, want one weave-woven.PID.prof", named)
	}
	// weave report ./woven, the program for its profile: where it is.
	if r := run(t, dir, nil, weaveBin, "report", "./woven"); r.code == 0 || !strings.Contains(r.stderr, "a program, not a profile") || !strings.Contains(r.stderr, filepath.Base(named[0])) {
		t.Errorf("weave report ./woven: exit %d, %s", r.code, r.stderr)
	}
}

// TestDlcloseBeforeExit: a woven shared library unloaded before exit;
// the profile still names its functions and files, the program exits as
// it would, and the lost blocks are valgrind's.
func TestDlcloseBeforeExit(t *testing.T) {
	dir := t.TempDir()
	testtool.Need(t, "gcc")
	src := func(name string) string { return leaksSource(t, name) }
	lib, exe := filepath.Join(dir, "libw.so"), filepath.Join(dir, "main")
	env := []string{"WEAVE_CC=gcc"}
	mustRun(t, dir, env, weaveBin, "cc", "-shared", "-fPIC", "-g", "-o", lib, src("dlclose_lib.c"))
	mustRun(t, dir, env, weaveBin, "cc", "-g", "-o", exe, src("dlclose_main.c"), "-ldl")
	prof := filepath.Join(dir, "m.prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe, lib)
	if r.stdout != "closed\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range p.Funcs {
		found = found || f.Name == "lib_make" && f.File == src("dlclose_lib.c")
	}
	if !found {
		t.Errorf("no lib_make of %s in the profile", src("dlclose_lib.c"))
	}
	got, ok := memcheck.ParseKinds(r.stderr)
	if !ok {
		t.Fatalf("no LEAK SUMMARY:\n%s", r.stderr)
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		vg := memcheck.RunLeaks(t, dir, nil, exe, lib)
		if vg[0] != got[0] || vg[1] != got[1] {
			t.Errorf("weave's leak summary %+v, valgrind's %+v", got, vg)
		}
	})
	// The same library in a program that was not woven: the program's
	// free is the C library's, so the library's runtime does not see the
	// block the program freed. Nothing calls it a leak: the summary says
	// "at most" and "not seen freed", the report and weave check why.
	plain := filepath.Join(dir, "plain")
	mustRun(t, dir, nil, "gcc", "-o", plain, src("dlclose_main.c"), "-ldl")
	pprof := filepath.Join(dir, "p.prof")
	r = mustRun(t, dir, []string{"WEAVE_OUT=" + pprof, "WEAVE_SUMMARY=1"}, plain, lib)
	if !strings.Contains(r.stderr, "in use at exit: at most ") || !strings.Contains(r.stderr, "not seen freed (frees by code that was not woven are not seen") || strings.Contains(r.stderr, "top leaks") {
		t.Errorf("unwoven program: summary\n%s", r.stderr)
	}
	if pp, err := profile.ReadFile(pprof); err != nil || pp.FreesSeen() {
		t.Errorf("unwoven program: profile says frees were seen (%v)", err)
	}
	if rep := mustRun(t, dir, nil, weaveBin, "report", "--tables", "leaks", pprof).stdout; !strings.Contains(rep, "IN USE AT EXIT: blocks not seen freed") || strings.Contains(rep, "MEMORY LEAKS") {
		t.Errorf("unwoven program: report\n%s", rep)
	}
	if c := run(t, dir, nil, weaveBin, "check", pprof); c.code != 2 || !strings.Contains(c.stderr, "frees by code that was not woven were not seen") {
		t.Errorf("unwoven program: weave check exit %d\n%s", c.code, c.stderr)
	}
}

func linkerBlocks(p *profile.Profile) (c profile.LeakCount) {
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc || n.Site.File != "(dynamic linker)" || n.Leaks == nil {
			continue
		}
		for _, k := range n.Leaks {
			c.Blocks += k.Blocks
			c.Bytes += k.Bytes
		}
	}
	return c
}

// TestLeakUntouched: the leak scan reads no page of the program's that the
// program never touched (testdata/leaks/untouched.c: 128 MiB of static
// arrays, one page of them written; pagemap read after the scan shows as
// many pages mapped as in the unwoven run, where a scan that read them all
// mapped every one), nor of its own tables beyond those it wrote (at most
// runtimePages more pages of private memory mapped after the scan than
// in the unwoven run: the scan walking its 1 MiB radix root and its
// 2 MiB page-index top mapped some 700 more), and still finds the block
// held only from the written page reachable and the dropped one lost. And
// every map of 2 MiB or more the runtime makes asks for its page size
// (THP "always" gave woven Lua three times its memory).
func TestLeakUntouched(t *testing.T) {
	const runtimePages = 128 // 512 KiB; 58 on x86-64 with gcc 12, 730 before
	dir := t.TempDir()
	exe, src := buildLeaks(t, dir, "untouched")
	plain := filepath.Join(dir, "plain")
	mustRun(t, dir, nil, "gcc", "-O1", "-g", "-o", plain, src)
	want := mustRun(t, dir, nil, plain)
	if !strings.Contains(want.stdout, "untouched: 0 pages mapped; sparse: 1\n") {
		t.Fatalf("the unwoven program's pages: %q", want.stdout)
	}
	prof := filepath.Join(dir, "u.prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe)
	if r.stdout != want.stdout {
		t.Errorf("stdout after the leak scan %q, unwoven %q", r.stdout, want.stdout)
	}
	count := func(stderr, what string) int {
		m := regexp.MustCompile(what + `: (-?\d+)`).FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("no count of %s in:\n%s", what, stderr)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	const pages, unadvised = "private pages mapped", "large maps without page size advice"
	if w, p := count(r.stderr, pages), count(want.stderr, pages); w-p > runtimePages {
		t.Errorf("%d private pages mapped after the leak scan, %d unwoven: the runtime's %d more than %d", w, p, w-p, runtimePages)
	}
	if w, p := count(r.stderr, unadvised), count(want.stderr, unadvised); w != p {
		t.Errorf("%d anonymous maps of 2 MiB or more without page size advice, %d unwoven: the runtime's may take huge pages unasked", w, p)
	}
	checkSiteKinds(t, prof, src, map[string][profile.NumLeakKinds]uint64{
		"lost":   kindBlocks(1, 0, 0, 0),
		"kept":   kindBlocks(0, 0, 0, 1),
		"sparse": kindBlocks(0, 0, 0, 1),
	})
}

// linkerSupp is a memcheck suppression of the dynamic linker's blocks (a
// thread's DTV), which weave counts as still reachable (roots) and memcheck
// as possibly lost (an interior pointer from a thread descriptor): the
// comparisons below take both out.
const linkerSupp = "{\n   dynamic-linker\n   Memcheck:Leak\n   match-leak-kinds: all\n   ...\n   obj:*/ld-linux*.so*\n}\n"

// withoutLinker is weave's leak summary less the dynamic linker's blocks.
func withoutLinker(got memcheck.Kinds, p *profile.Profile) memcheck.Kinds {
	l := linkerBlocks(p)
	got[3].Blocks -= l.Blocks
	got[3].Bytes -= l.Bytes
	return got
}

// TestLeakStale: blocks whose only pointers lie in stack frames that are
// dead at exit (testdata/leaks/stale.c: main's after it returned, a
// returned callee's, under exit() from a deep call, quick_exit() or a
// signal handler's exit(), an ended thread's, a waiting thread's dead
// frames) are definitely lost, and a live frame's, or one a live frame
// keeps in a callee-saved register across the call to exit, still
// reachable: weave's
// woven -O2 build gives memcheck's leak summary of the plain -O2 build,
// kind by kind, blocks and bytes, built by gcc and by clang.
func TestLeakStale(t *testing.T) {
	leaksLikeMemcheck(t, "stale.c", 64, nil, "main", "callee", "deep", "quick", "handler", "thread", "running", "live", "register")
}

// TestLeakReused: a realloc-grown array whose only pointer lies in freed
// memory that the allocator handed out again, to a lost block that never
// wrote that word (testdata/leaks/reuse.c), is definitely lost, as memcheck
// says; it was indirectly lost when the scan read the stale word.
func TestLeakReused(t *testing.T) {
	leaksLikeMemcheck(t, "reuse.c", 2, nil, "2048")
}

// TestLeakHeuristics: blocks held only by pointers into their middle
// that memcheck's default leak heuristics (length64, newarray, stdstring)
// take for pointers to them are still reachable, with what they point
// to; the pointers that do not fit leave their blocks possibly lost
// (testdata/leaks/heuristics.c).
func TestLeakHeuristics(t *testing.T) {
	leaksLikeMemcheck(t, "heuristics.c", 0, nil, "all")
}

// nestedKinds: testdata/leaks/nested.c's blocks by kind, site by site, as
// the program holds them.
var nestedKinds = map[string][profile.NumLeakKinds]uint64{
	"arena":   kindBlocks(0, 0, 0, 1),
	"first":   kindBlocks(0, 0, 0, 1),
	"child":   kindBlocks(0, 0, 0, 1),
	"far":     kindBlocks(0, 0, 0, 1),
	"dropped": kindBlocks(600, 0, 0, 0),
}

// TestLeakNested: blocks of a pointcut allocator nested in a counted
// block (testdata/leaks/nested.c: slots of an arena from malloc) are found
// by the pointers to them wherever they lie in it: held slots and the
// arena still reachable, dropped ones definitely lost, as the program
// holds them; and memcheck, which sees the arena only, calls it reachable.
func TestLeakNested(t *testing.T) {
	dir := t.TempDir()
	src := leaksSource(t, "nested.c")
	exe := filepath.Join(dir, "nested")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--alloc", "arena_alloc:size=1", "--alloc", "slot_alloc:size=1",
		"-O1", "-g", "-o", exe, src)
	prof := filepath.Join(dir, "n.prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe)
	if r.stdout != "38592 bytes of slots\n" {
		t.Fatalf("nested: %q", r.stdout)
	}
	checkSiteKinds(t, prof, src, nestedKinds)
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		plain := filepath.Join(dir, "plain")
		mustRun(t, dir, nil, "gcc", "-O1", "-g", "-o", plain, src)
		if k := memcheck.RunLeaks(t, dir, nil, plain); k[0].Blocks != 0 || k[3].Blocks != 2 || k[3].Bytes != 65536+4096 {
			t.Errorf("memcheck's leak summary %+v: want the arena and stdout's buffer still reachable, nothing lost", k)
		}
	})
}

// TestLeakNestedSameAddress: nested.c with its first slot at the arena's
// own address. The scan classifies both blocks as the pointers to them
// say: the arena and that slot still reachable through arena and keep[0],
// the rest as in TestLeakNested; no block is left unclassified, and the
// kinds sum to the blocks in use. Before, the scan kept one block an
// address and the report's "not classified" row held the other.
func TestLeakNestedSameAddress(t *testing.T) {
	dir := t.TempDir()
	src := leaksSource(t, "nested.c")
	exe := filepath.Join(dir, "nested0")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--alloc", "arena_alloc:size=1", "--alloc", "slot_alloc:size=1",
		"-DFIRST=0", "-O1", "-g", "-o", exe, src)
	prof := filepath.Join(dir, "n0.prof")
	if r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, exe); r.stdout != "38592 bytes of slots\n" {
		t.Fatalf("nested0: %q", r.stdout)
	}
	var out struct {
		Totals struct {
			InUse      uint64                                    `json:"blocks_in_use"`
			BytesInUse uint64                                    `json:"bytes_in_use"`
			Kinds      map[string]struct{ Blocks, Bytes uint64 } `json:"leak_kinds"`
		} `json:"totals"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, dir, nil, weaveBin, "report", "--format", "json", prof).stdout), &out); err != nil {
		t.Fatal(err)
	}
	var blocks, bytes uint64
	for _, c := range out.Totals.Kinds {
		blocks += c.Blocks
		bytes += c.Bytes
	}
	if u := out.Totals.Kinds["unclassified"]; blocks != out.Totals.InUse || bytes != out.Totals.BytesInUse || u.Blocks != 0 {
		t.Errorf("kinds %+v sum to %d blocks, %d bytes; in use %d, %d; want the sums equal, nothing unclassified",
			out.Totals.Kinds, blocks, bytes, out.Totals.InUse, out.Totals.BytesInUse)
	}
	checkSiteKinds(t, prof, src, nestedKinds)
	if text := mustRun(t, dir, nil, weaveBin, "report", prof).stdout; strings.Contains(text, "not classified") {
		t.Errorf("a \"not classified\" row in the report:\n%s", text)
	}
}

// leaksLikeMemcheck builds testdata/leaks/<name> woven and plain (-O2 -g)
// by gcc and by clang and runs each with each argument: weave's leak
// summary of the woven build, less the dynamic linker's blocks, must be
// memcheck's of the plain build, with definite blocks definitely lost.
// each, if not nil, checks each woven run further.
func leaksLikeMemcheck(t *testing.T, name string, definite uint64, each func(t *testing.T, arg string, r result, p *profile.Profile), args ...string) {
	src := leaksSource(t, name)
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc, "valgrind")
			dir := t.TempDir()
			woven, plain := filepath.Join(dir, "woven"), filepath.Join(dir, "plain")
			mustRun(t, dir, []string{"WEAVE_CC=" + cc}, weaveBin, "cc", "-O2", "-g", "-o", woven, src, "-pthread")
			mustRun(t, dir, nil, cc, "-O2", "-g", "-o", plain, src, "-pthread")
			supp := filepath.Join(dir, "linker.supp")
			if err := os.WriteFile(supp, []byte(linkerSupp), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, arg := range args {
				prof := filepath.Join(dir, arg+".prof")
				r := run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TIME=off", "WEAVE_SUMMARY=1"}, woven, arg)
				got, ok := memcheck.ParseKinds(r.stderr)
				if r.code != 0 || !ok {
					t.Fatalf("%s: exit %d, no LEAK SUMMARY in:\n%s", arg, r.code, r.stderr)
				}
				p, err := profile.ReadFile(prof)
				if err != nil {
					t.Fatal(err)
				}
				if each != nil {
					each(t, arg, r, p)
				}
				got = withoutLinker(got, p)
				if got[0].Blocks != definite {
					t.Errorf("%s: definitely lost %+v, want %d blocks", arg, got[0], definite)
				}
				vg := memcheck.RunLeaks(t, dir, []string{"VALGRIND_OPTS=--suppressions=" + supp}, plain, arg)
				if got != vg {
					t.Errorf("%s: weave's leak summary %+v, memcheck's (plain -O2) %+v", arg, got, vg)
				}
			}
		})
	}
}
