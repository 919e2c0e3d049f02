package runtime

import (
	"fmt"
	"os/exec"
	"regexp"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

func TestThreads(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "threadchurn")
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
			r := run(t, build(t, cc, "threadchurn", tsan...), nil, "100000", "64")
			if strings.Contains(r.stderr, "ThreadSanitizer") {
				t.Fatalf("ThreadSanitizer reports:\n%s", r.stderr)
			}
			checkThreadsSized(t, r, 100000, 64)
			for _, prog := range []string{"nowoven", "forkcounts", "overdeep", "churn"} {
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
	checkOwnTally(t, "granules")
}

// checkOwnTally runs the test program prog and checks that the runtime's
// totals equal the program's own tally, and that its profile agrees.
func checkOwnTally(t *testing.T, prog string) {
	t.Helper()
	r := run(t, build(t, "gcc", prog), nil)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got, want := weaveSummary(t, r), summaryOf(t, r.stdout, "")
	if got != want {
		t.Errorf("runtime says %+v, the program %+v\n%s", got, want, r.stderr)
	}
	checkConsistent(t, readProfile(t, r.profile()), got)
}

// TestSideTableManyNodes: small blocks of contexts whose node indices do
// not fit a fine-tree slot (over 2^20 contexts) take the spill table; the
// runtime's totals must equal the program's own tally.
func TestSideTableManyNodes(t *testing.T) {
	t.Parallel()
	checkOwnTally(t, "bignodes")
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

// TestChildCacheGrows: threads that call more functions from one node
// than a thread's first child cache holds (so each replaces it by the
// larger one), with a signal handler's woven code running between the
// guard's reads, count every call at its own node: with the C guard and
// with the x86-64 asm one.
func TestChildCacheGrows(t *testing.T) {
	for _, guard := range []string{"c", "x64"} {
		t.Run(guard, func(t *testing.T) {
			t.Parallel()
			var flags []string
			if guard == "x64" {
				if goruntime.GOARCH != "amd64" {
					t.Skip("the x86-64 guard")
				}
				flags = []string{"-DWOVEN_X64"}
			}
			const rounds = 20000
			r := run(t, build(t, "gcc", "manyfns", flags...), nil, strconv.Itoa(rounds))
			var gotRounds, handled int
			if _, err := fmt.Sscanf(r.stdout, "rounds %d handled %d", &gotRounds, &handled); err != nil || r.code != 0 || gotRounds != rounds {
				t.Fatalf("exit %d, %q\n%s", r.code, r.stdout, r.stderr)
			}
			// A handler that interrupted the runtime does not push its
			// own frame: its calls then count at the interrupted
			// thread's node, loop's, but never fewer there.
			p := readProfile(t, r.profile())
			looped, all := 0, uint64(0)
			for _, n := range p.called() {
				if !strings.HasPrefix(n.Func.Name, "f") {
					continue
				}
				all += n.Calls
				if n.Parent != nil && n.Parent.Func != nil && n.Parent.Func.Name == "loop" {
					looped++
					if n.Calls < rounds {
						t.Errorf("thread %d: loop > %s called %d times, want %d", n.Thread.ID, n.Func.Name, n.Calls, rounds)
					}
				}
			}
			if looped != 3*256 {
				t.Errorf("%d loop > f nodes, want %d (3 threads, 256 functions)", looped, 3*256)
			}
			if lo, hi := uint64(3*256*rounds), uint64(3*256*rounds+64*handled); all < lo || all > hi {
				t.Errorf("f functions called %d times, want %d-%d", all, lo, hi)
			}
			t.Logf("handler ran %d times; f called %d times", handled, all)
		})
	}
}

// TestBinCarry: a thread's bins, 16-bit counts carried into the shared
// table, give exact counts past 65535 of a size, read live (main) and
// after the thread's exit (worker).
func TestBinCarry(t *testing.T) {
	t.Parallel()
	r := run(t, build(t, "gcc", "bincarry"), nil)
	got := weaveSummary(t, r)
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	for _, want := range []profile.Bin{
		{Size: 40, Allocs: 200100, Frees: 200000, Bytes: 200100 * 40, FreedBytes: 200000 * 40},
		{Size: 300, Allocs: 70000, Frees: 70000, Bytes: 70000 * 300, FreedBytes: 70000 * 300},
		{Size: profile.LargeBin, Allocs: 70000, Frees: 70000, Bytes: 70000 * 5000, FreedBytes: 70000 * 5000},
	} {
		if b := p.bin(want.Size); b != want {
			t.Errorf("bin %+v, want %+v", b, want)
		}
	}
}

// TestFreeEnds: the advice's fast paths and their rare ends under the C
// library's malloc (testdata/freeends.c: a free in the tree the chunk
// header does not name, frees down from the heap's peak, scrubbed
// blocks), with the tcache and without it (then a request of 125 bytes
// gets a chunk of 160, which names the coarse tree); with the runtime
// built as for a library or an executable's link (WEAVE_EXECUTABLE, whose
// thread-locals are local-exec: TPOFF32 relocations, not the GOT's
// GOTTPOFF). The woven totals equal the program's tally, the runtime's
// summary valgrind's, and a freed block of 17-256 bytes handed out again
// reads 0 past glibc's 16.
func TestFreeEnds(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{nil, {"-DWEAVE_EXECUTABLE"}} {
		if goruntime.GOARCH == "amd64" {
			testtool.Need(t, "readelf")
			out, err := exec.Command("readelf", "-rW", object(t, "gcc", flags...)).Output()
			if err != nil {
				t.Fatal(err)
			}
			le := regexp.MustCompile(`R_X86_64_TPOFF32 .* rt_local`).Match(out)
			ie := regexp.MustCompile(`R_X86_64_GOTTPOFF .* rt_local`).Match(out)
			if le != (flags != nil) || ie == (flags != nil) {
				t.Errorf("runtime built with %v: rt_local local-exec %v, initial-exec %v", flags, le, ie)
			}
		}
		exe := build(t, "gcc", "freeends", flags...)
		for _, env := range [][]string{nil, {"GLIBC_TUNABLES=glibc.malloc.tcache_count=0"}} {
			r := run(t, exe, env)
			if r.code != 0 {
				t.Fatalf("%v %v: exit %d\n%s", flags, env, r.code, r.stderr)
			}
			p := readProfile(t, r.profile())
			if got, want := p.wovenTotals(), summaryOf(t, r.stdout, ""); got != want {
				t.Errorf("%v %v: woven allocations %+v, the program's tally %+v", flags, env, got, want)
			}
			if env == nil && !strings.Contains(r.stdout, ", dirty bytes 0\n") || strings.Contains(r.stdout, "reused 0,") {
				t.Errorf("%v %v: freed blocks not scrubbed, or none reused:\n%s", flags, env, r.stdout)
			}
			checkConsistent(t, p, weaveSummary(t, r))
			checkValgrind(t, weaveSummary(t, r), exe, env)
		}
	}
}

// TestSideTableArenas: threads alive at once, each allocating in its own
// C library arena (a heap at a 64 MiB boundary) blocks for both of the
// side table's trees: each arena writes one page of slots (a coarse leaf
// and the fine leaf of its first MiB share it, side.c), not one a tree;
// the totals equal valgrind's.
func TestSideTableArenas(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "arenas")
	table := func(threads int) (heapSummary, *prof, uint64, uint64) {
		r := run(t, exe, []string{"WEAVE_STATS=1"}, strconv.Itoa(threads))
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		m := regexp.MustCompile(`side table ([0-9,]+) bytes`).FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("no side table in the summary:\n%s", r.stderr)
		}
		n, _ := strconv.ParseUint(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		return weaveSummary(t, r), readProfile(t, r.profile()), n, midPages(t, r.stdout, threads)
	}
	_, _, one, mids1 := table(1)
	got, p, eight, mids8 := table(8)
	// 7 arenas more: a page of slots each, and the pages of mids for the
	// address range they span, which depends on where the C library put
	// them (thread stacks between them spread them over a GiB or more).
	// And up to two pages for the main heap's hidden blocks (stdout's
	// buffer, the C library's TLS for each thread): their fine slots
	// share the coarse ones' page only when the heap's first MiB is the
	// first of a coarse leaf's 4 (where brk starts is random), and eight
	// threads' TLS blocks may cross into the next page of slots.
	want := one + 7*4096 + (mids8-mids1)*4096 + 2*4096
	if eight > want {
		t.Errorf("side table: %d bytes with 1 thread, %d with 8 (mid pages %d and %d): %d a thread more, want about a page", one, eight, mids1, mids8, (eight-one)/7)
	}
	if w := p.wovenTotals(); w != (heapSummary{8 * 20 * (24 + 200), 8 * 40, 8 * 80, 8 * 40, 8 * 40 * (24 + 200)}) {
		t.Errorf("woven allocations %+v", w)
	}
	checkConsistent(t, p, got)
	checkValgrind(t, got, exe, nil, "8")
}

// midPages is the number of the side table's mid pages (side.c: a fine
// mid's page holds the leaves of 2^29 bytes of addresses, a coarse one's
// of 2^31) that the blocks arenas.c printed fall in.
func midPages(t *testing.T, stdout string, threads int) uint64 {
	t.Helper()
	pages := map[[2]uint64]bool{}
	for _, m := range regexp.MustCompile(`block 0x([0-9a-f]+)`).FindAllStringSubmatch(stdout, -1) {
		a, _ := strconv.ParseUint(m[1], 16, 64)
		pages[[2]uint64{0, a >> 29}] = true
		pages[[2]uint64{1, a >> 31}] = true
	}
	if len(pages) < 2 || strings.Count(stdout, "block ") != threads {
		t.Fatalf("want %d block addresses, the program printed:\n%s", threads, stdout)
	}
	return uint64(len(pages))
}

// TestCrossFree: threads free each other's blocks of both trees, and the
// C library's tcache then gives each thread blocks in the others' arenas
// (crossfree.c): a free whose slot the thread's leaf caches do not give
// walks both trees (free_miss), and caches the leaf only for its own
// block. Totals equal the program's tally and valgrind's; each thread's
// last block is definitely lost.
func TestCrossFree(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "crossfree")
	for _, threads := range []string{"1", "4"} {
		r := run(t, exe, nil, threads, "20000")
		if r.code != 0 {
			t.Fatalf("%s threads: exit %d\n%s", threads, r.code, r.stderr)
		}
		p := readProfile(t, r.profile())
		got := weaveSummary(t, r)
		if w, want := p.wovenTotals(), summaryOf(t, r.stdout, ""); w != want {
			t.Errorf("%s threads: woven allocations %+v, the program's tally %+v", threads, w, want)
		}
		lost := regexp.MustCompile(`definitely lost: [\d,]+ bytes in [\d,]+ blocks`)
		if m := lost.FindString(r.stdout); m == "" || !strings.Contains(strings.ReplaceAll(r.stderr, ",", ""), m) {
			t.Errorf("%s threads: the program says %q; the summary:\n%s", threads, m, r.stderr)
		}
		checkConsistent(t, p, got)
		checkValgrind(t, got, exe, nil, threads, "20000")
	}
}
