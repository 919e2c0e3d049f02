package main

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/report"
)

// regionBytes sums, per region label, the bytes allocated by the region
// itself (its own leaves) and by everything under it.
func regionBytes(p *profile.Profile) (own, under map[string]uint64) {
	own, under = map[string]uint64{}, map[string]uint64{}
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc {
			continue
		}
		b := n.Heap.TotalBytes()
		if n.Site.Caller && n.Parent.Kind == profile.KindFunc && n.Parent.Func.IsRegion() {
			own[n.Parent.Func.Name] += b
		}
		seen := map[string]bool{}
		for up := n.Parent; up != nil; up = up.Parent {
			if up.Kind == profile.KindFunc && up.Func.IsRegion() && !seen[up.Func.Name] {
				seen[up.Func.Name] = true
				under[up.Func.Name] += b
			}
		}
	}
	return own, under
}

// apiBuild is a test program using weave_api.h, built plain (with the
// header from weave api; at -O0: gcc -O2 drops a malloc/free pair, which
// valgrind would not see) and woven with weave cc, and both runs.
type apiBuild struct {
	dir, src, plain string
	plainCC         []string // the plain build's gcc command line, without -o and the source
	pr              result   // the plain run
	prof            string   // the woven run's profile
}

// apiProgram builds testdata/name plain and woven, runs both and checks
// they agree (ok).
func apiProgram(t *testing.T, name string, flags ...string) (b apiBuild, ok bool) {
	t.Helper()
	testtool.Need(t, "gcc")
	b.dir = t.TempDir()
	b.src, _ = filepath.Abs(filepath.Join("../../testdata", name))
	inc := filepath.Join(b.dir, "inc")
	mustRun(t, b.dir, nil, weaveBin, "api", "-o", inc)
	b.plainCC = append(append([]string{"gcc"}, flags...), "-O0", "-Wall", "-Wextra", "-Werror", "-I", inc)
	b.plain = filepath.Join(b.dir, "plain")
	mustRun(t, b.dir, nil, append(b.plainCC, "-o", b.plain, b.src)...)
	woven := filepath.Join(b.dir, "woven")
	mustRun(t, b.dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", woven, b.src)
	b.pr = run(t, b.dir, nil, b.plain)
	b.prof = filepath.Join(b.dir, "w.prof")
	return b, sameRun(t, "weave cc", b.pr, run(t, b.dir, []string{"WEAVE_OUT=" + b.prof}, woven))
}

// TestAPIRegions builds testdata/api/regions.c plain (with the header from
// weave api) and woven (weave cc finds the header by itself; weave -o and a
// plain cc line too): the runs agree, the regions are pseudo-functions
// holding the allocations made inside them, the totals are valgrind's and
// the marks hold the heap of the moment.
func TestAPIRegions(t *testing.T) {
	b, ok := apiProgram(t, "api/regions.c", "-std=c99")
	if !ok {
		return
	}
	dir, src, plain, pr, prof := b.dir, b.src, b.plain, b.pr, b.prof

	// weave -o: the woven file needs no header; a plain cc line builds it.
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "-o", filepath.Join(dir, "r.woven.c"), src)
	mustRun(t, dir, nil, weaveBin, "runtime", "-o", filepath.Join(dir, "rt.c"))
	mustRun(t, dir, nil, "gcc", "-O2", "-o", filepath.Join(dir, "wo"), filepath.Join(dir, "r.woven.c"), filepath.Join(dir, "rt.c"), "-ldl", "-lpthread")
	sameRun(t, "weave -o", pr, run(t, dir, []string{"WEAVE_OUT="}, filepath.Join(dir, "wo")))

	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	own, under := regionBytes(p)
	// parse: 5 x work(100) and inner's 7; loop: 2 x 33 (its second pass
	// breaks out first); manual: work(1000).
	wantOwn := map[string]uint64{"inner": 7, "loop": 66}
	wantUnder := map[string]uint64{"parse": 507, "inner": 7, "loop": 66, "manual": 1000}
	for k, v := range wantUnder {
		if under[k] != v {
			t.Errorf("region %s: %d bytes under it, want %d (all: %v)", k, under[k], v, under)
		}
	}
	for k, v := range wantOwn {
		if own[k] != v {
			t.Errorf("region %s: %d bytes of its own, want %d (all: %v)", k, own[k], v, own)
		}
	}
	if len(p.Marks) != 2 || p.Marks[0].Label != "start" || p.Marks[1].Label != "end" {
		t.Fatalf("marks %+v, want start and end", p.Marks)
	}
	if m := p.Marks[0]; m.Gen != 1 || m.Bytes != 0 || m.Blocks != 0 || m.Allocs != 10 || m.Frees != 10 || m.Thread == nil {
		t.Errorf("mark start %+v: want gen 1, 0 bytes, 10 allocations and frees, set by a thread", m)
	}
	if m := p.Marks[1]; m.Gen != 2 || m.Bytes != 1573 || m.Blocks != 9 || m.Allocs != 19 || m.Frees != 10 {
		t.Errorf("mark end %+v: want gen 2, 1573 bytes in 9 blocks, 19 allocations, 10 frees", m)
	}
	spans := map[string]uint64{}
	for _, s := range p.Regions {
		spans[s.Label] += s.Count
		if s.T1 < s.T0 || s.T0 < p.Marks[0].NS || s.T1 > p.Marks[1].NS {
			t.Errorf("region span %+v outside the marks %d..%d", s, p.Marks[0].NS, p.Marks[1].NS)
		}
	}
	if spans["parse"] != 1 || spans["inner"] != 1 || spans["loop"] != 3 || spans["manual"] != 1 {
		t.Errorf("region spans %v, want parse 1, inner 1, loop 3, manual 1", spans)
	}
	checkValgrind(t, reportTotals(t, prof), dir, plain)
	if _, err := os.Stat(filepath.Join(dir, "inc", "weave_api.h")); err != nil {
		t.Error(err)
	}
	checkRegionViews(t, dir, prof, p)
}

