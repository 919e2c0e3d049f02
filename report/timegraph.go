package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"weave/profile"
)

// TimeEntry is an entry of the time call graph: a function, or a cycle of
// mutually recursive functions merged as gprof does.
type TimeEntry struct {
	Index   int          `json:"index"`
	Name    string       `json:"name"`           // the function's label, or "<cycle N>"
	Func    *Func        `json:"func,omitempty"` // nil for a cycle
	Cycle   int          `json:"cycle,omitempty"`
	Members []TimeMember `json:"members,omitempty"`
	// PctTotal is SelfNS + ChildrenNS of all time.
	PctTotal float64 `json:"pct_total"`
	SelfNS   uint64  `json:"self_ns"`     // in the entry's functions themselves
	Children uint64  `json:"children_ns"` // in their callees outside the entry
	Calls    uint64  `json:"calls"`       // from outside the entry
	// Recursive are the calls from within the entry (itself, or another
	// function of its cycle).
	Recursive uint64    `json:"recursive_calls"`
	Callers   []TimeArc `json:"callers"`
	Callees   []TimeArc `json:"callees"`
}

// TimeMember is a function of a cycle.
type TimeMember struct {
	Func
	Label  string `json:"label"`
	SelfNS uint64 `json:"self_ns"`
	Calls  uint64 `json:"calls"`
}

// TimeArc is a caller or callee line of a time graph entry. Unlike gprof,
// which splits a function's time among its callers in proportion to their
// calls, the calling-context tree gives each arc its exact time.
type TimeArc struct {
	// Index of the entry at the other end; 0 for <spontaneous>, the
	// caller of the functions called outside any woven function (main,
	// thread functions).
	Index int    `json:"index"`
	Name  string `json:"name"`
	// On a caller line: the time the entry spent in itself (SelfNS) and in
	// its callees (ChildrenNS) when called from that caller. On a callee
	// line: the same for the callee when called from the entry.
	SelfNS     uint64 `json:"self_ns"`
	ChildrenNS uint64 `json:"children_ns"`
	// Calls made over the arc, out of TotalCalls, the callee's calls from
	// outside itself.
	Calls      uint64 `json:"calls"`
	TotalCalls uint64 `json:"total_calls"`
}

