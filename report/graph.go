package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"weave/profile"
)

// graph builds the allocation call graph.
//
// mprof and gprof see caller/callee pairs only; the calling-context tree
// keeps whole paths, so the bytes here are exact. The function graph holds
// the caller->callee arcs on paths to allocation leaves; each strongly
// connected component (a recursive function, or mutually recursive ones)
// is one entry, and on any path an entry's nodes are contiguous (a path
// leaving an entry and coming back would put the functions in between into
// it). So a node whose parent belongs to another entry starts that entry's
// run, and its subtree is what the entry allocated on behalf of the
// parent's: adding up subtrees at run starts counts every leaf once per
// entry on its path and once per arc between entries.
func (b *builder) graph(r *Report) []Entry {
	nf := len(b.funcs)
	live := func(n *profile.Node) bool { return !b.sub[n.ID].IsZero() }

	// The function graph of allocating paths.
	inGraph := make([]bool, nf)
	succ := make([][]int, nf)
	addArc := func(from, to int) {
		inGraph[to] = true
		if from >= 0 {
			inGraph[from] = true
			if !slices.Contains(succ[from], to) {
				succ[from] = append(succ[from], to)
			}
		}
	}
	parentFid := func(n *profile.Node) int {
		if n.Parent != nil && n.Parent.Kind == profile.KindFunc {
			return b.nodeFid[n.Parent.ID]
		}
		return -1
	}
	for _, n := range b.order {
		if n.Kind == profile.KindFunc && live(n) {
			addArc(parentFid(n), b.nodeFid[n.ID])
		}
	}
	for _, l := range b.leaves {
		if b.virtual[l.ID] {
			addArc(parentFid(l), b.leafFid[l.ID])
		}
	}
	comp, ncomp := scc(succ, inGraph)

	// Per entry (component): bytes, calls, arcs.
	type arcKey struct{ from, to int }
	type acc struct {
		selfDesc, self profile.Heap
		calls, rec     uint64
	}
	ents := make([]acc, ncomp)
	arcs := map[arcKey]*Arc{}
	var arcKeys []arcKey
	credit := func(pc, c int, h *profile.Heap) {
		if pc == c {
			return
		}
		ents[c].selfDesc.Add(h)
		if pc >= 0 {
			k := arcKey{pc, c}
			a := arcs[k]
			if a == nil {
				a = &Arc{}
				arcs[k] = a
				arcKeys = append(arcKeys, k)
			}
			for i := range profile.NumClasses {
				a.BySize[i] += h.Bytes[i]
			}
		}
	}
	compOf := func(fid int) int {
		if fid < 0 || !inGraph[fid] {
			return -1
		}
		return comp[fid]
	}
	for _, n := range b.order {
		if n.Kind == profile.KindFunc && live(n) {
			credit(compOf(parentFid(n)), compOf(b.nodeFid[n.ID]), &b.sub[n.ID])
		}
	}
	fidSelf := make([]profile.Heap, nf)
	for _, l := range b.leaves {
		fidSelf[b.leafFid[l.ID]].Add(&l.Heap)
		c := compOf(b.leafFid[l.ID])
		ents[c].self.Add(&l.Heap)
		if b.virtual[l.ID] {
			credit(compOf(parentFid(l)), c, &l.Heap)
		}
	}
	memberCalls := make([]uint64, nf)
	for _, n := range b.order {
		if n.Kind != profile.KindFunc {
			continue
		}
		c := compOf(b.nodeFid[n.ID])
		if c < 0 {
			continue
		}
		memberCalls[b.nodeFid[n.ID]] += n.Calls
		pc := compOf(parentFid(n))
		if pc == c {
			ents[c].rec += n.Calls
			continue
		}
		ents[c].calls += n.Calls
		if a := arcs[arcKey{pc, c}]; a != nil {
			a.Calls += n.Calls
		}
	}

	// Entries, sorted by self+desc bytes; on ties, callers first (the entry
	// nearest a root), as gprof's call graph reads top-down.
	depth := make([]int, len(b.p.Nodes))
	minDepth := make([]int, ncomp)
	for i := range minDepth {
		minDepth[i] = math.MaxInt
	}
	for _, n := range b.order {
		if n.Parent != nil {
			depth[n.ID] = depth[n.Parent.ID] + 1
		}
		c := -1
		switch {
		case n.Kind == profile.KindFunc:
			c = compOf(b.nodeFid[n.ID])
		case n.Kind == profile.KindAlloc && b.virtual[n.ID]:
			c = compOf(b.leafFid[n.ID])
		}
		if c >= 0 {
			minDepth[c] = min(minDepth[c], depth[n.ID])
		}
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
		return "<cycle>" // before names of letters; ties between cycles keep component order
	}
	order := make([]int, ncomp)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(x, y int) int {
		return cmp.Or(
			cmp.Compare(ents[y].selfDesc.TotalBytes(), ents[x].selfDesc.TotalBytes()),
			cmp.Compare(ents[y].selfDesc.TotalAllocs(), ents[x].selfDesc.TotalAllocs()),
			cmp.Compare(minDepth[x], minDepth[y]),
			cmp.Compare(sortName(x), sortName(y)))
	})
	index := make([]int, ncomp) // component -> entry index, from 1 as in gprof
	for i, c := range order {
		index[c] = i + 1
	}
	totalBytes := r.Totals.BytesAllocated
	out := make([]Entry, ncomp)
	cycles := 0
	for i, c := range order {
		a := &ents[c]
		e := Entry{
			Index:       i + 1,
			SelfDesc:    a.selfDesc.TotalBytes(),
			PctSelfDesc: pct(a.selfDesc.TotalBytes(), totalBytes),
			Self:        a.self.TotalBytes(),
			SelfBySize:  a.self.Bytes,
			Calls:       a.calls,
			Recursive:   a.rec,
			Callers:     []Arc{},
			Callees:     []Arc{},
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
				h := &fidSelf[f]
				e.Members = append(e.Members, Member{
					Func:       b.funcs[f],
					Label:      r.Label(b.funcs[f]),
					Self:       h.TotalBytes(),
					SelfBySize: h.Bytes,
					Calls:      memberCalls[f],
				})
			}
			slices.SortStableFunc(e.Members, func(x, y Member) int {
				return cmp.Or(cmp.Compare(y.Self, x.Self), cmp.Compare(x.Label, y.Label))
			})
		}
		out[i] = e
	}
	for _, k := range arcKeys {
		a := *arcs[k]
		a.Bytes = total(a.BySize)
		caller, callee := &out[index[k.from]-1], &out[index[k.to]-1]
		in := a
		in.Index, in.Name = caller.Index, caller.Name
		in.Frac = frac(a.Bytes, callee.SelfDesc)
		in.TotalCalls = callee.Calls
		callee.Callers = append(callee.Callers, in)
		outArc := a
		outArc.Index, outArc.Name = callee.Index, callee.Name
		outArc.Frac = frac(a.Bytes, caller.SelfDesc)
		outArc.TotalCalls = callee.Calls
		caller.Callees = append(caller.Callees, outArc)
	}
	byBytes := func(x, y Arc) int {
		return cmp.Or(cmp.Compare(y.Bytes, x.Bytes), cmp.Compare(x.Index, y.Index))
	}
	for i := range out {
		slices.SortFunc(out[i].Callers, byBytes)
		slices.SortFunc(out[i].Callees, byBytes)
	}
	return out
}

// frac returns a/b, or 0 when b is 0.
func frac(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
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
