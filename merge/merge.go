// Package merge adds weave profiles up into one, their calling contexts
// merged by function path.
package merge

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/weave-profiler/weave/profile"
)

// Profiles returns the sum of ps, whose files are named by sources: the
// profiles of a run's fork children, of a test suite's many runs, of many
// hosts; of one program or of several.
//
// Threads are merged by their number (each process's main thread is 0);
// in a thread, contexts with the same path of functions (name and file)
// and allocation sites are one, with their counts summed; so are the bin
// tables. The metadata lists the sources ("source" records: the file, then
// the argv) and keeps what holds for all: complete is 0 if any profile is
// incomplete; start_ns and end_ns span the runs; the time keys are kept
// when every profile measured time the same way, time_samples and
// time_overhead_ns summed. What belongs to one process alone is dropped:
// its memory snapshots and maps, heap timeline and peak, its heap
// picture and its regions' spans in time (Y, V, L, P, X, U). Marks (G, W)
// are merged when every profile set the same labels in the same order
// (the runs of one test, each with its marks): a merged mark sums the
// runs' heap states and live blocks, and its time is their mean, so
// weave report --between works on the sum; otherwise they are dropped.
func Profiles(ps []*profile.Profile, sources []string) (*profile.Profile, error) {
	if len(ps) == 0 || len(ps) != len(sources) {
		return nil, fmt.Errorf("merge: %d profiles, %d sources", len(ps), len(sources))
	}
	m := &merger{
		out:     &profile.Profile{},
		funcs:   map[funcKey]*profile.Func{},
		sites:   map[siteKey]*profile.Site{},
		threads: map[int]*profile.Thread{},
		kids:    map[childKey]*profile.Node{},
		to:      map[*profile.Node]*profile.Node{},
	}
	m.meta(ps, sources)
	for _, p := range ps {
		for _, t := range p.Threads {
			if t.Root != nil {
				m.add(t.Root, m.thread(t).Root)
			}
		}
	}
	bins := map[int]*profile.Bin{}
	for _, p := range ps {
		for _, b := range p.Bins {
			s := bins[b.Size]
			if s == nil {
				s = &profile.Bin{Size: b.Size}
				bins[b.Size] = s
			}
			s.Allocs += b.Allocs
			s.Frees += b.Frees
			s.Bytes += b.Bytes
			s.FreedBytes += b.FreedBytes
		}
	}
	for _, b := range bins {
		m.out.Bins = append(m.out.Bins, *b)
	}
	slices.SortFunc(m.out.Bins, func(a, b profile.Bin) int { return cmp.Compare(a.Size, b.Size) })
	m.marks(ps)
	return m.out, nil
}

// marks merges the profiles' marks if they all have the same labels in the
// same order (see Profiles).
func (m *merger) marks(ps []*profile.Profile) {
	first := ps[0].Marks
	for _, p := range ps[1:] {
		if !slices.EqualFunc(first, p.Marks, func(a, b *profile.Mark) bool { return a.Label == b.Label && a.Gen == b.Gen }) {
			return
		}
	}
	for i, f := range first {
		out := &profile.Mark{Gen: f.Gen, Label: f.Label, LiveKnown: true}
		type liveKey struct {
			node *profile.Node
			gen  int
		}
		live := map[liveKey]int{} // index in out.Live
		var ns uint64
		for _, p := range ps {
			pm := p.Marks[i]
			ns += pm.NS
			out.Bytes += pm.Bytes
			out.Blocks += pm.Blocks
			out.Allocs += pm.Allocs
			out.Frees += pm.Frees
			out.LiveKnown = out.LiveKnown && pm.LiveKnown
			if pm.Thread != nil && out.Thread == nil {
				out.Thread = m.thread(pm.Thread)
			}
			for _, l := range pm.Live {
				k := liveKey{m.to[l.Node], l.Gen}
				j, ok := live[k]
				if !ok {
					j = len(out.Live)
					live[k] = j
					out.Live = append(out.Live, profile.LiveGen{Node: k.node, Gen: l.Gen})
				}
				out.Live[j].Blocks += l.Blocks
				out.Live[j].Bytes += l.Bytes
			}
		}
		out.NS = ns / uint64(len(ps))
		m.out.Marks = append(m.out.Marks, out)
	}
}

type funcKey struct{ name, file string }

type siteKey struct {
	fn        *profile.Func
	file      string
	line, col int
	op, typ   string
	typeSize  uint64
	hidden    bool
	caller    bool
}

type childKey struct {
	parent *profile.Node
	kind   profile.Kind
	fn     *profile.Func
	site   *profile.Site
}

type merger struct {
	out     *profile.Profile
	funcs   map[funcKey]*profile.Func
	sites   map[siteKey]*profile.Site
	threads map[int]*profile.Thread
	kids    map[childKey]*profile.Node
	to      map[*profile.Node]*profile.Node // each source node's merged node
}

