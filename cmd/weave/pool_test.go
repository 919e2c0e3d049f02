package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// poolSites sums a profile's weave_pool_alloc allocations (blocks, bytes)
// and returns its blocks in use by the function their site is in, and the
// types of those sites.
func poolSites(p *profile.Profile) (allocs, bytes uint64, inUse map[string]uint64, types map[string]string) {
	inUse, types = map[string]uint64{}, map[string]string{}
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc || n.Site.Op != "weave_pool_alloc" {
			continue
		}
		name := "?"
		if n.Site.Func != nil {
			name = n.Site.Func.Name
		}
		allocs += n.Heap.TotalAllocs()
		bytes += n.Heap.TotalBytes()
		inUse[name] += n.Heap.TotalAllocs() - n.Heap.TotalFrees()
		types[name] = n.Site.Type
	}
	return allocs, bytes, inUse, types
}

// TestPoolAPI builds testdata/pool/arena.c, a program with its own arena
// annotated with weave_api.h's pool API, plain and woven: the runs agree;
// the arena's objects are allocations at their sites, with the types of
// their sizeof and the chains through the arena's callers; destroying an
// arena frees all its objects (only the kept arena's are in use at exit);
// the pool allocations are the ones valgrind counts for the same requests
// as VALGRIND_MEMPOOL_* (its totals with them less without them); the
// blocks in use are those of valgrind's leak check; and with the backing
// blocks counted, the totals are valgrind's.
func TestPoolAPI(t *testing.T) {
	b, ok := apiProgram(t, "pool/arena.c", "-std=gnu11")
	if !ok || b.pr.code != 0 || !strings.Contains(b.pr.stdout, "kept") {
		t.Fatalf("plain run: exit %d\n%s%s", b.pr.code, b.pr.stdout, b.pr.stderr)
	}
	dir, src, prof := b.dir, b.src, b.prof
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	allocs, bytes, inUse, types := poolSites(p)
	if types["build_list"] != "struct node" || types["remember"] != "struct pair" || types["arena_strdup"] != "" {
		t.Errorf("pool site types %v: want build_list's struct node, remember's struct pair, arena_strdup's none", types)
	}
	if inUse["build_list"] != 0 || inUse["arena_strdup"] != 0 || inUse["remember"] != 77 {
		t.Errorf("pool objects in use at exit by site %v: want none of the destroyed arena's, remember's 77", inUse)
	}
	kept := false
	for _, l := range readReport(t, prof).Leaks {
		var chain []string
		for _, f := range l.Chain {
			chain = append(chain, f.Name)
		}
		c := strings.Join(chain, " <- ")
		kept = kept || c == "remember <- main"
		if strings.Contains(c, "build_list") || strings.Contains(c, "arena_strdup") {
			t.Errorf("leak table has a chain of the destroyed arena: %s", c)
		}
	}
	graph := mustRun(t, dir, nil, weaveBin, "report", "--tables", "graph", prof).stdout
	if !strings.Contains(graph, "make_name") || !strings.Contains(graph, "arena_strdup") {
		t.Errorf("the call graph lacks arena_strdup's chain through make_name:\n%s", graph)
	}
	if !kept {
		t.Error("no leak table entry for the kept arena's objects (remember <- main)")
	}
	w := reportTotals(t, prof)

	// The same program counting its backing blocks as malloc's.
	wovenAll := filepath.Join(dir, "woven-all")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-DCOUNT_BACKING", "-o", wovenAll, src)
	profAll := filepath.Join(dir, "all.prof")
	run(t, dir, []string{"WEAVE_OUT=" + profAll}, wovenAll)
	wAll := reportTotals(t, profAll)

	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		vgp := filepath.Join(dir, "vgpools")
		mustRun(t, dir, nil, append(b.plainCC, "-DVG_POOLS", "-o", vgp, src)...)
		with := memcheck.Run(t, dir, nil, vgp)
		without := memcheck.Run(t, dir, nil, b.plain)
		if allocs != with.Allocs-without.Allocs || bytes != with.Bytes-without.Bytes {
			t.Errorf("weave's pool allocations %d (%d bytes), valgrind's mempool requests %d (%d bytes)",
				allocs, bytes, with.Allocs-without.Allocs, with.Bytes-without.Bytes)
		}
		if wAll.Allocs != int64(with.Allocs) || wAll.BytesAllocated != int64(with.Bytes) {
			t.Errorf("backing counted: weave's allocations %d (%d bytes), valgrind's %d (%d bytes)",
				wAll.Allocs, wAll.BytesAllocated, with.Allocs, with.Bytes)
		}
		k := memcheck.RunLeaks(t, dir, nil, vgp)
		if live := k[3]; int64(live.Blocks) != w.BlocksInUse || int64(live.Bytes) != w.BytesInUse {
			t.Errorf("weave's blocks in use %d (%d bytes), valgrind's still reachable %d (%d bytes)",
				w.BlocksInUse, w.BytesInUse, live.Blocks, live.Bytes)
		}
	})
}
