package runtime

// Tests of the runtime's timing (WEAVE_TIME, runtime/timing.c) with the
// hand-woven programs of testdata: every mode leaves heap accounting, call
// counts, threads, fork, longjmp and signals as they are, and writes the
// time records profile/format.go describes.

import (
	"math"
	"os"
	"os/exec"
	"regexp"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestTimingModes: the heap summary, the profile's counts and its shape do
// not depend on the timing mode; exact and sampled write D records and
// their metadata, off writes none.
func TestTimingModes(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "widgets10k")
	var want heapSummary
	for i, mode := range []string{"off", "sampled", "exact"} {
		r := run(t, exe, []string{"WEAVE_TIME=" + mode})
		got := weaveSummary(t, r)
		if i == 0 {
			want = got
		} else if got != want {
			t.Errorf("%s: summary %+v, off says %+v", mode, got, want)
		}
		p := readProfile(t, r.profile())
		checkConsistent(t, p, got)
		tm := p.timeMeta()
		timed, total := p.timed()
		switch mode {
		case "off":
			if len(timed) != 0 || len(tm) != 0 {
				t.Errorf("off: time records %v, %d timed nodes", tm, len(timed))
			}
		case "sampled":
			if tm["time_mode"] != "sampled" || tm["time_sampler"] != "thread" || tm["time_period_ns"] == "" {
				t.Errorf("sampled: metadata %v", tm)
			}
		case "exact":
			if tm["time_mode"] != "exact" || tm["time_overhead_ns"] == "" || tm["time_call_overhead_ps"] == "" {
				t.Errorf("exact: metadata %v", tm)
			}
			// Every function that ran has self time: the runtime
			// subtracts its own measured cost per call, but never takes a
			// context below zero (TestTimingUnderLoad).
			for _, n := range p.called() {
				if n.Time == 0 {
					t.Errorf("exact: node %d (%s) called %d times has no time", n.ID, n.Func.Name, n.Calls)
				}
			}
			if total == 0 {
				t.Error("exact: no time")
			}
		}
	}
}

// TestTimingValgrind: exact mode allocates nothing from the program's heap
// (valgrind agrees with the runtime's totals).
func TestTimingValgrind(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "widgets10k")
	r := run(t, exe, []string{"WEAVE_TIME=exact"})
	got := weaveSummary(t, r)
	checkValgrind(t, got, exe, []string{"WEAVE_TIME=exact"})
}

// TestTimingTSan: exact mode, like sampled mode (TestTSan), is free of
// data races.
func TestTimingTSan(t *testing.T) {
	for _, cc := range []string{"clang", "gcc"} {
		t.Run(cc, func(t *testing.T) {
			t.Parallel()
			tsan := []string{"-fsanitize=thread"}
			r := run(t, build(t, cc, "threadchurn", tsan...), []string{"WEAVE_TIME=exact"}, "10000")
			if strings.Contains(r.stderr, "ThreadSanitizer") {
				t.Fatalf("ThreadSanitizer reports:\n%s", r.stderr)
			}
			checkThreads(t, r, 10000)
			if timed, _ := readProfile(t, r.profile()).timed(); len(timed) == 0 {
				t.Error("no D records")
			}
		})
	}
}

// TestTimingThreads: with 8 threads, every thread's tree has times, in
// both modes.
func TestTimingThreads(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "threadchurn")
	for _, mode := range []string{"exact", "sampled"} {
		r := run(t, exe, []string{"WEAVE_TIME=" + mode}, "300000")
		checkThreads(t, r, 300000)
		nodes, _ := readProfile(t, r.profile()).timed()
		timed := map[int]bool{}
		for _, n := range nodes {
			timed[n.Thread.ID] = true
		}
		// Sampled mode charges CPU time: main, waiting in pthread_join,
		// may have none; every worker has some.
		if len(timed) < 8 {
			t.Errorf("%s: times in %d threads, want 8 or 9", mode, len(timed))
		}
	}
}

