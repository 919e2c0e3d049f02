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

	up  *TreeNode // the parent; nil at the root
	fid int       // the function's index in the builder
}

// foldTarget returns, when the path from the root to t holds function fid
// profile.FoldDepth times, the nearest of them, else nil: the tree folds
// deep recursion as the stacks do (profile.WalkStacks).
func foldTarget(t *TreeNode, fid int) *TreeNode {
	var near *TreeNode
	k := 0
	for ; t != nil && t.Func != nil; t = t.up {
		if t.fid != fid {
			continue
		}
		if k++; near == nil {
			near = t
		}
		if k == profile.FoldDepth {
			return near
		}
	}
	return nil
}

// tree merges the threads' trees by path, recursion folded (foldTarget).
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
	at := make(map[*profile.Node]*TreeNode)
	for _, n := range b.order {
		switch n.Kind {
		case profile.KindRoot:
			at[n] = root
			root.SelfNS += n.Time
		case profile.KindFunc:
			parent := at[n.Parent]
			fid := b.nodeFid[n.ID]
			t := foldTarget(parent, fid)
			if t == nil {
				k := key{parent, fid}
				if t = nodes[k]; t == nil {
					f := b.funcs[fid]
					t = &TreeNode{Name: r.Label(f), Func: &f, NotCounted: b.notCounted(fid), AtCalls: b.framedAtCalls(fid), up: parent, fid: fid}
					nodes[k] = t
					parent.Children = append(parent.Children, t)
				}
			}
			t.Calls += n.Calls
			t.SelfNS += n.Time
			at[n] = t
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
