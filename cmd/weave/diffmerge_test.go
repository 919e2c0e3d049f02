package main

// End-to-end tests of weave diff and weave merge on real runs.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"
)

type diffCounts struct {
	Allocs int64 `json:"allocs"`
	Bytes  int64 `json:"bytes_allocated"`
	InUse  int64 `json:"bytes_in_use"`
	Calls  int64 `json:"calls"`
	TimeNS int64 `json:"time_ns"`
}

type diffRow struct {
	Key        string     `json:"key"`
	Base       diffCounts `json:"base"`
	New        diffCounts `json:"new"`
	Change     diffCounts `json:"change"`
	AtCalls    bool       `json:"calls_at_calls"`
	NotCounted bool       `json:"calls_not_counted"`
}

type diffJSON struct {
	Diff struct {
		Identical bool      `json:"identical"`
		Totals    diffRow   `json:"totals"`
		Functions []diffRow `json:"functions"`
		Chains    []diffRow `json:"chains"`
		Sites     []diffRow `json:"sites"`
		Types     []diffRow `json:"types"`
	} `json:"diff"`
	Budgets []struct {
		Rule       string `json:"rule"`
		AtCalls    bool   `json:"calls_at_calls"`
		NotCounted bool   `json:"calls_not_counted"`
	} `json:"budgets"`
}

