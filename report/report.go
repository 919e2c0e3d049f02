// Package report builds mprof's four tables from a weave profile and renders them.
package report

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// DefaultDepth is mprof's number of functions in a leak table chain.
const DefaultDepth = 5

// Table names, for Options.Tables and the --tables flag.
const (
	TableLeaks  = "leaks"
	TableBins   = "bins"
	TableDirect = "direct"
	TableGraph  = "graph"
)

// AllTables lists the tables in the order they are rendered: mprof's
// memory tables, the memory map and heap timeline tables (memory.go), then
// the time tables (time.go).
var AllTables = []string{TableLeaks, TableBins, TableDirect, TableGraph, TableSegments, TableTimeline, TablePeak,
	TableFlat, TableTimeGraph, TableTree}

// Options select what New builds.
type Options struct {
	// Depth is the number of functions in a leak table chain, innermost
	// first; 0 or less keeps whole chains. The command line's default is
	// DefaultDepth, as in mprof.
	Depth int
	// Sites distinguishes allocation call sites within a function in the
	// leak table: the innermost entry of a chain names the file:line of
	// the allocation call.
	Sites bool
	// Tables are the tables to build, of AllTables; nil builds the memory
	// tables, and the time tables when the profile has times.
	Tables []string
	// Threshold hides time graph and tree entries (and text flat profile
	// lines) below this percentage of all time; 0 shows all.
	Threshold float64
	// LeakKinds selects the leak table's rows by kind when the profile
	// has a leak scan (valgrind's --show-leak-kinds); nil: all kinds.
	LeakKinds []profile.LeakKind
	// Quantity is the quantity of the stack exports (folded, the HTML
	// flame graph's first view), one of Quantities; "" is bytes_allocated.
	Quantity string
	// Trace is the profile's trace file (tracepoints), for the perfetto
	// export; "" when there is none.
	Trace string
	// Between, when set, says the profile holds the view of ApplyBetween
	// (weave report --between): the leak table lists those blocks.
	Between *Between
}