func (m *merger) fn(f *profile.Func) *profile.Func {
	if f == nil {
		return nil
	}
	k := funcKey{f.Name, f.File}
	g := m.funcs[k]
	if g == nil {
		g = &profile.Func{ID: len(m.out.Funcs), Name: f.Name, File: f.File, Line: f.Line, Frameless: f.Frameless}
		m.funcs[k] = g
		m.out.Funcs = append(m.out.Funcs, g)
	}
	// Its calls are uncounted only if no run counted them.
	g.Frameless = g.Frameless && f.Frameless
	g.CallFramed = g.CallFramed || f.CallFramed
	return g
}

func (m *merger) site(s *profile.Site) *profile.Site {
	k := siteKey{m.fn(s.Func), s.File, s.Line, s.Col, s.Op, s.Type, s.TypeSize, s.Hidden, s.Caller}
	t := m.sites[k]
	if t == nil {
		t = &profile.Site{ID: len(m.out.Sites), Func: k.fn, File: s.File, Line: s.Line, Col: s.Col,
			Op: s.Op, Type: s.Type, TypeSize: s.TypeSize, Hidden: s.Hidden, Caller: s.Caller}
		m.sites[k] = t
		m.out.Sites = append(m.out.Sites, t)
	}
	return t
}

func (m *merger) thread(t *profile.Thread) *profile.Thread {
	u := m.threads[t.ID]
	if u == nil {
		u = &profile.Thread{ID: len(m.out.Threads), TID: t.TID}
		m.threads[t.ID] = u
		m.out.Threads = append(m.out.Threads, u)
		u.Root = m.node(nil, u, profile.KindRoot, nil, nil)
	}
	return u
}

func (m *merger) node(parent *profile.Node, t *profile.Thread, kind profile.Kind, f *profile.Func, s *profile.Site) *profile.Node {
	n := &profile.Node{ID: len(m.out.Nodes), Parent: parent, Thread: t, Kind: kind, Func: f, Site: s}
	m.out.Nodes = append(m.out.Nodes, n)
	if parent != nil {
		parent.Children = append(parent.Children, n)
	}
	return n
}

// add adds the counts of the tree under from to the merged node to, which
// stands for the same path, creating the nodes it lacks; parents are
// created before children, so ids stay in the writer's order.
func (m *merger) add(from, to *profile.Node) {
	type pair struct{ from, to *profile.Node }
	todo := []pair{{from, to}}
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		m.to[p.from] = p.to
		p.to.Calls += p.from.Calls
		p.to.Time += p.from.Time
		p.to.Heap.Add(&p.from.Heap)
		next := len(todo)
		for _, c := range p.from.Children {
			k := childKey{parent: p.to, kind: c.Kind}
			switch c.Kind {
			case profile.KindFunc:
				k.fn = m.fn(c.Func)
			case profile.KindAlloc:
				k.site = m.site(c.Site)
			}
			n := m.kids[k]
			if n == nil {
				n = m.node(p.to, p.to.Thread, c.Kind, k.fn, k.site)
				m.kids[k] = n
			}
			todo = append(todo, pair{c, n})
		}
		slices.Reverse(todo[next:]) // the first child first
	}
}

// meta writes the merged profile's metadata.
func (m *merger) meta(ps []*profile.Profile, sources []string) {
	put := func(k, v string) { m.out.Meta = append(m.out.Meta, profile.Meta{Key: k, Value: v}) }
	put("merged", strconv.Itoa(len(ps)))
	complete, hidden := "1", "0"
	var start, end uint64
	same := map[string]string{}
	sameKeys := []string{"time_mode", "time_clock", "time_signal", "time_period_ns", "runtime"}
	var samples, overhead uint64
	for i, p := range ps {
		argv, _ := p.MetaValue("argv")
		put("source", sources[i]+" "+argv)
		if v, _ := p.MetaValue("complete"); v == "0" {
			complete = "0"
		}
		if v, _ := p.MetaValue("hidden"); v == "1" {
			hidden = "1"
		}
		if v, ok := p.MetaUint("start_ns"); ok && (start == 0 || v < start) {
			start = v
		}
		if v, ok := p.MetaUint("end_ns"); ok && v > end {
			end = v
		}
		for _, k := range sameKeys {
			v, ok := p.MetaValue(k)
			if !ok {
				v = "\x00" // absent: differs from any value
			}
			if prev, seen := same[k]; i > 0 && (!seen || prev != v) {
				delete(same, k)
				continue
			} else if i == 0 {
				same[k] = v
			}
		}
		s, _ := p.MetaUint("time_samples")
		o, _ := p.MetaUint("time_overhead_ns")
		samples, overhead = samples+s, overhead+o
	}
	put("complete", complete)
	put("hidden", hidden)
	if start != 0 && end >= start {
		put("start_ns", strconv.FormatUint(start, 10))
		put("end_ns", strconv.FormatUint(end, 10))
	}
	for _, k := range sameKeys {
		if v, ok := same[k]; ok && v != "\x00" {
			put(k, v)
		}
	}
	if _, ok := same["time_mode"]; ok {
		if samples > 0 {
			put("time_samples", strconv.FormatUint(samples, 10))
		}
		if overhead > 0 {
			put("time_overhead_ns", strconv.FormatUint(overhead, 10))
		}
	}
}
