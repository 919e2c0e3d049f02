package report

import (
	"cmp"
	"slices"

	"github.com/weave-profiler/weave/profile"
)

// The time tables: gprof's flat profile, a gprof-style call graph of time,
// and the calling-context tree (as uftrace graph draws it).
const (
	TableFlat      = "flat"
	TableTimeGraph = "timegraph"
	TableTree      = "tree"
)

// MemoryTables and TimeTables are the two groups of AllTables; "memory" and
// "time" select them in ParseTables.
var (
	MemoryTables = []string{TableLeaks, TableBins, TableDirect, TableGraph}
	TimeTables   = []string{TableFlat, TableTimeGraph, TableTree}
)

// DefaultThreshold is the command line's default Options.Threshold, in
// percent of all time.
const DefaultThreshold = 0.5

// HasTime reports whether the profile holds times (the program ran with
// timing on).
func HasTime(p *profile.Profile) bool { return p.HasTime() }

// Time is the timing model: times per function summed over calling
// contexts and threads, and the tables built from it. Times are in ns.
// In exact mode they are wall-clock times between entries and exits, with
// the runtime's own cost subtracted; in sampled mode, thread CPU time
// split among functions by sampling.
type Time struct {
	Mode  string `json:"mode"`            // "exact", "sampled", or "" when the profile does not say
	Clock string `json:"clock,omitempty"` // "tsc", "monotonic", "thread_cputime"
	// TotalNS is all the time measured: every thread's, in woven functions
	// or not.
	TotalNS uint64 `json:"total_ns"`
	// OutsideNS is the part of TotalNS spent outside any woven function
	// (before main, in unwoven thread functions, after exit began).
	OutsideNS uint64 `json:"outside_ns"`
	// OverheadNS is the instrumentation's own cost that exact mode
	// subtracted (AspectTrace's "aspects overhead"), CallOverheadNS that
	// cost per call.
	OverheadNS     uint64  `json:"overhead_ns,omitempty"`
	CallOverheadNS float64 `json:"call_overhead_ns,omitempty"`
	// Clamped counts the contexts exact mode left uncompensated: the
	// subtraction would have taken their self time below zero.
	Clamped uint64 `json:"clamped,omitempty"`
	Samples uint64 `json:"samples,omitempty"` // sampled mode
	Signal  string `json:"signal,omitempty"`  // sampled mode, older profiles: see profile/format.go
	Sampler string `json:"sampler,omitempty"` // sampled mode: see profile/format.go
	// ProcessCPUNS is the process's CPU time when the exiting thread's
	// time was last charged (sampled mode): TotalNS's and what no table
	// holds.
	ProcessCPUNS uint64 `json:"process_cpu_ns,omitempty"`
	// Threshold, in percent of TotalNS: the tree leaves out the contexts
	// below it (counting them in Hidden), the text tables their lines;
	// Functions and Graph stay whole.
	Threshold float64      `json:"threshold_pct"`
	Threads   []ThreadTime `json:"threads"`
	// Functions is the flat profile, every function that was called or
	// took time, by self time (decreasing); not cut by Threshold.
	Functions []FuncTime  `json:"functions"`
	Graph     []TimeEntry `json:"graph,omitempty"` // TableTimeGraph
	Tree      *TreeNode   `json:"tree,omitempty"`  // TableTree
}

// ThreadTime is the time of one thread.
type ThreadTime struct {
	ID        int    `json:"id"`
	TID       uint64 `json:"tid"`
	TotalNS   uint64 `json:"total_ns"`
	OutsideNS uint64 `json:"outside_ns"`
}

// FuncTime is a function's line of the flat profile.
type FuncTime struct {
	Func
	Calls uint64 `json:"calls"` // all calls, recursive ones included
	// OuterCalls are the calls not made from within an activation of the
	// function itself (for a recursive function, the outermost ones).
	OuterCalls uint64 `json:"outer_calls"`
	// AtCalls: a function framed at its calls (--frames auto): Calls
	// counts those calls that may allocate (or its runs that made one),
	// not all its calls.
	AtCalls bool `json:"calls_at_calls,omitempty"`
	// NotCounted: a frameless function (--frames auto), whose calls were
	// not counted: Calls is 0, not its number of calls.
	NotCounted bool   `json:"calls_not_counted,omitempty"`
	SelfNS     uint64 `json:"self_ns"`
	// TotalNS is the time of the function and its callees, each instant
	// counted once: only outermost activations count.
	TotalNS        uint64  `json:"total_ns"`
	PctSelf        float64 `json:"pct_time"`      // SelfNS of all time
	PctTotal       float64 `json:"pct_total"`     // TotalNS of all time
	CumulativeNS   uint64  `json:"cumulative_ns"` // SelfNS of this and the lines above
	SelfPerCallNS  float64 `json:"self_ns_per_call"`
	TotalPerCallNS float64 `json:"total_ns_per_call"` // TotalNS / OuterCalls
}

// timeBuilder holds the trees with inclusive times and the per-function
// sums.
type timeBuilder struct {
	b    *builder
	incl []uint64 // node id -> time of its subtree
	// outer marks the nodes with no ancestor of the same function.
	outer []bool
}