// TestTimingForkLongjmpSignal: fork (both processes write times), longjmp
// (the stack re-synchronises; allocations are charged as without timing),
// a SIGPROF handler running woven code, and recursion past the maximum
// depth, in both modes.
func TestTimingForkLongjmpSignal(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"exact", "sampled"} {
		env := []string{"WEAVE_TIME=" + mode}

		dir := t.TempDir()
		r := run(t, build(t, "gcc", "forkcounts"), append(env, "WEAVE_OUT="+dir+"/p.%p.prof"))
		if r.code != 0 {
			t.Fatalf("%s fork: exit %d\n%s", mode, r.code, r.stderr)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != 2 {
			t.Fatalf("%s fork: profiles %v", mode, entries)
		}
		for _, e := range entries {
			path := dir + "/" + e.Name()
			if tm := readProfile(t, path).timeMeta(); tm["time_mode"] != mode {
				t.Errorf("%s fork: %s metadata %v", mode, e.Name(), tm)
			}
		}

		r = run(t, build(t, "gcc", "jumpback"), env)
		p := readProfile(t, r.profile())
		want := map[uint64]string{11: "c<b<a<main", 13: "after<a<main", 17: "a<main", 19: "main"}
		for _, n := range p.allocs() {
			if b, c := n.Heap.TotalBytes(), chain(n); want[b] != c {
				t.Errorf("%s longjmp: %d-byte block charged to %q, want %q", mode, b, c, want[b])
			}
		}

		r = run(t, buildSignal(t), env)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "handled ") {
			t.Fatalf("%s signal: exit %d, %q\n%s", mode, r.code, r.stdout, r.stderr)
		}
		checkConsistent(t, readProfile(t, r.profile()), weaveSummary(t, r))

		r = run(t, build(t, "gcc", "overdeep"), env)
		// The woven allocations (the C library's for the thread are hidden).
		if got := readProfile(t, r.profile()).wovenTotals(); r.code != 0 || got != (heapSummary{6, 3, 3, 0, 6}) {
			t.Fatalf("%s deep: exit %d, woven allocations %+v\n%s", mode, r.code, got, r.stderr)
		}
	}
}

// TestTimingEnv: an unknown WEAVE_TIME warns and samples; WEAVE_TIME_CLOCK
// picks exact mode's clock.
func TestTimingEnv(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "empty")
	r := run(t, exe, []string{"WEAVE_TIME=fast"})
	if !regexp.MustCompile(`==weave \d+== WEAVE_TIME: want exact, sampled or off; using sampled\n`).MatchString(r.stderr) {
		t.Errorf("no warning:\n%s", r.stderr)
	}
	if tm := readProfile(t, r.profile()).timeMeta(); tm["time_mode"] != "sampled" {
		t.Errorf("WEAVE_TIME=fast: metadata %v", tm)
	}
	for _, clock := range []string{"monotonic", "tsc"} {
		r := run(t, exe, []string{"WEAVE_TIME=exact", "WEAVE_TIME_CLOCK=" + clock})
		p := readProfile(t, r.profile())
		tm := p.timeMeta()
		if timed, _ := p.timed(); tm["time_clock"] != clock || len(timed) == 0 {
			t.Errorf("WEAVE_TIME_CLOCK=%s: metadata %v, %d timed nodes", clock, tm, len(timed))
		}
		if _, ok := tm["time_tsc_hz"]; ok != (clock == "tsc") {
			t.Errorf("WEAVE_TIME_CLOCK=%s: time_tsc_hz present %v", clock, ok)
		}
	}
}

