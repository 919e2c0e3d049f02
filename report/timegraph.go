package report

import (
	"cmp"

	"github.com/weave-profiler/weave/profile"
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
	Recursive uint64 `json:"recursive_calls"`
	// NotCounted: a frameless function (--frames auto), whose calls were
	// not counted: Calls is 0, not its number of calls.
	NotCounted bool `json:"calls_not_counted,omitempty"`
	// AtCalls: a function framed at its calls (--frames auto): Calls
	// counts those calls that may allocate (or its runs that made one),
	// not all its calls.
	AtCalls bool      `json:"calls_at_calls,omitempty"`
	Callers []TimeArc `json:"callers"`
	Callees []TimeArc `json:"callees"`
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
	NotCounted bool   `json:"calls_not_counted,omitempty"` // the callee's calls were not counted
	AtCalls    bool   `json:"calls_at_calls,omitempty"`    // the callee is framed at its calls
}

// graph builds the time call graph.
//
// The function graph holds every caller->callee pair of the
// calling-context tree (gprofGraph merges its cycles). A run of an entry's
// nodes has as inclusive time what the entry spent on behalf of the
// parent's entry, and the self times of the run's nodes are its share of
// that in the entry itself. Runs of one entry never nest, so an entry's
// total counts each instant once.
func (tb *timeBuilder) graph(r *Report, tm *Time) []TimeEntry {
	b := tb.b
	g := newGprofGraph[timeArc](b)
	for _, n := range b.order {
		if n.Kind == profile.KindFunc {
			g.link(b.parentFid(n), b.nodeFid[n.ID])
		}
	}
	g.merge()

	// runSelf[n]: self time of n and of the nodes below it in the same run.
	runSelf := make([]uint64, len(b.p.Nodes))
	for i := len(b.order) - 1; i >= 0; i-- {
		n := b.order[i]
		if n.Kind != profile.KindFunc {
			continue
		}
		runSelf[n.ID] += n.Time
		if pf := b.parentFid(n); pf >= 0 && g.compOf(pf) == g.compOf(b.nodeFid[n.ID]) {
			runSelf[n.Parent.ID] += runSelf[n.ID]
		}
	}

	type acc struct{ self, total uint64 }
	ents := make([]acc, g.ncomp)
	memberSelf := make([]uint64, len(b.funcs))
	for _, n := range b.order {
		if n.Kind != profile.KindFunc {
			continue
		}
		f := b.nodeFid[n.ID]
		c, pc := g.compOf(f), g.compOf(b.parentFid(n))
		ents[c].self += n.Time
		memberSelf[f] += n.Time
		if pc == c {
			continue
		}
		ents[c].total += tb.incl[n.ID]
		a := g.arc(pc, c)
		a.selfNS += runSelf[n.ID]
		a.childrenNS += tb.incl[n.ID] - runSelf[n.ID]
	}
	g.countCalls()

	entries := g.layout(r,
		func(x, y int) int {
			return cmp.Or(cmp.Compare(ents[y].total, ents[x].total), cmp.Compare(ents[y].self, ents[x].self))
		},
		func(fid int) uint64 { return memberSelf[fid] },
		func(a *timeArc) uint64 { return a.selfNS + a.childrenNS })
	arc := func(l *gprofLine[timeArc]) TimeArc {
		return TimeArc{Index: l.index, Name: l.name, SelfNS: l.q.selfNS, ChildrenNS: l.q.childrenNS,
			Calls: l.calls, TotalCalls: l.totalCalls, NotCounted: l.uncounted, AtCalls: l.atCalls}
	}
	return convert(entries, func(ge *gprofEntry[timeArc]) TimeEntry {
		a := &ents[ge.comp]
		e := TimeEntry{
			Index: ge.index, Name: ge.name, Func: ge.fn, Cycle: ge.cycle,
			PctTotal:   pct(a.total, tm.TotalNS),
			SelfNS:     a.self,
			Children:   profile.Remaining(a.total, a.self),
			Calls:      ge.calls,
			Recursive:  ge.recursive,
			NotCounted: ge.uncounted,
			AtCalls:    ge.atCalls,
			Callers:    convert(ge.callers, arc),
			Callees:    convert(ge.callees, arc),
		}
		for _, f := range ge.members {
			e.Members = append(e.Members, TimeMember{
				Func:   b.funcs[f],
				Label:  r.Label(b.funcs[f]),
				SelfNS: memberSelf[f],
				Calls:  g.memberCalls[f],
			})
		}
		return e
	})
}

// timeArc is what an arc of the time graph carries: the callee's time
// when called over it, in itself and in its callees.
type timeArc struct{ selfNS, childrenNS uint64 }
