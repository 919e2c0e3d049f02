package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/report/leakcheck"
)

// mergePerRun are the M keys of one process that a merged profile does
// not carry (merge.go, Merger): its identity, end, image, memory maps,
// heap peak and picture, trace, region spans, leak scan's threads and
// timing calibration. Any other key a run's profile has must be in the
// merged one: a key the runtime starts to write needs a merge rule.
var mergePerRun = []string{"pid", "ppid", "argv", "end", "start_ns", "end_ns", "exe", "page_size", "heap_peak",
	"peak_snapshot", "maps_error", "picture_skipped", "trace_patterns", "trace_events", "trace_dropped",
	"region_spans_dropped", "leak_scan_threads", "leak_stop", "leak_stop_ns", "time_tsc_hz",
	"time_call_overhead_ps", "time_cal_start_ps", "time_cal_exit_ps", "time_error"}

// TestMergeRuntimeCounts merges real runs: testdata/leaks/unrec.c twice
// and nomem.c filling its address space (under prlimit --as: allocations
// not recorded, two refused, a leak scan out of memory), nomem.c with
// room, scanned and not (WEAVE_LEAK_SCAN=0), and widgets.c (--frames auto) twice. The merged
// profile's unrecorded, alloc_refused and time_process_cpu_ns are the
// sums of the runs', leak_scan_failed_runs counts the failed scans (weave
// check gives that reason), frameless and call_framed are widgets' own,
// and every key of the runs is in the merge but mergePerRun's. Before,
// the merge dropped all of them: a merged suite's report said nothing of
// 246,000 allocations the runtime could not record.
func TestMergeRuntimeCounts(t *testing.T) {
	dir, _, unrec := buildLimited(t, "unrec.c")
	nomem := filepath.Join(dir, "nomem")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", nomem, leaksSource(t, "nomem.c"))
	widgets, _ := filepath.Abs("../../testdata/widgets.c")
	wid := filepath.Join(dir, "wid")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", wid, widgets)
	as := "--as=1073741824"
	var profs []string
	prof := func(argv ...string) {
		p := filepath.Join(dir, strconv.Itoa(len(profs))+".prof")
		env := []string{"WEAVE_OUT=" + p}
		if argv[0] == "" { // a run without a leak scan
			env, argv = append(env, "WEAVE_LEAK_SCAN=0"), argv[1:]
		}
		mustRun(t, dir, env, argv...)
		profs = append(profs, p)
	}
	prof("prlimit", as, unrec)
	prof("prlimit", as, unrec)
	prof("prlimit", as, nomem, "fill")
	prof(nomem)
	prof("", nomem)
	prof(wid)
	prof(wid)
	merged := filepath.Join(dir, "m.prof")
	mustRun(t, dir, nil, append([]string{weaveBin, "merge", "-o", merged}, profs...)...)
	m, err := profile.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string][]uint64{}
	for _, path := range profs {
		p, err := profile.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, md := range p.Meta {
			if _, ok := m.MetaValue(md.Key); !ok && !slices.Contains(mergePerRun, md.Key) {
				t.Errorf("%s's M %s %s is not in the merged profile", filepath.Base(path), md.Key, md.Value)
			}
		}
		for _, k := range []string{"unrecorded", "alloc_refused", "time_process_cpu_ns"} {
			v, _ := p.MetaValue(k)
			for i, f := range strings.Fields(v) {
				n, _ := strconv.ParseUint(f, 10, 64)
				if i == len(sums[k]) {
					sums[k] = append(sums[k], 0)
				}
				sums[k][i] += n
			}
		}
	}
	if len(sums["unrecorded"]) != 2 || sums["alloc_refused"][0] != 4 {
		t.Fatalf("the runs under prlimit: unrecorded %v, alloc_refused %v", sums["unrecorded"], sums["alloc_refused"])
	}
	for k, sum := range sums {
		want := fmtUints(sum)
		if got, _ := m.MetaValue(k); got != want {
			t.Errorf("merged M %s %q, the runs' sum %q", k, got, want)
		}
	}
	for k, want := range map[string]string{"leak_scan_failed_runs": "3", "leak_scan_failed": "out of memory", "frameless": "2", "call_framed": "2"} {
		if got, _ := m.MetaValue(k); got != want {
			t.Errorf("merged M %s %q, want %q", k, got, want)
		}
	}
	c := run(t, dir, nil, weaveBin, "check", merged)
	if !strings.Contains(c.stdout, "4 of 7 runs without a leak scan, not checked: 3 whose scan failed, out of memory;") {
		t.Errorf("weave check of the merge: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	r := mustRun(t, dir, nil, weaveBin, "report", merged).stdout
	u := sums["unrecorded"]
	if !strings.Contains(r, "(not recorded: "+leakcheck.Commas(u[0])+" allocs, "+leakcheck.Commas(u[1])+" bytes") ||
		!strings.Contains(r, "(refused: 4 allocs returned NULL") || !strings.Contains(r, "frames auto: 2 functions frameless") {
		t.Errorf("the merged report does not tell the runs' counts:\n%s", r)
	}
	if page := mustRun(t, dir, nil, weaveBin, "report", "--format", "html", merged).stdout; !strings.Contains(page, "Not recorded: "+leakcheck.Commas(u[0])+" allocs") ||
		!strings.Contains(page, "Refused: 4 allocs") {
		t.Errorf("the merged profile's HTML page does not tell the runs' counts")
	}
	if data, _ := os.ReadFile(merged); t.Failed() {
		t.Logf("merged:\n%s", data)
	}
}

func fmtUints(v []uint64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(s, " ")
}