// TestTimingSIGURG: a program that handles SIGURG itself, from before the
// runtime starts or from main, gets only the one it raises (the old
// sampling timer's SIGURG reached its handler), and is sampled all the same.
func TestTimingSIGURG(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "timing_urg")
	for _, env := range [][]string{nil, {"URG_EARLY=1"}} {
		r := run(t, exe, env)
		tm := readProfile(t, r.profile()).timeMeta()
		if r.code != 0 || r.stdout != "1\n" || tm["time_sampler"] != "thread" || tm["time_samples"] == "0" {
			t.Errorf("%v: exit %d, output %q, metadata %v\n%s", env, r.code, r.stdout, tm, r.stderr)
		}
	}
}

// TestTimingStolen: a program that sends itself the sampler's signal
// process-wide, blocked, and waits for it gets it, whether the sampler
// took it first (then it sends it back and stops sampling: M time_sampler
// stopped signal) or not.
func TestTimingStolen(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "timing_urg")
	for i := 0; i < 3; i++ {
		r := run(t, exe, []string{"URG_STEAL=1"})
		tm := readProfile(t, r.profile()).timeMeta()
		if s := tm["time_sampler"]; r.code != 0 || r.stdout != "1\n" || s != "thread" && s != "stopped signal" {
			t.Errorf("exit %d, output %q, metadata %v\n%s", r.code, r.stdout, tm, r.stderr)
		}
		t.Logf("run %d: sampler %s, %s samples", i, tm["time_sampler"], tm["time_samples"])
	}
}

// spin saturates the machine for the rest of the test: a busy loop per
// CPU, each its own process.
func spin(t *testing.T) {
	t.Helper()
	for i := 0; i < goruntime.NumCPU(); i++ {
		cmd := exec.Command("sh", "-c", "while :; do :; done")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
		})
	}
}

// TestTimingUnderLoad: exact mode on a machine whose every core is busy
// with another process, many runs in a row. The runtime's own cost is
// measured and subtracted however busy the machine is, and the
// subtraction never erases a function's time: in every run every function
// that ran has self time. Self-time shares of work in ratio 1:2:3, taken
// from each function's fastest run (wall-clock time includes preemption),
// are within 5 points. A stress test: not in -short runs.
func TestTimingUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("a stress test: not with -short")
	}
	widgets, ratio := build(t, "gcc", "widgets10k"), build(t, "gcc", "ratiorounds")
	spin(t)
	const runs = 50
	var cal []float64
	failed, clamped := 0, 0
	best := map[string]uint64{}
	for i := 0; i < runs; i++ {
		r := run(t, widgets, []string{"WEAVE_TIME=exact"})
		p := readProfile(t, r.profile())
		ps, _ := strconv.ParseFloat(p.meta["time_call_overhead_ps"], 64)
		cal = append(cal, ps/1000)
		if n, err := strconv.Atoi(p.meta["time_clamped"]); err == nil {
			clamped += n
		}
		bad := false
		for _, n := range p.called() {
			if n.Time == 0 {
				t.Errorf("run %d: node %d (%s) called %d times has no time (%.1f ns per call subtracted)",
					i, n.ID, n.Func.Name, n.Calls, ps/1000)
				bad = true
			}
		}
		if bad {
			failed++
		}

		r = run(t, ratio, []string{"WEAVE_TIME=exact"}, "1200", "4")
		for _, n := range readProfile(t, r.profile()).called() {
			if v, ok := best[n.Func.Name]; !ok || n.Time < v {
				best[n.Func.Name] = n.Time
			}
		}
	}
	slices.Sort(cal)
	t.Logf("%d runs under load: call overhead %.1f ns min, %.1f median, %.1f max; %d runs with a function without time; %d nodes clamped",
		runs, cal[0], cal[len(cal)/2], cal[len(cal)-1], failed, clamped)
	sum := best["work1"] + best["work2"] + best["work3"]
	for i, name := range []string{"work1", "work2", "work3"} {
		share, want := 100*float64(best[name])/float64(sum), 100*float64(i+1)/6
		if math.Abs(share-want) > 5 {
			t.Errorf("%s: self share %.1f%% of the fastest runs, want %.1f%% ± 5 (%v)", name, share, want, best)
		}
	}
}