// checkRegionViews checks the regions and marks of testdata/api/regions.c's
// profile p in the exports: folded stacks (a region's own allocations are
// its frame's), merge, perfetto (marks as instant events, regions' spans)
// and the HTML report's heap chart (in Chromium).
func checkRegionViews(t *testing.T, dir, prof string, p *profile.Profile) {
	folded := mustRun(t, "", nil, weaveBin, "report", prof, "--format", "folded").stdout
	for _, want := range []string{"main;loop 66\n", ";parse ((region));inner 7\n", "main;manual;work 1000\n"} {
		if !strings.Contains(folded, want) {
			t.Errorf("folded stacks: no %q in\n%s", want, folded)
		}
	}
	merged := filepath.Join(dir, "m.prof")
	mustRun(t, "", nil, weaveBin, "merge", prof, prof, "-o", merged)
	if a, b := reportTotals(t, prof), reportTotals(t, merged); b.BytesAllocated != 2*a.BytesAllocated || b.Allocs != 2*a.Allocs {
		t.Errorf("merge of the profile with itself: %+v, want twice %+v", b, a)
	}

	var doc struct {
		TraceEvents []struct {
			Ph, Name, S string
			Args        map[string]any
		} `json:"traceEvents"`
	}
	pf := mustRun(t, "", nil, weaveBin, "report", prof, "--format", "perfetto").stdout
	if err := json.Unmarshal([]byte(pf), &doc); err != nil {
		t.Fatalf("perfetto export: %v", err)
	}
	var marks []string
	runs := map[string]float64{}
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "i" && e.S == "g":
			marks = append(marks, e.Name)
		case e.Ph == "X":
			runs[e.Name] += e.Args["runs"].(float64)
		}
	}
	if strings.Join(marks, "|") != "mark start|mark end" || runs["loop"] != 3 || runs["parse"] != 1 || runs["manual"] != 1 {
		t.Errorf("perfetto export: marks %q, region runs %v", marks, runs)
	}

	html := filepath.Join(dir, "r.html")
	mustRun(t, "", nil, weaveBin, "report", prof, "--format", "html", "-o", html)
	testtool.Check(t, "chromium", []string{"chromium"}, func(t *testing.T) {
		pg := openPage(t, html)
		labels := eval[string](pg, `[...document.querySelectorAll("#timeline .user-mark-label")].map(e => e.firstChild.nodeValue).join("|")`)
		spans := eval[int](pg, `document.querySelectorAll("#timeline rect.region").length`)
		lanes := eval[string](pg, `[...document.querySelectorAll("#timeline .region-label")].map(e => e.textContent).join("|")`)
		if labels != "start|end" || spans != len(p.Regions) || lanes != "inner|parse|loop|manual" {
			t.Errorf("heap chart: mark labels %q (want start|end), %d region bars (want %d), lanes %q", labels, spans, len(p.Regions), lanes)
		}
		pg.clean()
	})
}

