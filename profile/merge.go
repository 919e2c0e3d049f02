package profile

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Merging profiles (weave merge): the profiles of a run's fork children,
// of a test suite's many runs, of many hosts; of one program or several.
//
// A Merger adds profiles one at a time, so that memory follows the merged
// result, not the sum of the inputs. Threads are merged by their number
// (each process's main thread is 0); in a thread, contexts with the same
// path of functions (FuncKey) and allocation sites are one, their calls,
// times, heap counters and leak kinds (K records) summed; so are the bins.
// A function keeps its object file (O), a hidden site the object that
// called its allocator (R, resolved through the input's maps), so that
// suppressions match the merged profile as they match its inputs.
//
// The metadata says what the sum is: merged (the number of runs: a merged
// input counts its own), run_ns (the sum of their run times, end_ns -
// start_ns each), start_ns (the earliest start), the first MergeSources
// inputs ("source" records: the file, then the argv), each run's pid and
// start ("run" records: a run in two files is refused); complete is 0 if any
// input is incomplete; leak_scan (the scans' nanoseconds summed) and
// leak_scan_runs (the runs scanned) when any run was scanned, so weave
// check reads the merged kinds; exec_runs (the runs unscanned that ended
// by exec) when any; the time keys when every input measured
// time the same way, time_samples and time_overhead_ns summed; the
// runtime's own counts (mergeCounts: unrecorded, alloc_refused, the runs
// whose leak scan failed, ...) summed, or their union or largest. What
// belongs to one process alone is dropped: its memory snapshots and maps,
// heap timeline and peak, heap picture, traced nodes and its regions'
// spans in time (Y, V, L, P, X, Q, U). Marks (G, W) are merged when every
// profile set the same labels in the same order (the runs of one test,
// each with its marks): a merged mark sums the runs' heap states and live
// blocks, and its time is their mean, so weave report --between works on
// the sum; otherwise they are dropped.
type Merger struct {
	out     *Profile
	funcs   map[FuncKey]*Func
	sites   map[siteKey]*Site
	threads map[int]*Thread
	kids    map[childKey]*Node
	bins    map[int]*Bin
	// Add's scratch, by the input's ids: its nodes', functions' and
	// sites' merged ones.
	to     []*Node
	fnOf   []*Func
	siteOf []*Site
	meta   mergeMeta
	marks  mergeMarks
}

// MergeSources is how many inputs a merged profile names (source records):
// the first ones; merged gives the count.
const MergeSources = 5

// MergeDrops are the tags of the records a merge drops (see Merger): a
// reader for merging need not decode them.
const MergeDrops = "LPXQU"

type siteKey struct {
	fn        *Func
	file      string
	line, col int
	op, typ   string
	typeSize  uint64
	hidden    bool
	caller    bool
	object    string // a hidden site's caller object
}

type childKey struct {
	parent *Node
	kind   Kind
	fn     *Func
	site   *Site
}

// NewMerger returns an empty Merger.
func NewMerger() *Merger {
	return &Merger{
		out:     &Profile{},
		funcs:   map[FuncKey]*Func{},
		sites:   map[siteKey]*Site{},
		threads: map[int]*Thread{},
		kids:    map[childKey]*Node{},
		bins:    map[int]*Bin{},
		meta:    newMergeMeta(),
	}
}

// Merge returns the sum of ps, whose files are named by sources (see
// Merger).
func Merge(ps []*Profile, sources []string) (*Profile, error) {
	if len(ps) != len(sources) {
		return nil, fmt.Errorf("merge: %d profiles, %d sources", len(ps), len(sources))
	}
	m := NewMerger()
	for i, p := range ps {
		if err := m.Add(p, sources[i]); err != nil {
			return nil, err
		}
	}
	return m.Result()
}

