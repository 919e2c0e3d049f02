package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/weave-profiler/weave/profile"
)

// gprofGraph builds and lays out the gprof-style entries (functions, and
// cycles merged into "<cycle N>") and arcs that the allocation and time
// call graphs share, each graph adding up its own quantities, Q per arc.
type gprofGraph[Q any] struct {
	b       *builder
	inGraph []bool  // by fid
	succ    [][]int // by fid: its callees in the graph
	comp    []int   // fid -> component, once merged
	ncomp   int
	members [][]int // component -> fids

	depth    []int // node id -> depth in its tree
	minDepth []int // component -> least depth of its nodes
	// calls and recursive are the calls of a component from outside it
	// and from within; memberCalls those of each function.
	calls, recursive []uint64
	memberCalls      []uint64
	arcs             map[arcKey]*gprofArc[Q]
	arcKeys          []arcKey // in the order the arcs were made
}

// arcKey names an arc by its caller's and callee's components; a caller
// of -1 is <spontaneous>, the caller of the functions called from a root.
//
// On any path of the calling-context tree an entry's nodes are contiguous:
// a path leaving an entry and coming back would put the functions in
// between into it. So a node whose parent belongs to another entry (or is
// a root) starts a run of its entry, made on behalf of the parent's: what
// the graphs add up on the arc between them.
type arcKey struct{ from, to int }

// gprofArc is an arc's calls and its graph's quantities.
type gprofArc[Q any] struct {
	calls uint64
	q     Q
}

func newGprofGraph[Q any](b *builder) *gprofGraph[Q] {
	nf := len(b.funcs)
	g := &gprofGraph[Q]{
		b:           b,
		inGraph:     make([]bool, nf),
		succ:        make([][]int, nf),
		depth:       make([]int, len(b.p.Nodes)),
		memberCalls: make([]uint64, nf),
		arcs:        map[arcKey]*gprofArc[Q]{},
	}
	for _, n := range b.order {
		if n.Parent != nil {
			g.depth[n.ID] = g.depth[n.Parent.ID] + 1
		}
	}
	return g
}

// parentFid returns the function of n's parent, or -1 below a root.
func (b *builder) parentFid(n *profile.Node) int {
	if n.Parent != nil && n.Parent.Kind == profile.KindFunc {
		return b.nodeFid[n.Parent.ID]
	}
	return -1
}

// link puts the call from function from (-1: none) to function to into
// the function graph.
func (g *gprofGraph[Q]) link(from, to int) {
	g.inGraph[to] = true
	if from >= 0 {
		g.inGraph[from] = true
		if !slices.Contains(g.succ[from], to) {
			g.succ[from] = append(g.succ[from], to)
		}
	}
}

// merge makes the entries, the strongly connected components of the
// function graph (a recursive function, or mutually recursive ones), once
// every call is linked.
func (g *gprofGraph[Q]) merge() {
	g.comp, g.ncomp = scc(g.succ, g.inGraph)
	g.members = make([][]int, g.ncomp)
	for fid, in := range g.inGraph {
		if in {
			g.members[g.comp[fid]] = append(g.members[g.comp[fid]], fid)
		}
	}
	g.minDepth = make([]int, g.ncomp)
	for i := range g.minDepth {
		g.minDepth[i] = math.MaxInt
	}
	g.calls = make([]uint64, g.ncomp)
	g.recursive = make([]uint64, g.ncomp)
}

// compOf returns the component of a function, or -1 for none or one
// outside the graph.
func (g *gprofGraph[Q]) compOf(fid int) int {
	if fid < 0 || !g.inGraph[fid] {
		return -1
	}
	return g.comp[fid]
}

// arc returns the quantities of the arc between two components, made on
// first use.
func (g *gprofGraph[Q]) arc(from, to int) *Q {
	k := arcKey{from, to}
	a := g.arcs[k]
	if a == nil {
		a = &gprofArc[Q]{}
		g.arcs[k] = a
		g.arcKeys = append(g.arcKeys, k)
	}
	return &a.q
}

// reach records that function fid runs at node n, for the order of the
// entries that tie on their quantities: callers first, as gprof's call
// graph reads top-down.
func (g *gprofGraph[Q]) reach(n *profile.Node, fid int) {
	if c := g.compOf(fid); c >= 0 {
		g.minDepth[c] = min(g.minDepth[c], g.depth[n.ID])
	}
}

// countCalls adds up the calls of the function nodes: per function, per
// entry from outside it and from within, and per arc the graph made.
func (g *gprofGraph[Q]) countCalls() {
	b := g.b
	for _, n := range b.order {
		if n.Kind != profile.KindFunc {
			continue
		}
		f := b.nodeFid[n.ID]
		c := g.compOf(f)
		if c < 0 {
			continue
		}
		g.reach(n, f)
		g.memberCalls[f] += n.Calls
		pc := g.compOf(b.parentFid(n))
		if pc == c {
			g.recursive[c] += n.Calls
			continue
		}
		g.calls[c] += n.Calls
		if a := g.arcs[arcKey{pc, c}]; a != nil {
			a.calls += n.Calls
		}
	}
}

