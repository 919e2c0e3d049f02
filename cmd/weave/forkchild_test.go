package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// TestForkChildProfile: a fork child's profile carries what the child did
// and nothing of its parent's. The runtime zeroes the child's counts at
// fork, but the writer wrote the whole inherited calling-context tree, with
// every name: a woven bash wrote 58-143 KB in each subshell, most of it
// nodes with no counts, and a function the parent called before the fork
// (parent_only) was in the child's profile. testdata/forkchild.c: the
// parent calls parent_only np times and forks; the child calls child_work
// nc times (each allocates 16 bytes and calls shared, which allocates i+1)
// and leaks 40 bytes from child_leak. The child's profile has no
// parent_only, each of its nodes has counts of this process or is the
// ancestor of one, and its numbers are the child's; the parent's and the
// merge of both are as the program made them.
func TestForkChildProfile(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := build(t, dir, "gcc", program{"forkchild", []string{"forkchild.c"}, nil}, "-O1")
	const np, nc = 4, 6
	args := []string{strconv.Itoa(np), strconv.Itoa(nc)}
	out := filepath.Join(dir, "out") + "/"
	pr := run(t, dir, nil, append([]string{plain}, args...)...)
	if !sameRun(t, "forkchild", pr, run(t, dir, []string{"WEAVE_OUT=" + out}, append([]string{woven}, args...)...)) {
		return
	}
	files, _ := filepath.Glob(out + "*.prof")
	if len(files) != 2 {
		t.Fatalf("profiles %v, want the parent's and the child's", files)
	}
	var parent, child *profile.Profile
	var parentFile, childFile string
	for _, f := range files {
		p, err := profile.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := p.MetaValue("inherited"); ok {
			child, childFile = p, f
		} else {
			parent, parentFile = p, f
		}
	}
	if parent == nil || child == nil {
		t.Fatalf("no parent and child among %v", files)
	}
	for _, f := range child.Funcs {
		if f.Name == "parent_only" {
			t.Errorf("the child's profile has parent_only (F %d), which only the parent called", f.ID)
		}
	}
	for _, n := range child.Nodes {
		if !ownWork(n) {
			t.Errorf("the child's profile has node %d (%s), where the child did nothing", n.ID, nodeName(n))
		}
	}
	// The child's own work: calls, allocations, frees, the leak.
	sharedBytes := int64(0)
	for i := range nc {
		sharedBytes += int64(i) + 1
	}
	want := totals{Allocs: 2*nc + 1, Frees: 2 * nc, BytesAllocated: 16*nc + sharedBytes + 40, BytesInUse: 40, BlocksInUse: 1}
	if got := wovenTotals(child); got != want {
		t.Errorf("the child's woven allocations %+v, want %+v", got, want)
	}
	if got := funcCalls(child); got["child_work"] != nc || got["parent_only"] != 0 || got["main"] != 0 {
		t.Errorf("the child's calls %v, want child_work %d and no other", got, nc)
	}
	if got := funcCalls(parent); got["parent_only"] != np || got["child_work"] != 0 || got["main"] != 1 {
		t.Errorf("the parent's calls %v, want main 1, parent_only %d", got, np)
	}
	// weave merge sums the two: the parent's work and the child's.
	merged := filepath.Join(dir, "merged.prof")
	mustRun(t, dir, nil, weaveBin, "merge", "-o", merged, parentFile, childFile)
	m, err := profile.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	if got := funcCalls(m); got["parent_only"] != np || got["child_work"] != nc || got["main"] != 1 {
		t.Errorf("merged calls %v, want main 1, parent_only %d, child_work %d", got, np, nc)
	}
	if got, pt, ct := wovenTotals(m), wovenTotals(parent), wovenTotals(child); got.Allocs != pt.Allocs+ct.Allocs || got.Frees != pt.Frees+ct.Frees {
		t.Errorf("merged allocations %+v, parent's %+v, child's %+v", got, pt, ct)
	}
}

// ownWork says whether node n, or a node below it, has counts: calls,
// time, allocations; a thread's root always.
func ownWork(n *profile.Node) bool {
	if n.Kind == profile.KindRoot || n.Calls > 0 || n.Time > 0 || !n.Heap.IsZero() {
		return true
	}
	for _, c := range n.Children {
		if ownWork(c) {
			return true
		}
	}
	return false
}

func nodeName(n *profile.Node) string {
	switch {
	case n.Func != nil:
		return n.Func.Name
	case n.Site != nil:
		return fmt.Sprintf("%s at line %d", n.Site.Op, n.Site.Line)
	}
	return "root"
}

// wovenTotals sums the allocation counts of the woven (not hidden) sites.
func wovenTotals(p *profile.Profile) totals {
	var t totals
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc || n.Site.Hidden {
			continue
		}
		for c := range profile.NumClasses {
			t.Allocs += int64(n.Heap.Allocs[c])
			t.Frees += int64(n.Heap.Frees[c])
			t.BytesAllocated += int64(n.Heap.Bytes[c])
			t.BytesInUse += int64(n.Heap.Bytes[c]) - int64(n.Heap.FreedBytes[c])
			t.BlocksInUse += int64(n.Heap.Allocs[c]) - int64(n.Heap.Frees[c])
		}
	}
	return t
}
