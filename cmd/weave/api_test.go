package main

import (
	"os"
	"path/filepath"
	"testing"

	"weave/internal/testtool"
	"weave/profile"
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
}