// Add adds p, read from the file source, to the sum. p is not kept: its
// nodes may be dropped once Add returns. A run added already from another
// file (a copy, a snapshot and its final profile, a merged profile and
// one of its runs) is an error, and p is not added.
func (m *Merger) Add(p *Profile, source string) error {
	if err := m.meta.add(p, source); err != nil {
		return err
	}
	m.to = scratch(m.to, len(p.Nodes))
	m.fnOf = scratch(m.fnOf, len(p.Funcs))
	m.siteOf = scratch(m.siteOf, len(p.Sites))
	for _, t := range p.Threads {
		if t.Root != nil {
			m.add(p, t.Root, m.thread(t).Root)
		}
	}
	for _, f := range p.Funcs {
		if f.Frameless || f.CallFramed { // kept with no node: the report counts them
			m.fn(f)
		}
	}
	for _, b := range p.Bins {
		s := m.bins[b.Size]
		if s == nil {
			s = &Bin{Size: b.Size}
			m.bins[b.Size] = s
		}
		s.Allocs += b.Allocs
		s.Frees += b.Frees
		s.Bytes += b.Bytes
		s.FreedBytes += b.FreedBytes
	}
	m.addMarks(p)
	return nil
}

// scratch returns s emptied, with room for n.
func scratch[T any](s []*T, n int) []*T {
	clear(s)
	return slices.Grow(s[:0], n)[:n]
}

// Result returns the merged profile. The Merger is not to be used after.
func (m *Merger) Result() (*Profile, error) {
	if m.meta.runs == 0 {
		return nil, errors.New("merge: no profiles")
	}
	for _, b := range m.bins {
		m.out.Bins = append(m.out.Bins, *b)
	}
	slices.SortFunc(m.out.Bins, func(a, b Bin) int { return cmp.Compare(a.Size, b.Size) })
	m.out.Meta = m.meta.records()
	_, sameTime := m.meta.same["time_mode"]
	m.out.Meta = m.meta.counts.records(m.out.Meta, sameTime, !m.marks.dropped, m.out.Funcs)
	if !m.marks.dropped {
		m.out.Marks = m.marks.result(m.meta.inputs)
	}
	return m.out, nil
}

// fn returns the merged function of the input's f.
func (m *Merger) fn(f *Func) *Func {
	if f == nil {
		return nil
	}
	if g := m.fnOf[f.ID]; g != nil {
		return g
	}
	g := m.mergedFn(f)
	m.fnOf[f.ID] = g
	return g
}

func (m *Merger) mergedFn(f *Func) *Func {
	k := f.Key()
	g := m.funcs[k]
	if g == nil {
		g = &Func{ID: len(m.out.Funcs), Name: f.Name, File: f.File, Line: f.Line, Module: f.Module, Frameless: f.Frameless}
		m.funcs[k] = g
		m.out.Funcs = append(m.out.Funcs, g)
	} else if g.Module == "" {
		g.Module = f.Module
	}
	// Its calls are uncounted only if no run counted them.
	g.Frameless = g.Frameless && f.Frameless
	g.CallFramed = g.CallFramed || f.CallFramed
	return g
}

// site returns the merged site of the input's s.
func (m *Merger) site(p *Profile, s *Site) *Site {
	if t := m.siteOf[s.ID]; t != nil {
		return t
	}
	t := m.mergedSite(p, s)
	m.siteOf[s.ID] = t
	return t
}

func (m *Merger) mergedSite(p *Profile, s *Site) *Site {
	k := siteKey{m.fn(s.Func), s.File, s.Line, s.Col, s.Op, s.Type, s.TypeSize, s.Hidden, s.Caller, ""}
	if s.Hidden {
		k.object = p.HiddenObject(s)
	}
	t := m.sites[k]
	if t == nil {
		t = &Site{ID: len(m.out.Sites), Func: k.fn, File: s.File, Line: s.Line, Col: s.Col,
			Op: s.Op, Type: s.Type, TypeSize: s.TypeSize, Hidden: s.Hidden, Caller: s.Caller, Object: k.object}
		m.sites[k] = t
		m.out.Sites = append(m.out.Sites, t)
	}
	return t
}

func (m *Merger) thread(t *Thread) *Thread {
	u := m.threads[t.ID]
	if u == nil {
		u = &Thread{ID: len(m.out.Threads), TID: t.TID}
		m.threads[t.ID] = u
		m.out.Threads = append(m.out.Threads, u)
		u.Root = m.node(nil, u, KindRoot, nil, nil)
	}
	return u
}