// betweenRows runs weave report --between from to --depth 1 --format json
// and sums its rows by innermost function.
func betweenRows(t *testing.T, prof, from, to string) (rows map[string][2]uint64, total [2]uint64) {
	t.Helper()
	r := mustRun(t, "", nil, weaveBin, "report", prof, "--between", from, to, "--depth", "1", "--format", "json")
	var rep struct {
		Leaks   []report.Leak   `json:"leaks"`
		Between *report.Between `json:"between"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || rep.Between == nil {
		t.Fatalf("report --between json: %v\n%s", err, r.stdout)
	}
	rows = map[string][2]uint64{}
	for _, l := range rep.Leaks {
		k := l.Chain[0].Name
		if l.Hidden {
			k += " (hidden)"
		}
		v := rows[k]
		rows[k] = [2]uint64{v[0] + l.BytesKept, v[1] + l.BlocksKept}
	}
	return rows, [2]uint64{rep.Between.Bytes, rep.Between.Blocks}
}

// valgrindBetween is the oracle of --between: the blocks live at leak
// check b less those live at check a, by the innermost frame of src's
// ("f (hidden)" when the C library allocated them, called from f).
func valgrindBetween(checks []memcheck.Check, a, b int, src string) map[string][2]uint64 {
	by := map[string][2]uint64{}
	for i, sign := range map[int]int64{a: -1, b: 1} {
		for _, r := range checks[i].Records {
			key := "?"
			for j, f := range r.Frames {
				if strings.Contains(f, "("+src+":") {
					key, _, _ = strings.Cut(f, " ")
					if j > 1 { // frames between the allocator and ours: the C library's
						key += " (hidden)"
					}
					break
				}
			}
			v := by[key]
			by[key] = [2]uint64{uint64(int64(v[0]) + sign*int64(r.Bytes)), uint64(int64(v[1]) + sign*int64(r.Blocks))}
		}
	}
	for k, v := range by {
		if v == [2]uint64{} {
			delete(by, k)
		}
	}
	return by
}

// TestBetween checks weave report --between against valgrind's leak
// checks at the two marks (testdata/api/between.c), the repeated labels
// of a loop's marks, and the refusals.
func TestBetween(t *testing.T) {
	testtool.Need(t, "gcc")
	if _, err := os.Stat("/usr/include/valgrind/memcheck.h"); err != nil {
		testtool.Need(t, "valgrind") // the headers come with it
	}
	dir := t.TempDir()
	src, _ := filepath.Abs("../../testdata/api/between.c")
	inc := filepath.Join(dir, "inc")
	mustRun(t, dir, nil, weaveBin, "api", "-o", inc)
	plain, woven := filepath.Join(dir, "plain"), filepath.Join(dir, "woven")
	mustRun(t, dir, nil, "gcc", "-O0", "-g", "-I", inc, "-o", plain, src, "-pthread")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O0", "-g", "-o", woven, src, "-pthread")
	prof := filepath.Join(dir, "b.prof")
	if !sameRun(t, "between", run(t, dir, nil, plain), run(t, dir, []string{"WEAVE_OUT=" + prof}, woven)) {
		return
	}
	rows, total := betweenRows(t, prof, "A", "B")
	// By construction: leak_after 100+101+102 (the loop), 300 (the
	// thread), 1000; list's 5 nodes; realloc's 64 in main; the thread's
	// own C-library block (hidden, in main).
	if rows["leak_after"] != [2]uint64{1603, 5} || rows["list"] != [2]uint64{240, 5} {
		t.Errorf("--between A B rows %v: want leak_after 1603 bytes in 5 blocks, list 240 in 5", rows)
	}
	var sum [2]uint64
	for _, v := range rows {
		sum[0], sum[1] = sum[0]+v[0], sum[1]+v[1]
	}
	if sum != total {
		t.Errorf("--between rows sum to %v, its total says %v", sum, total)
	}
	// A loop's marks: iter is the last, iter#N the Nth.
	if _, tot := betweenRows(t, prof, "iter#1", "iter#3"); tot != [2]uint64{201, 2} {
		t.Errorf("--between iter#1 iter#3: %v, want 201 bytes in 2 blocks (the loop's first two)", tot)
	}
	if _, tot := betweenRows(t, prof, "iter", "B"); tot != [2]uint64{total[0] - 201, total[1] - 2} {
		t.Errorf("--between iter B: %v, want %v less the loop's first two blocks", tot, total)
	}
	if _, tot := betweenRows(t, prof, "B", "C"); tot != [2]uint64{7, 1} {
		t.Errorf("--between B C: %v, want 7 bytes in 1 block (B's blocks were freed)", tot)
	}
	for _, bad := range [][2]string{{"A", "nope"}, {"B", "A"}, {"iter#4", "B"}, {"B", "B"}} {
		r := run(t, "", nil, weaveBin, "report", prof, "--between", bad[0], bad[1])
		if r.code == 0 || !strings.Contains(r.stderr, "mark") || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("--between %s %s: exit %d, stderr %q: want one line naming the mark, non-zero exit", bad[0], bad[1], r.code, r.stderr)
		}
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		checks := memcheck.RunChecks(t, dir, nil, plain)
		if len(checks) < 2 {
			t.Fatalf("valgrind: %d leak checks, want the program's two and exit's", len(checks))
		}
		want := valgrindBetween(checks, 0, 1, "between.c")
		// The C library's block for the thread (its TLS vector) is larger
		// under valgrind, whose preloaded objects add TLS modules: its
		// blocks must agree, not its bytes.
		for k, v := range want {
			if w, ok := rows[k]; ok && strings.HasSuffix(k, " (hidden)") && w[1] == v[1] {
				want[k] = w
			}
		}
		if !maps.Equal(rows, want) {
			t.Errorf("--between A B by function %v, valgrind (check at B less check at A) %v", rows, want)
		}
	})
}

// TestMarkLive sets marks in a running woven program with weave mark: a
// snapshot's profile holds them, and --between them gives the blocks the
// heap gained between them (the program leaks half of what it allocates
// and frees the rest at once).
func TestMarkLive(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "live.prof")
	cmd, pid, _ := startLoop(t, dir, prof)
	defer cmd.Wait()
	defer cmd.Process.Kill()
	if r := mustRun(t, dir, nil, weaveBin, "mark", pid, "first one"); !strings.Contains(r.stdout, `mark 1 "first one" set`) {
		t.Errorf("weave mark: %q", r.stdout)
	}
	time.Sleep(300 * time.Millisecond)
	mustRun(t, dir, nil, weaveBin, "mark", pid, "second")
	mustRun(t, dir, nil, weaveBin, "snapshot", pid)
	for _, bad := range [][]string{{pid, ""}, {pid, "two\nlines"}, {"nope", "x"}, {pid}, {strconv.Itoa(os.Getpid()), "x"}} {
		// One line saying why; a misuse (no label, no process id) adds the usage line.
		r := run(t, dir, nil, append([]string{weaveBin, "mark"}, bad...)...)
		why, usage, _ := strings.Cut(strings.TrimSpace(r.stderr), "\n")
		if r.code == 0 || !strings.HasPrefix(why, "weave: mark: ") || usage != "" && !strings.HasPrefix(usage, "usage: weave mark ") {
			t.Errorf("weave mark %q: exit %d, stderr %q: want one line (and the usage line) and a non-zero exit", bad, r.code, r.stderr)
		}
	}
	// The snapshot's report and weave check say what it is (check blamed
	// WEAVE_LEAK_SCAN=0 or valgrind for its missing leak kinds).
	if r := mustRun(t, dir, nil, weaveBin, "report", "--tables", "leaks", prof); !strings.Contains(r.stdout, "SNAPSHOT: written while the program ran") {
		t.Errorf("the snapshot's report does not say it is one:\n%s", r.stdout)
	}
	if c := run(t, dir, nil, weaveBin, "check", prof); c.code != 2 || !strings.Contains(c.stderr, "a snapshot, written while the program ran") {
		t.Errorf("weave check of a snapshot: exit %d\n%s", c.code, c.stderr)
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Marks) != 2 || p.Marks[0].Label != "first one" || p.Marks[1].Label != "second" || p.Marks[0].Thread != nil {
		t.Fatalf("snapshot's marks %+v: want \"first one\" and \"second\", set from outside", p.Marks)
	}
	a, b := p.Marks[0], p.Marks[1]
	if b.NS <= a.NS || b.Allocs <= a.Allocs {
		t.Fatalf("marks %+v %+v: the second is not after the first", a, b)
	}
	rows, total := betweenRows(t, prof, "first one", "second")
	// Each thread has at most one block allocated before the first mark
	// and freed after it (work frees every other item at once).
	gained := b.Blocks - a.Blocks
	if total[1] < gained || total[1] > gained+3 || total[0] != 24*total[1] || rows["make_item"] != total {
		t.Errorf("--between: %v (rows %v), want the %d blocks the heap gained (up to 3 more), all make_item's 24-byte items", total, rows, gained)
	}
}

// TestRegionTime checks that regions are in the time tables: the region
// that does 30 times the work takes most of the time, in both modes.
func TestRegionTime(t *testing.T) {
	b, ok := apiProgram(t, "api/spin.c", "-std=c99")
	if !ok {
		return
	}
	woven := filepath.Join(b.dir, "woven")
	for _, mode := range []string{"exact", "sampled"} {
		prof := filepath.Join(b.dir, mode+".prof")
		mustRun(t, b.dir, []string{"WEAVE_TIME=" + mode, "WEAVE_OUT=" + prof}, woven)
		r := mustRun(t, "", nil, weaveBin, "report", prof, "--format", "json", "--tables", "flat")
		var rep struct {
			Time struct {
				Functions []struct {
					Name    string `json:"name"`
					File    string `json:"file"`
					Calls   uint64 `json:"calls"`
					TotalNS uint64 `json:"total_ns"`
				} `json:"functions"`
			} `json:"time"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		total := map[string]uint64{}
		for _, f := range rep.Time.Functions {
			if f.File == profile.RegionFile && f.Calls == 1 || f.Name == "main" {
				total[f.Name] = f.TotalNS
			}
		}
		if total["busy"] < 2*total["idle"] || total["busy"] < total["main"]/2 || total["idle"] == 0 && mode == "exact" {
			t.Errorf("%s: total times %v: want busy the most of main's, over twice idle's", mode, total)
		}
	}
}
