package report

import (
	"slices"

	"github.com/weave-profiler/weave/profile"
)

// flameTree is the calling-context tree of the HTML flame graph: the
// threads' trees merged by path of frame labels (as the folded stacks
// are), in columns, parents before children. Node 0 is the root ("all").
// Values are self values, one column per quantity of Quantities; the page
// sums them up the tree.
type flameTree struct {
	Labels []string           `json:"labels"` // distinct frame labels
	Files  []string           `json:"files"`  // by label
	Parent []int              `json:"parent"` // -1 for the root
	Label  []int              `json:"label"`  // index into Labels
	Self   map[string][]int64 `json:"self"`   // quantity -> self value by node
	// Folded counts the contexts below the size cut, whose values were
	// added to their parents' (0 when none was cut).
	Folded int `json:"folded"`
}

// maxFlameNodes bounds the flame graph's nodes, so that a profile with a
// huge tree still makes a page of a few megabytes that draws at once.
const maxFlameNodes = 60000

// flameTree builds the tree, keeping at most limit nodes.
func (r *Report) flameTree(limit int) *flameTree {
	type node struct {
		parent, label int
		self          Values
		kids          map[int]int // label -> node
	}
	nodes := []node{{parent: -1, label: 0}}
	t := &flameTree{Labels: []string{"all"}, Files: []string{""}}
	labelOf := map[string]int{"all": 0}
	r.WalkStacks(func(_ int, frames []StackFrame, v *Values) {
		at := 0
		for i := range frames {
			l, ok := labelOf[frames[i].Label]
			if !ok {
				l = len(t.Labels)
				labelOf[frames[i].Label] = l
				t.Labels = append(t.Labels, frames[i].Label)
				t.Files = append(t.Files, frames[i].Func.File)
			}
			if nodes[at].kids == nil {
				nodes[at].kids = map[int]int{}
			}
			next, ok := nodes[at].kids[l]
			if !ok {
				next = len(nodes)
				nodes[at].kids[l] = next
				nodes = append(nodes, node{parent: at, label: l})
			}
			at = next
		}
		nodes[at].self.Add(v)
	})

	// Cut the smallest contexts when there are too many: a node's size is
	// its largest share of any quantity's total.
	keep := make([]bool, len(nodes))
	for i := range keep {
		keep[i] = true
	}
	if len(nodes) > limit {
		incl := make([]Values, len(nodes))
		var total Values
		for i := len(nodes) - 1; i >= 0; i-- {
			incl[i].Add(&nodes[i].self)
			if p := nodes[i].parent; p >= 0 {
				incl[p].Add(&incl[i])
			} else {
				total = incl[i]
			}
		}
		share := make([]float64, len(nodes))
		for i := range nodes {
			for _, q := range profile.Quantities {
				if tq := total.Get(q); tq > 0 {
					share[i] = max(share[i], float64(incl[i].Get(q))/float64(tq))
				}
			}
		}
		sorted := slices.Clone(share)
		slices.Sort(sorted)
		cut := sorted[len(sorted)-limit]
		for i := 1; i < len(nodes); i++ {
			// A child is never bigger than its parent, so what is kept
			// is a tree; ties at the cut go.
			keep[i] = share[i] > cut && keep[nodes[i].parent]
		}
	}
	newID := make([]int, len(nodes))
	t.Self = map[string][]int64{}
	for i := range nodes {
		if !keep[i] {
			// Fold into the nearest kept ancestor.
			a := nodes[i].parent
			for !keep[a] {
				a = nodes[a].parent
			}
			newID[i] = newID[a]
			for _, q := range profile.Quantities {
				t.Self[q][newID[a]] += nodes[i].self.Get(q)
			}
			t.Folded++
			continue
		}
		newID[i] = len(t.Parent)
		p := -1
		if nodes[i].parent >= 0 {
			p = newID[nodes[i].parent]
		}
		t.Parent = append(t.Parent, p)
		t.Label = append(t.Label, nodes[i].label)
		for _, q := range profile.Quantities {
			t.Self[q] = append(t.Self[q], nodes[i].self.Get(q))
		}
	}
	return t
}
