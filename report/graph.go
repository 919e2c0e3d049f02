package report

import (
	"cmp"

	"github.com/weave-profiler/weave/profile"
)

// graph builds the allocation call graph.
//
// mprof and gprof see caller/callee pairs only; the calling-context tree
// keeps whole paths, so the bytes here are exact. The function graph holds
// the caller->callee arcs on paths to allocation leaves (gprofGraph merges
// its cycles). The subtree of a node starting a run of an entry is what the
// entry allocated on behalf of the parent's: adding up subtrees at run
// starts counts every leaf once per entry on its path and once per arc
// between entries.
func (b *builder) graph(r *Report) []Entry {
	g := newGprofGraph[BySize](b)
	live := func(n *profile.Node) bool { return !b.sub[n.ID].IsZero() }
	for _, n := range b.order {
		if n.Kind == profile.KindFunc && live(n) {
			g.link(b.parentFid(n), b.nodeFid[n.ID])
		}
	}
	for _, l := range b.leaves {
		if b.virtual[l.ID] {
			g.link(b.parentFid(l), b.leafFid[l.ID])
		}
	}
	g.merge()

	type acc struct{ selfDesc, self profile.Heap }
	ents := make([]acc, g.ncomp)
	credit := func(pc, c int, h *profile.Heap) {
		if pc == c {
			return
		}
		ents[c].selfDesc.Add(h)
		if pc >= 0 {
			a := g.arc(pc, c)
			for i := range profile.NumClasses {
				a[i] += h.Bytes[i]
			}
		}
	}
	for _, n := range b.order {
		if n.Kind == profile.KindFunc && live(n) {
			credit(g.compOf(b.parentFid(n)), g.compOf(b.nodeFid[n.ID]), &b.sub[n.ID])
		}
	}
	fidSelf := make([]profile.Heap, len(b.funcs))
	for _, l := range b.leaves {
		fidSelf[b.leafFid[l.ID]].Add(&l.Heap)
		c := g.compOf(b.leafFid[l.ID])
		ents[c].self.Add(&l.Heap)
		if b.virtual[l.ID] {
			credit(g.compOf(b.parentFid(l)), c, &l.Heap)
		}
	}
	// A virtual leaf stands for a node of its function, even with no bytes.
	for _, n := range b.order {
		if n.Kind == profile.KindAlloc && b.virtual[n.ID] {
			g.reach(n, b.leafFid[n.ID])
		}
	}
	g.countCalls()

	entries := g.layout(r,
		func(x, y int) int {
			return cmp.Or(
				cmp.Compare(ents[y].selfDesc.TotalBytes(), ents[x].selfDesc.TotalBytes()),
				cmp.Compare(ents[y].selfDesc.TotalAllocs(), ents[x].selfDesc.TotalAllocs()))
		},
		func(fid int) uint64 { return fidSelf[fid].TotalBytes() },
		func(a *BySize) uint64 { return total(*a) })
	totalBytes := r.Totals.BytesAllocated
	return convert(entries, func(ge *gprofEntry[BySize]) Entry {
		a := &ents[ge.comp]
		e := Entry{
			Index: ge.index, Name: ge.name, Func: ge.fn, Cycle: ge.cycle,
			SelfDesc:    a.selfDesc.TotalBytes(),
			PctSelfDesc: pct(a.selfDesc.TotalBytes(), totalBytes),
			Self:        a.self.TotalBytes(),
			SelfBySize:  a.self.Bytes,
			Calls:       ge.calls,
			Recursive:   ge.recursive,
			NotCounted:  ge.uncounted,
			AtCalls:     ge.atCalls,
		}
		for _, f := range ge.members {
			h := &fidSelf[f]
			e.Members = append(e.Members, Member{
				Func:       b.funcs[f],
				Label:      r.Label(b.funcs[f]),
				Self:       h.TotalBytes(),
				SelfBySize: h.Bytes,
				Calls:      g.memberCalls[f],
			})
		}
		// Frac is of this entry's self+desc on its caller and callee lines alike.
		arc := func(l *gprofLine[BySize]) Arc {
			bytes := total(*l.q)
			return Arc{Index: l.index, Name: l.name, Bytes: bytes, BySize: *l.q, Frac: frac(bytes, e.SelfDesc),
				Calls: l.calls, TotalCalls: l.totalCalls, NotCounted: l.uncounted, AtCalls: l.atCalls}
		}
		e.Callers, e.Callees = convert(ge.callers, arc), convert(ge.callees, arc)
		return e
	})
}

// frac returns a/b, or 0 when b is 0.
func frac(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