func (m *Merger) node(parent *Node, t *Thread, kind Kind, f *Func, s *Site) *Node {
	n := &Node{ID: len(m.out.Nodes), Parent: parent, Thread: t, Kind: kind, Func: f, Site: s}
	m.out.Nodes = append(m.out.Nodes, n)
	if parent != nil {
		parent.Children = append(parent.Children, n)
	}
	return n
}

// add adds the counts of the tree under from (a node of p) to the merged
// node to, which stands for the same path, creating the nodes it lacks;
// parents are created before children, so ids stay in the writer's order.
func (m *Merger) add(p *Profile, from, to *Node) {
	type pair struct{ from, to *Node }
	todo := []pair{{from, to}}
	for len(todo) > 0 {
		q := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		m.to[q.from.ID] = q.to
		q.to.Calls += q.from.Calls
		q.to.Time += q.from.Time
		q.to.Heap.Add(&q.from.Heap)
		if l := q.from.Leaks; l != nil {
			if q.to.Leaks == nil {
				q.to.Leaks = new(LeakKinds)
			}
			for k := range l {
				q.to.Leaks[k].Blocks += l[k].Blocks
				q.to.Leaks[k].Bytes += l[k].Bytes
			}
		}
		next := len(todo)
		for _, c := range q.from.Children {
			k := childKey{parent: q.to, kind: c.Kind}
			switch c.Kind {
			case KindFunc:
				k.fn = m.fn(c.Func)
			case KindAlloc:
				k.site = m.site(p, c.Site)
			}
			n := m.kids[k]
			if n == nil {
				n = m.node(q.to, q.to.Thread, c.Kind, k.fn, k.site)
				m.kids[k] = n
			}
			todo = append(todo, pair{c, n})
		}
		slices.Reverse(todo[next:]) // the first child first
	}
}

// mergeMarks sums the inputs' marks while they all have the same labels
// in the same order (see Merger).
type mergeMarks struct {
	marks   []*Mark
	ns      []uint64 // the marks' times, summed
	live    []map[liveKey]int
	dropped bool
}

type liveKey struct {
	node *Node
	gen  int
}

func (m *Merger) addMarks(p *Profile) {
	mm := &m.marks
	if mm.dropped {
		return
	}
	if m.meta.inputs == 1 {
		for _, f := range p.Marks {
			mm.marks = append(mm.marks, &Mark{Gen: f.Gen, Label: f.Label, LiveKnown: true})
			mm.live = append(mm.live, map[liveKey]int{})
		}
		mm.ns = make([]uint64, len(p.Marks))
	}
	if !slices.EqualFunc(mm.marks, p.Marks, func(a, b *Mark) bool { return a.Label == b.Label && a.Gen == b.Gen }) {
		*mm = mergeMarks{dropped: true}
		return
	}
	for i, pm := range p.Marks {
		out := mm.marks[i]
		mm.ns[i] += pm.NS
		out.Bytes += pm.Bytes
		out.Blocks += pm.Blocks
		out.Allocs += pm.Allocs
		out.Frees += pm.Frees
		out.LiveKnown = out.LiveKnown && pm.LiveKnown
		if pm.Thread != nil && out.Thread == nil {
			out.Thread = m.thread(pm.Thread)
		}
		for _, l := range pm.Live {
			k := liveKey{m.to[l.Node.ID], l.Gen}
			j, ok := mm.live[i][k]
			if !ok {
				j = len(out.Live)
				mm.live[i][k] = j
				out.Live = append(out.Live, LiveGen{Node: k.node, Gen: l.Gen})
			}
			out.Live[j].Blocks += l.Blocks
			out.Live[j].Bytes += l.Bytes
		}
	}
}

// result returns the merged marks of inputs profiles: times their mean.
func (mm *mergeMarks) result(inputs int) []*Mark {
	for i, out := range mm.marks {
		out.NS = mm.ns[i] / uint64(inputs)
	}
	return mm.marks
}