func newTimeBuilder(b *builder) *timeBuilder {
	tb := &timeBuilder{b: b, incl: make([]uint64, len(b.p.Nodes)), outer: make([]bool, len(b.p.Nodes))}
	for i := len(b.order) - 1; i >= 0; i-- {
		n := b.order[i]
		if n.Kind == profile.KindAlloc {
			continue
		}
		tb.incl[n.ID] += n.Time
		if n.Parent != nil {
			tb.incl[n.Parent.ID] += tb.incl[n.ID]
		}
	}
	// outer: a depth-first walk keeping the number of activations of each
	// function on the path.
	onPath := make([]int, len(b.funcs))
	for _, t := range b.p.Threads {
		if t.Root == nil {
			continue
		}
		type item struct {
			n    *profile.Node
			exit bool
		}
		stack := []item{{t.Root, false}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			fid := b.nodeFid[it.n.ID]
			if it.exit {
				onPath[fid]--
				continue
			}
			if fid >= 0 {
				tb.outer[it.n.ID] = onPath[fid] == 0
				onPath[fid]++
				stack = append(stack, item{it.n, true})
			}
			for i := len(it.n.Children) - 1; i >= 0; i-- {
				if c := it.n.Children[i]; c.Kind != profile.KindAlloc {
					stack = append(stack, item{c, false})
				}
			}
		}
	}
	return tb
}

// buildTime builds the timing model and the time tables selected in r.
func buildTime(b *builder, r *Report, threshold float64) *Time {
	p := b.p
	tb := newTimeBuilder(b)
	tm := &Time{Threshold: max(threshold, 0), Threads: []ThreadTime{}, Functions: []FuncTime{}}
	tm.Mode, _ = p.MetaValue("time_mode")
	tm.Clock, _ = p.MetaValue("time_clock")
	tm.Signal, _ = p.MetaValue("time_signal")
	tm.Sampler, _ = p.MetaValue("time_sampler")
	tm.OverheadNS, _ = p.MetaUint("time_overhead_ns")
	tm.Clamped, _ = p.MetaUint("time_clamped")
	tm.Samples, _ = p.MetaUint("time_samples")
	tm.ProcessCPUNS, _ = p.MetaUint("time_process_cpu_ns")
	if ps, _ := p.MetaUint("time_call_overhead_ps"); ps > 0 {
		tm.CallOverheadNS = float64(ps) / 1000
	}
	for _, t := range p.Threads {
		tt := ThreadTime{ID: t.ID, TID: t.TID}
		if t.Root != nil {
			tt.TotalNS = tb.incl[t.Root.ID]
			tt.OutsideNS = t.Root.Time
		}
		tm.TotalNS += tt.TotalNS
		tm.OutsideNS += tt.OutsideNS
		tm.Threads = append(tm.Threads, tt)
	}

	fts := make([]FuncTime, len(b.funcs))
	used := make([]bool, len(b.funcs))
	for _, n := range b.order {
		fid := b.nodeFid[n.ID]
		if fid < 0 {
			continue
		}
		f := &fts[fid]
		used[fid] = true
		f.Calls += n.Calls
		f.SelfNS += n.Time
		if tb.outer[n.ID] {
			f.OuterCalls += n.Calls
			f.TotalNS += tb.incl[n.ID]
		}
	}
	for fid, f := range fts {
		if !used[fid] || (f.Calls == 0 && f.TotalNS == 0) {
			continue
		}
		f.Func, f.AtCalls, f.NotCounted = b.funcs[fid], b.framedAtCalls(fid), b.notCounted(fid)
		f.PctSelf = pct(f.SelfNS, tm.TotalNS)
		f.PctTotal = pct(f.TotalNS, tm.TotalNS)
		if f.Calls > 0 {
			f.SelfPerCallNS = float64(f.SelfNS) / float64(f.Calls)
		}
		if f.OuterCalls > 0 {
			f.TotalPerCallNS = float64(f.TotalNS) / float64(f.OuterCalls)
		}
		tm.Functions = append(tm.Functions, f)
	}
	slices.SortStableFunc(tm.Functions, func(x, y FuncTime) int {
		return cmp.Or(
			cmp.Compare(y.SelfNS, x.SelfNS),
			cmp.Compare(y.TotalNS, x.TotalNS),
			cmp.Compare(y.Calls, x.Calls),
			cmp.Compare(r.Label(x.Func), r.Label(y.Func)),
			cmp.Compare(x.File, y.File))
	})
	var cum uint64
	for i := range tm.Functions {
		cum += tm.Functions[i].SelfNS
		tm.Functions[i].CumulativeNS = cum
	}
	if r.Has(TableTimeGraph) {
		tm.Graph = tb.graph(r, tm)
	}
	if r.Has(TableTree) {
		tm.Tree = tb.tree(r, tm)
	}
	return tm
}

// shown reports whether a time of ns is at or above the threshold.
func (tm *Time) shown(ns uint64) bool {
	return tm.Threshold <= 0 || pct(ns, tm.TotalNS) >= tm.Threshold
}
