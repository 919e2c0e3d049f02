package report

import (
	"cmp"
	"slices"

	"github.com/weave-profiler/weave/profile"
)

// TreeNode is a node of the calling-context tree with times, the trees of
// all threads merged by call path (as uftrace graph draws it). The root
// stands for all threads: its self time is the time outside woven
// functions.
type TreeNode struct {
	Name  string `json:"name"`           // the function's label; "<all threads>" at the root
	Func  *Func  `json:"func,omitempty"` // nil at the root
	Calls uint64 `json:"calls"`
	// NotCounted: a frameless function (--frames auto), whose calls were
	// not counted: Calls is 0, not its number of calls.
	NotCounted bool `json:"calls_not_counted,omitempty"`
	// AtCalls: a function framed at its calls (--frames auto): Calls
	// counts those calls that may allocate (or its runs that made one),
	// not all its calls.
	AtCalls bool   `json:"calls_at_calls,omitempty"`
	SelfNS  uint64 `json:"self_ns"`
	TotalNS uint64 `json:"total_ns"` // the node and its subtree
	// Children by total time (decreasing); those below the threshold are
	// left out, and counted in Hidden and HiddenNS.
	Children []*TreeNode `json:"children,omitempty"`
	Hidden   int         `json:"hidden,omitempty"`
	HiddenNS uint64      `json:"hidden_ns,omitempty"`
}

// tree merges the threads' folded paths (profile.Folded) by path.
// A node's total is its self time and its children's totals: a folded
// activation's time is in its target's self time, so that no instant
// counts twice.
func (tb *timeBuilder) tree(r *Report, tm *Time) *TreeNode {
	b := tb.b
	root := &TreeNode{Name: "<all threads>"}
	type key struct {
		parent *TreeNode
		fid    int
	}
	nodes := map[key]*TreeNode{}
	byEntry := map[int32]*TreeNode{} // a folded path's node
	for _, n := range b.order {
		switch n.Kind {
		case profile.KindRoot:
			root.SelfNS += n.Time
		case profile.KindFunc:
			e, up := b.folded.Entry(n)
			t := byEntry[e]
			if t == nil {
				parent := root
				if up >= 0 {
					parent = byEntry[up]
				}
				fid := b.nodeFid[n.ID]
				k := key{parent, fid}
				if t = nodes[k]; t == nil {
					f := b.funcs[fid]
					t = &TreeNode{Name: r.Label(f), Func: &f, NotCounted: b.notCounted(fid), AtCalls: b.framedAtCalls(fid)}
					nodes[k] = t
					parent.Children = append(parent.Children, t)
				}
				byEntry[e] = t
			}
			t.Calls += n.Calls
			t.SelfNS += n.Time
		}
	}
	treeTotals(root)
	// Sort and prune, top-down.
	stack := []*TreeNode{root}
	for len(stack) > 0 {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		slices.SortStableFunc(t.Children, func(x, y *TreeNode) int {
			return cmp.Or(cmp.Compare(y.TotalNS, x.TotalNS), cmp.Compare(y.Calls, x.Calls), cmp.Compare(x.Name, y.Name))
		})
		kept := t.Children[:0]
		for _, c := range t.Children {
			if tm.shown(c.TotalNS) {
				kept = append(kept, c)
				stack = append(stack, c)
			} else {
				t.Hidden++
				t.HiddenNS += c.TotalNS
			}
		}
		t.Children = kept
		if len(t.Children) == 0 {
			t.Children = nil
		}
	}
	return root
}

// treeTotals sets each node's TotalNS to its self time and its children's
// totals, children first (no recursion: a tree may be deep).
func treeTotals(root *TreeNode) {
	var order []*TreeNode
	for stack := []*TreeNode{root}; len(stack) > 0; {
		t := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		order = append(order, t)
		stack = append(stack, t.Children...)
	}
	for i := len(order) - 1; i >= 0; i-- {
		t := order[i]
		t.TotalNS = t.SelfNS
		for _, c := range t.Children {
			t.TotalNS += c.TotalNS
		}
	}
}