// graph builds the time call graph.
//
// Each strongly connected component of the function graph (every
// caller->callee pair of the calling-context tree) is one entry. On a path
// an entry's nodes are contiguous, so a node whose parent belongs to
// another entry (or is a root) starts a run of that entry: the run's
// inclusive time is what the entry spent on behalf of the parent's entry,
// and the self times of the run's nodes are its share of that in the
// entry itself. Runs of one entry never nest, so an entry's total counts
// each instant once.
func (tb *timeBuilder) graph(r *Report, tm *Time) []TimeEntry {
	b := tb.b
	nf := len(b.funcs)
	inGraph := make([]bool, nf)
	succ := make([][]int, nf)
	parentFid := func(n *profile.Node) int {
		if n.Parent != nil && n.Parent.Kind == profile.KindFunc {
			return b.nodeFid[n.Parent.ID]
		}
		return -1
	}
	for _, n := range b.order {
		if n.Kind != profile.KindFunc {
			continue
		}
		f := b.nodeFid[n.ID]
		inGraph[f] = true
		if pf := parentFid(n); pf >= 0 && !slices.Contains(succ[pf], f) {
			succ[pf] = append(succ[pf], f)
		}
	}
	comp, ncomp := scc(succ, inGraph)
	compOf := func(fid int) int {
		if fid < 0 {
			return -1
		}
		return comp[fid]
	}

	// runSelf[n]: self time of n and of the nodes below it in the same run.
	runSelf := make([]uint64, len(b.p.Nodes))
	for i := len(b.order) - 1; i >= 0; i-- {
		n := b.order[i]
		if n.Kind != profile.KindFunc {
			continue
		}
		runSelf[n.ID] += n.Time
		if pf := parentFid(n); pf >= 0 && compOf(pf) == compOf(b.nodeFid[n.ID]) {
			runSelf[n.Parent.ID] += runSelf[n.ID]
		}
	}

	type acc struct {
		self, total, calls, rec uint64
	}
	ents := make([]acc, ncomp)
	type arcKey struct{ from, to int } // from -1: spontaneous
	arcs := map[arcKey]*TimeArc{}
	var arcKeys []arcKey
	memberSelf := make([]uint64, nf)
	memberCalls := make([]uint64, nf)
	depth := make([]int, len(b.p.Nodes))
	minDepth := make([]int, ncomp)
	for i := range minDepth {
		minDepth[i] = math.MaxInt
	}
	for _, n := range b.order {
		if n.Parent != nil {
			depth[n.ID] = depth[n.Parent.ID] + 1
		}
		if n.Kind != profile.KindFunc {
			continue
		}
		f := b.nodeFid[n.ID]
		c, pc := comp[f], compOf(parentFid(n))
		minDepth[c] = min(minDepth[c], depth[n.ID])
		ents[c].self += n.Time
		memberSelf[f] += n.Time
		memberCalls[f] += n.Calls
		if pc == c {
			ents[c].rec += n.Calls
			continue
		}
		ents[c].total += tb.incl[n.ID]
		ents[c].calls += n.Calls
		k := arcKey{pc, c}
		a := arcs[k]
		if a == nil {
			a = &TimeArc{}
			arcs[k] = a
			arcKeys = append(arcKeys, k)
		}
		a.SelfNS += runSelf[n.ID]
		a.ChildrenNS += tb.incl[n.ID] - runSelf[n.ID]
		a.Calls += n.Calls
	}

	members := make([][]int, ncomp)
	for fid := range nf {
		if inGraph[fid] {
			members[comp[fid]] = append(members[comp[fid]], fid)
		}
	}
	sortName := func(c int) string {
		if len(members[c]) == 1 {
			return r.Label(b.funcs[members[c][0]])
		}
		return "<cycle>"
	}
	order := make([]int, ncomp)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return cmp.Or(
			cmp.Compare(ents[y].total, ents[x].total),
			cmp.Compare(ents[y].self, ents[x].self),
			cmp.Compare(minDepth[x], minDepth[y]),
			cmp.Compare(sortName(x), sortName(y)))
	})
	index := make([]int, ncomp)
	for i, c := range order {
		index[c] = i + 1
	}
	out := make([]TimeEntry, ncomp)
	cycles := 0
	for i, c := range order {
		a := &ents[c]
		e := TimeEntry{
			Index:     i + 1,
			PctTotal:  pct(a.total, tm.TotalNS),
			SelfNS:    a.self,
			Children:  sub0(a.total, a.self),
			Calls:     a.calls,
			Recursive: a.rec,
			Callers:   []TimeArc{},
			Callees:   []TimeArc{},
		}
		if ms := members[c]; len(ms) == 1 {
			f := b.funcs[ms[0]]
			e.Func = &f
			e.Name = r.Label(f)
		} else {
			cycles++
			e.Cycle = cycles
			e.Name = fmt.Sprintf("<cycle %d>", cycles)
			for _, f := range ms {
				e.Members = append(e.Members, TimeMember{
					Func:   b.funcs[f],
					Label:  r.Label(b.funcs[f]),
					SelfNS: memberSelf[f],
					Calls:  memberCalls[f],
				})
			}
			slices.SortStableFunc(e.Members, func(x, y TimeMember) int {
				return cmp.Or(cmp.Compare(y.SelfNS, x.SelfNS), cmp.Compare(x.Label, y.Label))
			})
		}
		out[i] = e
	}
	for _, k := range arcKeys {
		a := *arcs[k]
		callee := &out[index[k.to]-1]
		a.TotalCalls = callee.Calls
		in := a
		if k.from < 0 {
			in.Index, in.Name = 0, "<spontaneous>"
		} else {
			caller := &out[index[k.from]-1]
			in.Index, in.Name = caller.Index, caller.Name
			outArc := a
			outArc.Index, outArc.Name = callee.Index, callee.Name
			caller.Callees = append(caller.Callees, outArc)
		}
		callee.Callers = append(callee.Callers, in)
	}
	byTime := func(x, y TimeArc) int {
		return cmp.Or(cmp.Compare(y.SelfNS+y.ChildrenNS, x.SelfNS+x.ChildrenNS), cmp.Compare(x.Index, y.Index))
	}
	for i := range out {
		slices.SortFunc(out[i].Callers, byTime)
		slices.SortFunc(out[i].Callees, byTime)
	}
	return out
}