// ParseTables parses a comma-separated list of table names ("leaks,graph");
// "" and "all" select every table, "memory" and "time" the tables of
// MemoryTables and TimeTables.
func ParseTables(s string) ([]string, error) {
	if s == "" || s == "all" {
		return slices.Clone(AllTables), nil
	}
	var out []string
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		group := []string{name}
		switch name {
		case "memory":
			group = append(slices.Clone(MemoryTables), VMTables...)
		case "time":
			group = TimeTables
		default:
			if !slices.Contains(AllTables, name) {
				return nil, fmt.Errorf("unknown table %q (want %s, memory, time or all)", name, strings.Join(AllTables, ", "))
			}
		}
		for _, name := range group {
			if !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out, nil
}

// Report is the model the renderers lay out: totals and mprof's tables.
// A table not selected by Options.Tables is nil; a selected one is non-nil,
// even when empty. The JSON renderer names the fields (json.go); the types
// below carry their own JSON names.
type Report struct {
	Program string // the command line (metadata argv)
	// Sources are the first profiles a merged profile sums (weave merge):
	// their files and command lines (metadata source); Runs is how many
	// runs it sums (metadata merged), RunNS the sum of their run times
	// (metadata run_ns). 0 for a profile of one run.
	Sources  []string
	Runs     int
	RunNS    uint64
	Complete bool // false when the profile was written from a crash or abort
	// Frameless is the number of woven functions without a frame (weave
	// --frames auto, metadata frameless): their time is their callers',
	// their calls are not counted.
	Frameless int
	// CallFramed is the number of woven functions framed only around
	// their calls that may allocate (metadata call_framed): their calls
	// counted are those calls.
	CallFramed int
	// MainUnframed: main is woven without a frame at its entry (frameless
	// or framed at its calls): its time, and that of the frameless
	// functions it calls, is outside woven functions.
	MainUnframed bool
	Metadata     map[string]string
	Totals       Totals
	Depth        int      // Options.Depth; 0: whole chains
	Sites        bool     // Options.Sites
	Tables       []string // the tables built, in AllTables order

	Leaks []Leak
	Bins  []Bin
	// RunTimeTypes are the types of the sites of a run-time count, which
	// the bins cannot place (bins).
	RunTimeTypes []RunTimeType
	Direct       *Direct
	Graph        []Entry
	Time         *Time // the time tables' model (time.go); nil when none is built

	Segments *Segments // memory.go
	Timeline *Timeline
	Peak     *Peak

	Quantity string   // Options.Quantity, checked
	Between  *Between // Options.Between

	labels map[Func]string
	prof   *profile.Profile // for the stack exports (WalkStacks)
	folded *profile.Folded  // the heap picture's chains
	trace  string           // Options.Trace
}

// Has reports whether the report holds the named table.
func (r *Report) Has(table string) bool { return slices.Contains(r.Tables, table) }

// Label returns how renderers name f: its name, followed by its file when
// another function of the same name exists (two static functions).
func (r *Report) Label(f Func) string {
	if l, ok := r.labels[f]; ok {
		return l
	}
	return f.Name
}

// Totals sums the heap counters of the whole profile.
type Totals struct {
	Allocs         uint64 `json:"allocs"`
	Frees          uint64 `json:"frees"`
	BytesAllocated uint64 `json:"bytes_allocated"`
	BytesFreed     uint64 `json:"bytes_freed"`
	BytesInUse     uint64 `json:"bytes_in_use"`
	BlocksInUse    uint64 `json:"blocks_in_use"`
	Threads        int    `json:"threads"`
	// Hidden allocations (made by code that was not woven: the C library,
	// other libraries), included in the counts above.
	HiddenAllocs uint64 `json:"hidden_allocs,omitempty"`
	HiddenBytes  uint64 `json:"hidden_bytes,omitempty"`
	// LeakKinds: the blocks in use at exit by leak kind (definite,
	// indirect, possible, reachable), when the runtime scanned them.
	LeakKinds *LeakTotals `json:"leak_kinds,omitempty"`
}

// Func identifies a function: the F records of one name and file (a static
// inline function woven into several translation units) are one Func.
type Func struct {
	Name string `json:"name"`
	File string `json:"file"`
}

// BySize holds a quantity by mprof's size class: s (0-32 bytes), m
// (33-256), l (257-2048), x (more than 2048).
type BySize [profile.NumClasses]uint64

// Pct returns each class's share of the total, in percent.
func (b BySize) Pct() PctBySize {
	var p PctBySize
	t := total(b)
	for c, v := range b {
		p[c] = pct(v, t)
	}
	return p
}

// PctBySize holds percentages by size class.
type PctBySize [profile.NumClasses]float64

// MarshalJSON writes {"s":..,"m":..,"l":..,"x":..}.
func (b BySize) MarshalJSON() ([]byte, error) { return classJSON(b[:]) }

// MarshalJSON writes {"s":..,"m":..,"l":..,"x":..}.
func (p PctBySize) MarshalJSON() ([]byte, error) { return classJSON(p[:]) }

func classJSON[T any](v []T) ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, x := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		num, err := json.Marshal(x)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%q:%s", profile.ClassNames[i], num)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// Leak is a row of the memory leak table: the blocks not freed that were
// allocated under one partial call chain.
type Leak struct {
	Chain      []Frame `json:"chain"` // innermost function first
	BytesKept  uint64  `json:"bytes_kept"`
	PctKept    float64 `json:"pct_kept"` // of all bytes kept
	BlocksKept uint64  `json:"blocks_kept"`
	// Allocs and Frees are the allocations under the chain and their
	// frees, of every kind: a chain's rows of different kinds repeat them.
	Allocs uint64 `json:"allocs"`
	Frees  uint64 `json:"frees"`
	// Hidden: the blocks were allocated by code that was not woven (a
	// library), called from the chain's innermost function.
	Hidden bool `json:"hidden,omitempty"`
	// Kind: the leak kind of the row's blocks (profile.LeakKindNames),
	// when the profile has a leak scan; the row then counts only them.
	Kind string `json:"kind,omitempty"`
}

// Frame is a function in a leak chain.
type Frame struct {
	Func
	// Site is the file:line of the allocation call, on the innermost
	// frame when Options.Sites is set.
	Site string `json:"site,omitempty"`
}

// Bin is a row of the allocation bin table: the requests of one size.
type Bin struct {
	Size      int     `json:"size"` // 0..1024, or profile.LargeBin for every larger size
	Allocs    uint64  `json:"allocs"`
	PctAllocs float64 `json:"pct_allocs"`
	Bytes     uint64  `json:"bytes"`
	PctBytes  float64 `json:"pct_bytes"`
	Frees     uint64  `json:"frees"`
	BytesKept uint64  `json:"bytes_kept"`
	PctKept   float64 `json:"pct_kept"` // of all bytes kept
	// Types are the types of the sites whose own size expression names a
	// type of this size ("struct entry", "char *[4]"), in C.
	Types []string `json:"types"`
	// Untyped is how many of the allocations came from no such site: a
	// size without sizeof, or a count known only at run time.
	Untyped uint64 `json:"untyped"`
}

// RunTimeType is the type of sites whose size has a run-time count
// ("unsigned char[n]", "struct hdr + n"): in no bin, as their sizes are
// not recorded per site.
type RunTimeType struct {
	Type   string `json:"type"`
	Allocs uint64 `json:"allocs"`
}

// Direct is the direct allocation table.
type Direct struct {
	Total     DirectRow   `json:"total"`     // all functions
	Functions []DirectRow `json:"functions"` // by bytes, decreasing
}

// DirectRow is a row of the direct allocation table: what one function
// allocated itself, by calling the allocator.
type DirectRow struct {
	Func *Func `json:"func,omitempty"` // nil in the total row
	// Hidden: the allocations that code that was not woven (a library)
	// made when called from Func; a function has a row for its own
	// allocation calls and one for its hidden allocations.
	Hidden      bool      `json:"hidden,omitempty"`
	PctMem      float64   `json:"pct_mem"` // of all bytes allocated
	Bytes       uint64    `json:"bytes"`
	BytesKept   uint64    `json:"bytes_kept"`
	Calls       uint64    `json:"calls"` // allocation calls made by the function
	BytesBySize BySize    `json:"bytes_by_size"`
	KeptBySize  BySize    `json:"kept_by_size"`
	PctMemSize  PctBySize `json:"pct_mem_by_size"`  // of all bytes allocated
	PctKeptSize PctBySize `json:"pct_kept_by_size"` // of all bytes kept
}

// Entry is an entry of the allocation call graph: a function, or a cycle of
// mutually recursive functions merged as gprof does.
type Entry struct {
	Index       int      `json:"index"`
	Name        string   `json:"name"`            // the function's label, or "<cycle N>"
	Func        *Func    `json:"func,omitempty"`  // nil for a cycle
	Cycle       int      `json:"cycle,omitempty"` // N of a cycle
	Members     []Member `json:"members,omitempty"`
	SelfDesc    uint64   `json:"self_desc"` // bytes allocated by the entry and its callees
	PctSelfDesc float64  `json:"pct_self_desc"`
	Self        uint64   `json:"self"` // bytes allocated by the entry itself
	SelfBySize  BySize   `json:"self_by_size"`
	Calls       uint64   `json:"calls"`           // calls from outside the entry
	Recursive   uint64   `json:"recursive_calls"` // calls from within
	// NotCounted: a frameless function (--frames auto), whose calls were
	// not counted: Calls is 0, not its number of calls.
	NotCounted bool `json:"calls_not_counted,omitempty"`
	// AtCalls: a function framed at its calls (--frames auto): Calls
	// counts those calls that may allocate (or its runs that made one),
	// not all its calls.
	AtCalls bool  `json:"calls_at_calls,omitempty"`
	Callers []Arc `json:"callers"`
	Callees []Arc `json:"callees"`
}

// Member is a function of a cycle.
type Member struct {
	Func
	Label      string `json:"label"`
	Self       uint64 `json:"self"`
	SelfBySize BySize `json:"self_by_size"`
	Calls      uint64 `json:"calls"`
}

// Arc is a caller or callee line of a graph entry.
type Arc struct {
	Index  int     `json:"index"` // of the entry at the other end
	Name   string  `json:"name"`
	Bytes  uint64  `json:"bytes"` // allocated under this arc
	BySize BySize  `json:"by_size"`
	Frac   float64 `json:"frac"` // Bytes / the entry's SelfDesc
	// Calls made over the arc, out of TotalCalls: on a caller line, all
	// calls of the entry from outside it; on a callee line, the callee's.
	Calls      uint64 `json:"calls"`
	TotalCalls uint64 `json:"total_calls"`
	NotCounted bool   `json:"calls_not_counted,omitempty"` // the callee's calls were not counted
	AtCalls    bool   `json:"calls_at_calls,omitempty"`    // the callee is framed at its calls
}

// New builds the report of p.
func New(p *profile.Profile, opt Options) (*Report, error) {
	tables := opt.Tables
	if tables == nil {
		tables = slices.Clone(MemoryTables)
		if HasVM(p) {
			tables = append(tables, VMTables...)
		}
		if HasTime(p) {
			tables = append(tables, TimeTables...)
		}
	}
	for _, t := range tables {
		if !slices.Contains(AllTables, t) {
			return nil, fmt.Errorf("unknown table %q", t)
		}
	}
	depth := max(opt.Depth, 0)
	r := &Report{Complete: true, Depth: depth, Sites: opt.Sites, Quantity: profile.QuantityBytes, labels: map[Func]string{}, prof: p, trace: opt.Trace, Between: opt.Between}
	if opt.Quantity != "" {
		q, err := profile.ParseQuantity(opt.Quantity)
		if err != nil {
			return nil, err
		}
		r.Quantity = q
	}
	for _, t := range AllTables {
		if slices.Contains(tables, t) {
			r.Tables = append(r.Tables, t)
		}
	}
	if len(p.Meta) > 0 {
		r.Metadata = map[string]string{}
		for _, m := range p.Meta {
			if _, dup := r.Metadata[m.Key]; !dup {
				r.Metadata[m.Key] = m.Value
			}
		}
	}
	r.Program = r.Metadata["argv"]
	for _, m := range p.Meta {
		if m.Key == "source" {
			r.Sources = append(r.Sources, m.Value)
		}
	}
	if n, ok := p.MetaUint("merged"); ok {
		r.Runs = int(n)
		r.RunNS, _ = p.MetaUint("run_ns")
	}
	r.Complete = r.Metadata["complete"] != "0"
	r.Frameless, _ = strconv.Atoi(r.Metadata["frameless"])
	r.CallFramed, _ = strconv.Atoi(r.Metadata["call_framed"])
	r.MainUnframed = slices.ContainsFunc(p.Funcs, func(f *profile.Func) bool { return f.Name == "main" && (f.Frameless || f.CallFramed) })

	b := newBuilder(p)
	r.folded = b.folded
	for name, fs := range b.byName {
		if len(fs) > 1 {
			for _, f := range fs {
				r.labels[f] = fmt.Sprintf("%s (%s)", name, f.File)
			}
		}
	}
	r.Totals = b.totals()
	r.Totals.Threads = len(p.Threads)
	if r.Totals.LeakKinds = b.leakKinds(p); r.Totals.LeakKinds != nil {
		r.Totals.LeakKinds.classify(r.Totals.BlocksInUse, r.Totals.BytesInUse)
	}
	kinds, err := checkLeakKinds(p, opt.LeakKinds)
	if err != nil {
		return nil, err
	}
	if r.Has(TableLeaks) {
		r.Leaks = b.leaks(depth, opt.Sites, r.Totals.BytesInUse, kinds, p.Scanned())
	}
	if r.Has(TableBins) {
		r.Bins, r.RunTimeTypes = b.bins(p.Bins)
	}
	if r.Has(TableDirect) {
		r.Direct = b.direct()
	}
	if r.Has(TableGraph) {
		r.Graph = b.graph(r)
	}
	if r.Has(TableSegments) {
		r.Segments = b.segments()
	}
	if r.Has(TableTimeline) {
		r.Timeline = b.timeline()
	}
	if r.Has(TablePeak) {
		r.Peak = b.peak(depth, opt.Sites)
	}
	for _, t := range TimeTables {
		if r.Has(t) {
			r.Time = buildTime(b, r, opt.Threshold)
			break
		}
	}
	return r, nil
}

// builder holds the profile indexed for building tables: functions merged
// by (name, file), and every thread's tree flattened.
type builder struct {
	p      *profile.Profile
	funcs  []Func       // by function index (fid)
	fidOf  map[Func]int //
	byName map[string][]Func

	nodeFid []int           // node id -> fid of a KindFunc node, else -1
	order   []*profile.Node // all nodes, parents before children
	sub     []profile.Heap  // node id -> heap counters of its subtree
	leaves  []*profile.Node // allocation leaves with counters
	// leafFid is the function that made a leaf's allocation: its site's.
	// virtual marks leaves whose parent is not a node of that function (the
	// runtime's depth cap dropped its node); the function is then taken to
	// sit between the parent and the leaf. A hidden leaf's function is its
	// parent's, or unwovenFunc below a root.
	leafFid []int
	virtual []bool
	// uncounted marks the functions whose calls were not counted: frameless
	// (--frames auto) in every profile that has them.
	uncounted []bool
	// atCalls marks the functions framed at their calls (--frames auto):
	// their calls counted are those calls.
	atCalls []bool
	funcFid []int           // F record id -> fid
	folded  *profile.Folded // the chains with deep recursion folded
}

// notCounted reports whether function fid's calls were not counted.
func (b *builder) notCounted(fid int) bool { return fid < len(b.uncounted) && b.uncounted[fid] }

// framedAtCalls reports whether function fid's calls counted are only its
// calls that may allocate.
func (b *builder) framedAtCalls(fid int) bool { return fid < len(b.atCalls) && b.atCalls[fid] }

// unwovenFunc stands for the caller of hidden allocations made outside any
// woven function (before main, in a thread running no woven code).
var unwovenFunc = profile.Func{Name: "(unwoven)", File: ""}

func newBuilder(p *profile.Profile) *builder {
	b := &builder{p: p, fidOf: map[Func]int{}, byName: map[string][]Func{}}
	fid := func(f *profile.Func) int {
		k := Func{f.Name, f.File}
		id, ok := b.fidOf[k]
		if !ok {
			id = len(b.funcs)
			b.fidOf[k] = id
			b.funcs = append(b.funcs, k)
			b.byName[k.Name] = append(b.byName[k.Name], k)
		}
		return id
	}
	funcFid := make([]int, len(p.Funcs))
	for i, f := range p.Funcs {
		funcFid[i] = fid(f)
	}
	b.uncounted = make([]bool, len(b.funcs))
	b.atCalls = make([]bool, len(b.funcs))
	counted := make([]bool, len(b.funcs))
	for i, f := range p.Funcs {
		b.uncounted[funcFid[i]] = f.Frameless
		b.atCalls[funcFid[i]] = b.atCalls[funcFid[i]] || f.CallFramed
		counted[funcFid[i]] = counted[funcFid[i]] || !f.Frameless
	}
	for i, c := range counted {
		b.uncounted[i] = b.uncounted[i] && !c
	}
	b.funcFid, b.folded = funcFid, p.Fold()
	n := len(p.Nodes)
	b.nodeFid = make([]int, n)
	b.leafFid = make([]int, n)
	b.virtual = make([]bool, n)
	b.sub = make([]profile.Heap, n)
	for _, t := range p.Threads {
		if t.Root == nil {
			continue
		}
		stack := []*profile.Node{t.Root}
		for len(stack) > 0 {
			nd := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			b.order = append(b.order, nd)
			for i := len(nd.Children) - 1; i >= 0; i-- {
				stack = append(stack, nd.Children[i])
			}
		}
	}
	for _, nd := range b.order {
		b.nodeFid[nd.ID], b.leafFid[nd.ID] = -1, -1
		switch nd.Kind {
		case profile.KindFunc:
			b.nodeFid[nd.ID] = funcFid[nd.Func.ID]
		case profile.KindAlloc:
			var f int
			switch {
			case nd.Site.Func != nil:
				f = funcFid[nd.Site.Func.ID]
			case nd.Parent != nil && nd.Parent.Kind == profile.KindFunc:
				f = b.nodeFid[nd.Parent.ID]
			default:
				f = fid(&unwovenFunc)
			}
			b.leafFid[nd.ID] = f
			b.virtual[nd.ID] = nd.Parent == nil || nd.Parent.Kind != profile.KindFunc || b.nodeFid[nd.Parent.ID] != f
			if !nd.Heap.IsZero() {
				b.leaves = append(b.leaves, nd)
			}
		}
	}
	for i := len(b.order) - 1; i >= 0; i-- {
		nd := b.order[i]
		b.sub[nd.ID].Add(&nd.Heap)
		if nd.Parent != nil {
			b.sub[nd.Parent.ID].Add(&b.sub[nd.ID])
		}
	}
	return b
}

func (b *builder) totals() Totals {
	var h, hidden profile.Heap
	for _, l := range b.leaves {
		h.Add(&l.Heap)
		if l.Site.Hidden {
			hidden.Add(&l.Heap)
		}
	}
	t := Totals{
		Allocs:         h.TotalAllocs(),
		Frees:          h.TotalFrees(),
		BytesAllocated: h.TotalBytes(),
		BytesFreed:     h.TotalFreedBytes(),
	}
	t.BytesInUse = profile.Remaining(t.BytesAllocated, t.BytesFreed)
	t.BlocksInUse = profile.Remaining(t.Allocs, t.Frees)
	t.HiddenAllocs, t.HiddenBytes = hidden.TotalAllocs(), hidden.TotalBytes()
	return t
}

// pct returns 100*a/b, or 0 when b is 0.
func pct(a, b uint64) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// kept returns the bytes by size class allocated and not freed.
func kept(h *profile.Heap) BySize {
	var k BySize
	for c := range profile.NumClasses {
		k[c] = profile.Remaining(h.Bytes[c], h.FreedBytes[c])
	}
	return k
}

func total(b BySize) uint64 {
	var s uint64
	for _, v := range b {
		s += v
	}
	return s
}

// leaks builds the memory leak table: leaves grouped by the innermost depth
// functions of their chains (and by call site if sites), keeping the groups
// with blocks not freed.
func (b *builder) leaks(depth int, sites bool, totalKept uint64, want []profile.LeakKind, scanned bool) []Leak {
	type group struct {
		chain  []int
		site   string
		hidden bool
		heap   profile.Heap
		kinds  *profile.LeakKinds
	}
	groups := map[string]*group{}
	var keys []string
	for _, l := range b.leaves {
		chain, site, key := b.leafChain(l, depth, sites)
		hidden := l.Site.Hidden
		g := groups[key]
		if g == nil {
			g = &group{chain: chain, site: site, hidden: hidden}
			groups[key] = g
			keys = append(keys, key)
		}
		g.heap.Add(&l.Heap)
		if l.Leaks != nil {
			if g.kinds == nil {
				g.kinds = new(profile.LeakKinds)
			}
			for k, c := range l.Leaks {
				g.kinds[k].Blocks += c.Blocks
				g.kinds[k].Bytes += c.Bytes
			}
		}
	}
	rows := []Leak{}
	for _, k := range keys {
		g := groups[k]
		h := &g.heap
		row := Leak{
			BytesKept:  profile.Remaining(h.TotalBytes(), h.TotalFreedBytes()),
			BlocksKept: profile.Remaining(h.TotalAllocs(), h.TotalFrees()),
			Allocs:     h.TotalAllocs(),
			Frees:      h.TotalFrees(),
			Hidden:     g.hidden,
		}
		if row.BytesKept == 0 && row.BlocksKept == 0 {
			continue
		}
		row.Chain = b.frames(g.chain, g.site)
		for _, r := range kindRows(row, g.kinds, want, scanned) {
			r.PctKept = pct(r.BytesKept, totalKept)
			rows = append(rows, r)
		}
	}
	// The chains' sort keys are made once: a profile of 100,000 leak
	// chains of equal size compares them millions of times.
	type keyed struct {
		row   Leak
		chain string
	}
	ks := make([]keyed, len(rows))
	for i, r := range rows {
		ks[i] = keyed{r, chainString(r.Chain)}
	}
	slices.SortStableFunc(ks, func(a, c keyed) int {
		return cmp.Or(
			cmp.Compare(kindOrder(a.row.Kind), kindOrder(c.row.Kind)),
			cmp.Compare(c.row.BytesKept, a.row.BytesKept),
			cmp.Compare(c.row.BlocksKept, a.row.BlocksKept),
			cmp.Compare(a.chain, c.chain),
			compareBool(a.row.Hidden, c.row.Hidden))
	})
	for i := range ks {
		rows[i] = ks[i].row
	}
	return rows
}

// leafChain returns the partial call chain of leaf l (function indices,
// innermost first, at most depth of them unless depth <= 0), the site that
// names its innermost frame when sites is set, and a key that is the same
// for leaves of the same chain, site and hiddenness.
func (b *builder) leafChain(l *profile.Node, depth int, sites bool) (chain []int, site, key string) {
	chain = []int{b.leafFid[l.ID]}
	skip := !b.virtual[l.ID] // the parent is the allocating function itself
	b.folded.Path(l, func(f *profile.Func) bool {
		switch {
		case skip:
			skip = false
		case depth > 0 && len(chain) >= depth:
			return false
		default:
			chain = append(chain, b.funcFid[f.ID])
		}
		return true
	})
	var k strings.Builder
	for _, f := range chain {
		fmt.Fprintf(&k, "%d,", f)
	}
	hidden := l.Site.Hidden
	switch {
	case sites && hidden:
		site = "hidden " + l.Site.Op
	case sites:
		site = fmt.Sprintf("%s:%d", l.Site.File, l.Site.Line)
	}
	k.WriteString(site)
	if hidden {
		k.WriteString("\x00hidden")
	}
	return chain, site, k.String()
}

// frames returns the frames of a chain of function indices; site names
// the innermost.
func (b *builder) frames(chain []int, site string) []Frame {
	var out []Frame
	for i, f := range chain {
		fr := Frame{Func: b.funcs[f]}
		if i == 0 {
			fr.Site = site
		}
		out = append(out, fr)
	}
	return out
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func chainString(chain []Frame) string {
	var s []string
	for _, f := range chain {
		s = append(s, f.Name+"\x00"+f.File+"\x00"+f.Site)
	}
	return strings.Join(s, "\x01")
}

// bins builds the allocation bin table from the profile's B records,
// and the types of run-time size.
//
// A bin lists the types that name its whole size: those of the sites
// whose own size expression is a constant naming a type (sizeof(T),
// k * sizeof(T)) of the bin's size (for the bin over 1024 bytes, of more
// than 1024), and that allocated. Its other allocations are untyped (a
// site without sizeof, or with a count known only at run time): nothing
// is guessed from another site's type. The sites of a run-time count
// (T[n], T + n) cannot be placed in a bin: they are listed apart.
func (b *builder) bins(in []profile.Bin) ([]Bin, []RunTimeType) {
	type typ struct {
		name string
		size uint64
	}
	fixed := map[typ]uint64{}      // allocations by type of a constant size
	runTime := map[string]uint64{} // and of a run-time count
	for _, l := range b.leaves {
		s, n := l.Site, l.Heap.TotalAllocs()
		switch {
		case s.Type == "" || n == 0:
		case s.TypeSize == 0:
			runTime[s.Type] += n
		default:
			fixed[typ{s.Type, s.TypeSize}] += n
		}
	}
	types := slices.SortedFunc(maps.Keys(fixed), func(a, c typ) int { return cmp.Or(cmp.Compare(a.name, c.name), cmp.Compare(a.size, c.size)) })

	var sum profile.Bin
	for _, bin := range in {
		sum.Allocs += bin.Allocs
		sum.Bytes += bin.Bytes
		sum.Frees += bin.Frees
		sum.FreedBytes += bin.FreedBytes
	}
	totalKept := profile.Remaining(sum.Bytes, sum.FreedBytes)
	rows := []Bin{}
	for _, bin := range in {
		if bin.Allocs == 0 && bin.Bytes == 0 && bin.Frees == 0 {
			continue
		}
		row := Bin{
			Size:      bin.Size,
			Allocs:    bin.Allocs,
			PctAllocs: pct(bin.Allocs, sum.Allocs),
			Bytes:     bin.Bytes,
			PctBytes:  pct(bin.Bytes, sum.Bytes),
			Frees:     bin.Frees,
			BytesKept: profile.Remaining(bin.Bytes, bin.FreedBytes),
			Types:     []string{},
		}
		row.PctKept = pct(row.BytesKept, totalKept)
		var typed uint64
		for _, t := range types {
			if t.size == uint64(bin.Size) || bin.Size == profile.LargeBin && t.size > 1024 {
				typed += fixed[t]
				if !slices.Contains(row.Types, t.name) {
					row.Types = append(row.Types, t.name)
				}
			}
		}
		row.Untyped = profile.Remaining(bin.Allocs, typed)
		rows = append(rows, row)
	}
	var rt []RunTimeType
	for name, n := range runTime {
		rt = append(rt, RunTimeType{Type: name, Allocs: n})
	}
	slices.SortFunc(rt, func(a, c RunTimeType) int {
		return cmp.Or(cmp.Compare(c.Allocs, a.Allocs), cmp.Compare(a.Type, c.Type))
	})
	return rows, rt
}

// direct builds the direct allocation table: the leaves merged per
// allocating function.
func (b *builder) direct() *Direct {
	heaps := make([]profile.Heap, len(b.funcs))
	hidden := make([]profile.Heap, len(b.funcs))
	var all profile.Heap
	for _, l := range b.leaves {
		if l.Site.Hidden {
			hidden[b.leafFid[l.ID]].Add(&l.Heap)
		} else {
			heaps[b.leafFid[l.ID]].Add(&l.Heap)
		}
		all.Add(&l.Heap)
	}
	allBytes, allKept := all.TotalBytes(), total(kept(&all))
	row := func(h *profile.Heap) DirectRow {
		r := DirectRow{
			Bytes:       h.TotalBytes(),
			Calls:       h.TotalAllocs(),
			BytesBySize: h.Bytes,
			KeptBySize:  kept(h),
		}
		r.BytesKept = total(r.KeptBySize)
		r.PctMem = pct(r.Bytes, allBytes)
		for c := range profile.NumClasses {
			r.PctMemSize[c] = pct(r.BytesBySize[c], allBytes)
			r.PctKeptSize[c] = pct(r.KeptBySize[c], allKept)
		}
		return r
	}
	d := &Direct{Total: row(&all), Functions: []DirectRow{}}
	for fid := range heaps {
		for _, h := range []*profile.Heap{&heaps[fid], &hidden[fid]} {
			if h.IsZero() {
				continue
			}
			r := row(h)
			r.Func = &b.funcs[fid]
			r.Hidden = h == &hidden[fid]
			d.Functions = append(d.Functions, r)
		}
	}
	slices.SortStableFunc(d.Functions, func(a, c DirectRow) int {
		return cmp.Or(
			cmp.Compare(c.Bytes, a.Bytes),
			cmp.Compare(c.Calls, a.Calls),
			cmp.Compare(a.Func.Name, c.Func.Name),
			cmp.Compare(a.Func.File, c.Func.File),
			compareBool(a.Hidden, c.Hidden))
	})
	return d
}