// mergeMeta gathers the merged profile's metadata (see Merger).
type mergeMeta struct {
	inputs, runs     int
	sources          []string
	complete, hidden bool
	freesUnseen      bool // an input's runtime did not see unwoven code's frees
	start, runNS     uint64
	same             map[string]string // the keys every input has the same value of
	samples          uint64
	overhead         uint64
	scanNS           uint64
	scanned          int // runs with a leak scan
	execd            int // runs that ended by exec (no scan: nothing to find)
	notGo            bool
	runList          []string            // each run's "PID START_NS" (run records)
	seen             map[string]string   // those runs: the file each came in
	joined           map[string][]string // distinct values of mergeJoined keys
	counts           mergeCounts
}

// mergeJoined are the Go runtime's accounts of its counts: the distinct
// ones are kept, joined.
var mergeJoined = []string{"go_counts", "go_inuse"}

// mergeSame are the metadata keys kept when every input has the same value.
var mergeSame = []string{"time_mode", "time_clock", "time_signal", "time_sampler", "time_period_ns", "runtime", "lang", "go_inuse_exact"}

func newMergeMeta() mergeMeta {
	return mergeMeta{complete: true, same: map[string]string{}, joined: map[string][]string{}, seen: map[string]string{}, counts: newMergeCounts()}
}

func (mm *mergeMeta) add(p *Profile, source string) error {
	ids := runIDs(p)
	for _, id := range ids {
		if prev, dup := mm.seen[id]; dup && prev != source { // a file named twice is summed twice, as asked
			pid, _, _ := strings.Cut(id, " ")
			return fmt.Errorf("%s and %s hold the same run (pid %s): a run is merged once", prev, source, pid)
		}
	}
	for _, id := range ids {
		mm.seen[id] = source
	}
	mm.runList = append(mm.runList, ids...)
	mm.inputs++
	runs := 1
	if n, ok := p.MetaUint("merged"); ok && n > 0 {
		runs = int(n)
	}
	mm.runs += runs
	if len(mm.sources) < MergeSources {
		if argv, ok := p.MetaValue("argv"); ok {
			source += " " + argv
		}
		mm.sources = append(mm.sources, source)
	}
	if v, _ := p.MetaValue("complete"); v == "0" {
		mm.complete = false
	}
	if v, _ := p.MetaValue("hidden"); v == "1" {
		mm.hidden = true
	}
	if !p.FreesSeen() {
		mm.freesUnseen = true
	}
	if v, _ := p.MetaValue("lang"); v != "go" {
		mm.notGo = true
	}
	for _, k := range mergeJoined {
		if v, ok := p.MetaValue(k); ok && !slices.Contains(mm.joined[k], v) {
			mm.joined[k] = append(mm.joined[k], v)
		}
	}
	start, ok1 := p.MetaUint("start_ns")
	if ok1 && (mm.start == 0 || start < mm.start) {
		mm.start = start
	}
	if ns, ok := p.MetaUint("run_ns"); ok {
		mm.runNS += ns
	} else if end, ok2 := p.MetaUint("end_ns"); ok1 && ok2 && end >= start {
		mm.runNS += end - start
	}
	if p.Scanned() {
		ns, _ := p.MetaUint("leak_scan")
		mm.scanNS += ns
		n, ok := p.MetaUint("leak_scan_runs")
		if !ok {
			n = 1
		}
		mm.scanned += int(n)
	}
	if n, ok := p.MetaUint("exec_runs"); ok {
		mm.execd += int(n)
	} else if !p.Scanned() && p.EndedByExec() {
		mm.execd++
	}
	for _, k := range mergeSame {
		v, ok := p.MetaValue(k)
		if !ok {
			v = "\x00" // absent: differs from any value
		}
		if prev, seen := mm.same[k]; mm.inputs == 1 {
			mm.same[k] = v
		} else if !seen || prev != v {
			delete(mm.same, k)
		}
	}
	mm.counts.add(p)
	s, _ := p.MetaUint("time_samples")
	o, _ := p.MetaUint("time_overhead_ns")
	mm.samples, mm.overhead = mm.samples+s, mm.overhead+o
	return nil
}