// gprofEntry is an entry laid out, for a graph to fill in its quantities.
type gprofEntry[Q any] struct {
	comp             int
	index            int // from 1, as in gprof
	name             string
	fn               *Func // nil for a cycle
	cycle            int   // N of a cycle
	members          []int // fids of a cycle, in layout's order
	calls, recursive uint64
	uncounted        bool // a frameless function: its calls were not counted
	atCalls          bool // framed at its calls: those calls were counted
	callers, callees []gprofLine[Q]
}

// gprofLine is an arc as a caller or callee line of an entry.
type gprofLine[Q any] struct {
	index int // of the entry at the other end; 0 for <spontaneous>
	name  string
	// Calls made over the arc, out of totalCalls, the callee's from
	// outside it.
	calls, totalCalls uint64
	uncounted         bool // the callee's calls were not counted
	atCalls           bool // the callee is framed at its calls
	q                 *Q
}

// layout orders the entries by compare of their components, then callers
// first, then by name; the members of a cycle by memberWeight
// (decreasing), then by label; an entry's callers and callees by
// arcWeight (decreasing), then by index.
func (g *gprofGraph[Q]) layout(r *Report, compare func(x, y int) int, memberWeight func(fid int) uint64, arcWeight func(*Q) uint64) []gprofEntry[Q] {
	b := g.b
	sortName := func(c int) string {
		if len(g.members[c]) == 1 {
			return r.Label(b.funcs[g.members[c][0]])
		}
		return "<cycle>" // before names of letters; ties between cycles keep component order
	}
	order := make([]int, g.ncomp)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return cmp.Or(compare(x, y), cmp.Compare(g.minDepth[x], g.minDepth[y]), cmp.Compare(sortName(x), sortName(y)))
	})
	out := make([]gprofEntry[Q], g.ncomp)
	byComp := make([]*gprofEntry[Q], g.ncomp)
	cycles := 0
	for i, c := range order {
		e := &out[i]
		byComp[c] = e
		e.comp, e.index = c, i+1
		e.calls, e.recursive = g.calls[c], g.recursive[c]
		if ms := g.members[c]; len(ms) == 1 {
			f := b.funcs[ms[0]]
			e.fn = &f
			e.name = r.Label(f)
			e.uncounted, e.atCalls = b.notCounted(ms[0]), b.framedAtCalls(ms[0])
		} else {
			cycles++
			e.cycle = cycles
			e.name = fmt.Sprintf("<cycle %d>", cycles)
			e.members = slices.Clone(ms)
			slices.SortStableFunc(e.members, func(x, y int) int {
				return cmp.Or(cmp.Compare(memberWeight(y), memberWeight(x)), cmp.Compare(r.Label(b.funcs[x]), r.Label(b.funcs[y])))
			})
		}
	}
	for _, k := range g.arcKeys {
		a := g.arcs[k]
		callee := byComp[k.to]
		line := gprofLine[Q]{index: 0, name: "<spontaneous>", calls: a.calls, totalCalls: callee.calls, uncounted: callee.uncounted, atCalls: callee.atCalls, q: &a.q}
		if k.from >= 0 {
			caller := byComp[k.from]
			line.index, line.name = caller.index, caller.name
			calleeLine := line
			calleeLine.index, calleeLine.name = callee.index, callee.name
			caller.callees = append(caller.callees, calleeLine)
		}
		callee.callers = append(callee.callers, line)
	}
	byWeight := func(x, y gprofLine[Q]) int {
		return cmp.Or(cmp.Compare(arcWeight(y.q), arcWeight(x.q)), cmp.Compare(x.index, y.index))
	}
	for i := range out {
		slices.SortFunc(out[i].callers, byWeight)
		slices.SortFunc(out[i].callees, byWeight)
	}
	return out
}

// convert makes a graph's entries or arcs from the laid-out ones; never
// nil, as the JSON has [] for no callers or callees.
func convert[T, U any](ts []T, f func(*T) U) []U {
	out := make([]U, len(ts))
	for i := range ts {
		out[i] = f(&ts[i])
	}
	return out
}

// scc returns the strongly connected component of every node of the graph
// succ restricted to the nodes marked in, numbered from 0, and their
// number (Tarjan's algorithm, iterative so deep graphs cannot overflow).
func scc(succ [][]int, in []bool) (comp []int, n int) {
	const unvisited = -1
	num := len(succ)
	index := make([]int, num)
	low := make([]int, num)
	onStack := make([]bool, num)
	comp = make([]int, num)
	for i := range index {
		index[i], comp[i] = unvisited, -1
	}
	var stack []int
	next := 0
	type frame struct{ v, child int }
	for root := range num {
		if !in[root] || index[root] != unvisited {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		stack = append(stack, root)
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.child < len(succ[v]) {
				w := succ[v][f.child]
				f.child++
				if index[w] == unvisited {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{w, 0})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = n
					if w == v {
						break
					}
				}
				n++
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
		}
	}
	return comp, n
}
