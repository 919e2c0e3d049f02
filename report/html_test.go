package report

import (
	"testing"

	"github.com/weave-profiler/weave/profile"
)

// TestFlameTreeCut: a tree cut to fewer nodes keeps every quantity's total
// (the cut contexts' values go to their callers) and the largest nodes.
func TestFlameTreeCut(t *testing.T) {
	p, err := profile.ReadFile("testdata/time-sampled.prof")
	if err != nil {
		t.Fatal(err)
	}
	r, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	whole := r.flameTree(1 << 30)
	if whole.Folded != 0 || len(whole.Parent) < 20 {
		t.Fatalf("whole tree: %d nodes, %d folded", len(whole.Parent), whole.Folded)
	}
	for _, limit := range []int{1, 3, 10} {
		cut := r.flameTree(limit)
		if len(cut.Parent) > limit || len(cut.Parent)+cut.Folded != len(whole.Parent) {
			t.Errorf("limit %d: %d nodes, %d folded, of %d", limit, len(cut.Parent), cut.Folded, len(whole.Parent))
		}
		for _, q := range profile.Quantities {
			var a, b int64
			for _, v := range whole.Self[q] {
				a += v
			}
			for _, v := range cut.Self[q] {
				b += v
			}
			if a != b {
				t.Errorf("limit %d: %s total %d, whole tree %d", limit, q, b, a)
			}
		}
		for i, par := range cut.Parent {
			if (i == 0) != (par < 0) || par >= i {
				t.Errorf("limit %d: node %d has parent %d", limit, i, par)
			}
		}
	}
}