// runIDs are the runs p holds, each "PID START_NS": a merged profile's run
// records, or p's own pid and start; none where they are not recorded (a
// merge by an older weave).
func runIDs(p *Profile) []string {
	var ids []string
	if n, ok := p.MetaUint("merged"); ok && n > 0 {
		for _, m := range p.Meta {
			if m.Key == "run" {
				ids = append(ids, m.Value)
			}
		}
		return ids
	}
	pid, ok1 := p.MetaUint("pid")
	start, ok2 := p.MetaUint("start_ns")
	if !ok1 || !ok2 {
		return nil
	}
	return []string{strconv.FormatUint(pid, 10) + " " + strconv.FormatUint(start, 10)}
}

// records returns the M records.
func (mm *mergeMeta) records() []Meta {
	var out []Meta
	put := func(k, v string) { out = append(out, Meta{Key: k, Value: v}) }
	num := func(k string, v uint64) { put(k, strconv.FormatUint(v, 10)) }
	num("merged", uint64(mm.runs))
	for _, s := range mm.sources {
		put("source", s)
	}
	for _, id := range mm.runList {
		put("run", id)
	}
	put("complete", strconv.Itoa(b2i(mm.complete)))
	if mm.notGo { // Go's runtime never records what unwoven code allocates: no hidden to speak of
		put("hidden", strconv.Itoa(b2i(mm.hidden)))
	}
	if mm.freesUnseen {
		put("frees_seen", "0")
	}
	for _, k := range mergeJoined {
		if len(mm.joined[k]) > 0 {
			put(k, strings.Join(mm.joined[k], " | "))
		}
	}
	if mm.start != 0 {
		num("start_ns", mm.start)
	}
	num("run_ns", mm.runNS)
	if mm.scanned > 0 {
		num("leak_scan", mm.scanNS)
		num("leak_scan_runs", uint64(mm.scanned))
	}
	if mm.execd > 0 {
		num("exec_runs", uint64(mm.execd))
	}
	for _, k := range mergeSame {
		if v, ok := mm.same[k]; ok && v != "\x00" {
			put(k, v)
		}
	}
	if _, ok := mm.same["time_mode"]; ok {
		if mm.samples > 0 {
			num("time_samples", mm.samples)
		}
		if mm.overhead > 0 {
			num("time_overhead_ns", mm.overhead)
		}
	}
	return out
}

// MergeFiles reads the profiles in files and merges them (see Merger),
// reading up to workers files at a time (at least one) and adding them in
// order: memory is the merged result and a few inputs. The result is the
// same whatever workers is.
func MergeFiles(files []string, workers int) (*Profile, error) {
	workers = max(workers, 1)
	type read struct {
		p   *Profile
		err error
	}
	results := make([]chan read, len(files))
	for i := range results {
		results[i] = make(chan read, 1)
	}
	// window holds a slot for each file read and not yet added.
	window := make(chan struct{}, 2*workers)
	next := make(chan int)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(next)
		for i := range files {
			select {
			case window <- struct{}{}:
			case <-done:
				return
			}
			next <- i
		}
	}()
	for range workers {
		go func() {
			for i := range next {
				p, err := readMergeInput(files[i])
				results[i] <- read{p, err}
			}
		}()
	}
	m := NewMerger()
	for i := range files {
		r := <-results[i]
		if r.err != nil {
			return nil, r.err // done stops the feeder; the workers finish their files
		}
		if err := m.Add(r.p, files[i]); err != nil {
			return nil, err
		}
		<-window
	}
	return m.Result()
}

// readMergeInput reads a profile for merging: without the records a
// merge drops, nor the memory maps (Y, V) unless a hidden site needs them
// to name its caller's object (see Profile.HiddenObject): then it is read
// again with them.
func readMergeInput(path string) (*Profile, error) {
	p, err := readFile(path, MergeDrops+"YV")
	if err != nil {
		return nil, err
	}
	for _, s := range p.Sites {
		if s.Hidden && s.Object == "" && s.From != 0 {
			return readFile(path, MergeDrops)
		}
	}
	return p, nil
}