// diffOf is weave diff's JSON of profiles a and b, given flags (budgets).
func diffOf(t *testing.T, a, b string, flags ...string) diffJSON {
	t.Helper()
	var d diffJSON
	argv := append(append([]string{weaveBin, "diff", "--format", "json"}, flags...), a, b)
	out := mustRun(t, "", nil, argv...).stdout
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDiffWidgets(t *testing.T) {
	dir := t.TempDir()
	a := widgetsProfile(t, dir, "100000", "off")
	a2 := filepath.Join(dir, "again.prof")
	mustRun(t, dir, []string{"WEAVE_OUT=" + a2, "WEAVE_TIME=off"}, filepath.Join(dir, "widgets"), "100000")
	b := widgetsProfile(t, dir, "200000", "off")

	// Two runs of the same input: all zeros, and the text says so.
	same := diffOf(t, a, a2)
	if !same.Diff.Identical || same.Diff.Totals.Change != (diffCounts{}) || same.Diff.Totals.Base.Allocs != 100000 {
		t.Errorf("same input: identical %v, totals %+v", same.Diff.Identical, same.Diff.Totals)
	}
	for _, rows := range [][]diffRow{same.Diff.Functions, same.Diff.Chains, same.Diff.Sites, same.Diff.Types} {
		for _, r := range rows {
			if r.Change != (diffCounts{}) {
				t.Errorf("same input: %+v", r)
			}
		}
	}
	if out := mustRun(t, "", nil, weaveBin, "diff", a, a2).stdout; !strings.Contains(out, "No change") {
		t.Errorf("same input, text:\n%s", out)
	}

	// 100k vs 200k widgets: the allocations and make_widget's counts double,
	// main is still called once.
	d := diffOf(t, a, b)
	tt := d.Diff.Totals
	if d.Diff.Identical || tt.New.Allocs != 2*tt.Base.Allocs || tt.New.Bytes != 2*tt.Base.Bytes || tt.Base.Allocs != 100000 {
		t.Errorf("100k vs 200k totals %+v", tt)
	}
	fn := map[string]diffRow{}
	for _, r := range d.Diff.Functions {
		fn[r.Key] = r
	}
	mw := fn["make_widget"]
	if mw.Base.Allocs != 100000 || mw.New.Allocs != 200000 || mw.New.Bytes != 2*mw.Base.Bytes ||
		mw.New.Calls != 2*mw.Base.Calls || mw.Change.Allocs != 100000 {
		t.Errorf("make_widget %+v", mw)
	}
	if m := fn["main"]; m.Base.Calls != 1 || m.Change.Calls != 0 {
		t.Errorf("main %+v", m)
	}
	if d.Diff.Functions[0].Key != "make_widget" || len(d.Diff.Sites) != 1 || d.Diff.Sites[0].Change.Allocs != 100000 {
		t.Errorf("first function %s, sites %+v", d.Diff.Functions[0].Key, d.Diff.Sites)
	}

	// Budgets.
	r := run(t, "", nil, weaveBin, "diff", "--fail-if", "allocs(make_widget) > +50%", "--fail-if", "calls(main) > 1", a, b)
	if r.code == 0 || !strings.Contains(r.stderr, "allocs(make_widget) > +50%: 100000 -> 200000 (+100000, +100.0%)") ||
		strings.Contains(r.stderr, "calls(main)") {
		t.Errorf("broken budget: exit %d\n%s", r.code, r.stderr)
	}
	mustRun(t, "", nil, weaveBin, "diff", a, b, "--fail-if", "bytes_allocated > +100%", "--fail-if", "allocs > 200000")
	// sizes as a newcomer writes them (were malformed rules)
	mustRun(t, "", nil, weaveBin, "diff", a, b, "--fail-if", "bytes_in_use(make_widget) > 1GiB", "--fail-if", "bytes_allocated > +1024MiB")
	if r := run(t, "", nil, weaveBin, "diff", "--fail-if", "bytes_allocated > +1MiB", a, b); r.code != 1 {
		t.Errorf("bytes_allocated > +1MiB: exit %d %s", r.code, r.stderr)
	}
	// A rule that cannot be checked is a usage error (2), never a broken
	// budget (1) a CI script would read as a regression.
	if r := run(t, "", nil, weaveBin, "diff", "--fail-if", "allocs ~ 3", a, b); r.code != 2 || !strings.Contains(r.stderr, "budget rule") {
		t.Errorf("bad rule: exit %d %s", r.code, r.stderr)
	}
	if r := run(t, "", nil, weaveBin, "diff", "--fail-if", "time(nosuchfn) > 1ms", a, b); r.code != 2 || !strings.Contains(r.stderr, "no function nosuchfn") {
		t.Errorf("rule naming no function: exit %d %s", r.code, r.stderr)
	}
}

// TestMergeFork merges the profiles of a fork parent and its two children:
// the merged totals and calls are the sums.
func TestMergeFork(t *testing.T) {
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "fork", nil, nil)
	mustRun(t, dir, outEnv(dir), woven)
	files := hprofiles(t, dir)
	if len(files) != 3 {
		t.Fatalf("profiles %v, want 3", files)
	}
	out := filepath.Join(dir, "merged.prof")
	mustRun(t, dir, nil, append(append([]string{weaveBin, "merge"}, files...), "-o", out)...)
	var sum totals
	calls := map[string]uint64{}
	for _, f := range files {
		l := load(t, f)
		tt := l.totals()
		// The heap picture lists the blocks in use, and no inherited one.
		var bytes int64
		for _, b := range l.p.Blocks {
			bytes += int64(b.Size)
		}
		if int64(len(l.p.Blocks)) != tt.BlocksInUse || bytes != tt.BytesInUse {
			t.Errorf("%s: %d X records of %d bytes, %d blocks of %d bytes in use", f, len(l.p.Blocks), bytes, tt.BlocksInUse, tt.BytesInUse)
		}
		sum.Allocs += tt.Allocs
		sum.Frees += tt.Frees
		sum.BytesAllocated += tt.BytesAllocated
		sum.BytesInUse += tt.BytesInUse
		sum.BlocksInUse += tt.BlocksInUse
		for _, n := range l.p.Nodes {
			if n.Func != nil {
				calls[n.Func.Name] += n.Calls
			}
		}
	}
	m := load(t, out)
	if got := m.totals(); got != sum || sum.Allocs == 0 {
		t.Errorf("merged totals %+v, sum %+v", got, sum)
	}
	for _, n := range m.p.Nodes {
		if n.Func != nil {
			calls[n.Func.Name] -= n.Calls
		}
	}
	for f, c := range calls {
		if c != 0 {
			t.Errorf("calls of %s: merged differs from the sum by %d", f, -c)
		}
	}
	if len(m.r.Sources) != 3 || len(m.p.Threads) != 1 {
		t.Errorf("sources %v, %d threads", m.r.Sources, len(m.p.Threads))
	}
	text := mustRun(t, "", nil, weaveBin, "report", out).stdout
	if !strings.Contains(text, "the sum of 3 profiles") || !strings.Contains(text, filepath.Base(files[0])) {
		t.Errorf("merged report does not list its sources:\n%s", text)
	}
	// Merging into one of the inputs is refused and leaves it whole (issue 29.1).
	before, _ := os.ReadFile(out)
	if r := run(t, dir, nil, weaveBin, "merge", "-o", out, out, files[0]); r.code != 1 || !strings.Contains(r.stderr, "is the same as output file") {
		t.Errorf("merge -o OUT OUT: exit %d\n%s", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Error("merge -o OUT OUT changed OUT")
	}
	// Its run time is the runs' summed, in the pprof export too.
	var runNS int64
	for _, f := range files {
		l := load(t, f)
		start, _ := l.p.MetaUint("start_ns")
		end, _ := l.p.MetaUint("end_ns")
		runNS += int64(end - start)
	}
	pb := filepath.Join(dir, "merged.pb.gz")
	mustRun(t, dir, nil, weaveBin, "report", "--format", "pprof", "-o", pb, out)
	if f, err := os.Open(pb); err != nil {
		t.Error(err)
	} else if pp, err := pprof.Parse(f); err != nil || pp.DurationNanos != runNS || m.r.RunNS != uint64(runNS) {
		t.Errorf("merged run time: pprof %v (%v), report %d, runs %d", pp, err, m.r.RunNS, runNS)
	}
	// weave check reads the merged leak kinds as it reads the runs'.
	if r := run(t, dir, nil, weaveBin, "check", out); r.code == 2 {
		t.Errorf("weave check of the merged profile: exit 2\n%s%s", r.stdout, r.stderr)
	}
	// A merged profile and one more run is the sum again (merge reads
	// its output): two runs merged, then the third, is the three.
	two, again := filepath.Join(dir, "two.prof"), filepath.Join(dir, "again.prof")
	mustRun(t, dir, nil, weaveBin, "merge", "-o", two, files[0], files[1])
	mustRun(t, dir, nil, weaveBin, "merge", "-o", again, two, files[2])
	if a := load(t, again); a.r.Runs != 3 || a.totals() != sum {
		t.Errorf("merged again: %d runs, totals %+v, want 3 runs, %+v", a.r.Runs, a.totals(), sum)
	}
	// A merged profile and one of its own runs is refused: that run's
	// counts were summed twice ("4 runs").
	if r := run(t, dir, nil, weaveBin, "merge", "-o", filepath.Join(dir, "twice.prof"), out, files[0]); r.code != 1 || !strings.Contains(r.stderr, " hold the same run (pid ") {
		t.Errorf("merge of a merged profile and one of its runs: exit %d\n%s", r.code, r.stderr)
	}
	if r := run(t, dir, nil, weaveBin, "merge", "-o", filepath.Join(dir, "no/such/dir.prof"), files[0]); r.code == 0 {
		t.Error("merge into a missing directory succeeds")
	}
}
