package profile

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Profile is one weave profile: the calling-context trees of a program's
// threads, with call counts on function nodes and heap counters on
// allocation leaves, plus mprof's global bin table.
//
// Read fills every slice indexed by id (Funcs[i].ID == i, and so on), and
// links the nodes: Parent, Children, Thread.Root. Write reads the same fields.
type Profile struct {
	Meta    []Meta    // M records, in file order
	Funcs   []*Func   // F records, by id
	Sites   []*Site   // A records, by id
	Threads []*Thread // T records, by id
	Nodes   []*Node   // N records, by id
	Bins    []Bin     // B records, by increasing size

	Snapshots []*Snapshot // Y records with their V records, in file order
	Timeline  []Point     // L records, in time order
	PeakHeap  []PeakNode  // P records, by node id

	// TraceNodes maps the runtime's node indices, which the events of the
	// trace file (<profile>.trace, package tracepoints) name, to nodes:
	// the Q records, one per node that was ever traced.
	TraceNodes map[uint32]*Node

	Blocks []Block // X records (the heap picture), by address

	Marks   []*Mark      // G records with their W records, in time order (marks.go)
	Regions []RegionSpan // U records
}

// Block is a block live at exit (an X record): the heap picture's unit.
type Block struct {
	Addr, Size uint64
	Node       *Node // its allocation leaf
}

// Snapshot is a snapshot of the process's memory (a Y record and its V
// records).
type Snapshot struct {
	Name   string // "start", "peak" or "exit"
	NS     uint64 // since the start
	Bytes  uint64 // heap in use
	Blocks uint64
	VM     int64  // bytes; -1 if unknown
	RSS    int64  // bytes; -1 if unknown
	Maps   string // the /proc/self/maps lines, each ending in '\n'
}

// Point is a point of the heap timeline (an L record).
type Point struct {
	NS     uint64 // since the start
	Bytes  uint64 // heap in use
	Blocks uint64
	Allocs uint64 // allocations since the previous point
	Frees  uint64 // frees since the previous point
	VM     int64  // bytes; -1 if unknown
	RSS    int64  // bytes; -1 if unknown
}

// PeakNode is an allocation leaf's heap in use at the peak snapshot (a P
// record).
type PeakNode struct {
	Node   *Node
	Bytes  uint64
	Blocks uint64
}

// HeapMark is a heap state: bytes and blocks in use at a time.
type HeapMark struct {
	Bytes, Blocks, NS uint64
}

// HeapPeak returns the exact heap peak (M heap_peak), if recorded.
func (p *Profile) HeapPeak() (HeapMark, bool) {
	m, _, ok := p.heapMeta("heap_peak", 3)
	return m, ok
}

// PeakSnapshot returns the heap when the P records were taken and the
// tolerance of the snapshots (M peak_snapshot), if recorded.
func (p *Profile) PeakSnapshot() (HeapMark, float64, bool) {
	return p.heapMeta("peak_snapshot", 4)
}

func (p *Profile) heapMeta(key string, n int) (HeapMark, float64, bool) {
	v, ok := p.MetaValue(key)
	if !ok {
		return HeapMark{}, 0, false
	}
	f := strings.Fields(v)
	if len(f) != n {
		return HeapMark{}, 0, false
	}
	var m HeapMark
	for i, dst := range []*uint64{&m.Bytes, &m.Blocks, &m.NS} {
		x, err := strconv.ParseUint(f[i], 10, 64)
		if err != nil {
			return HeapMark{}, 0, false
		}
		*dst = x
	}
	var tol float64
	if n == 4 {
		var err error
		if tol, err = strconv.ParseFloat(f[3], 64); err != nil {
			return HeapMark{}, 0, false
		}
	}
	return m, tol, true
}

// Snapshot returns the snapshot of the name, or nil.
func (p *Profile) Snapshot(name string) *Snapshot {
	for _, s := range p.Snapshots {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Meta is one metadata record (M key value).
type Meta struct {
	Key, Value string
}

// Func is a woven function (an F record). The same function may appear as
// several Funcs, e.g. a static inline function of a header woven into
// several translation units; consumers that merge them key on (Name, File).
type Func struct {
	ID     int
	Name   string
	File   string
	Line   int
	Module string // the object file it was linked into (an O record), or ""
	// Frameless: woven without a frame (--frames auto), in the tree only
	// through its allocation sites; its calls were not counted.
	Frameless bool
	// CallFramed: framed around its calls that may allocate; its calls
	// counted are those calls.
	CallFramed bool
}

// Site is an allocation call site (an A record).
type Site struct {
	ID       int
	Func     *Func // enclosing function; nil for a hidden or caller site
	File     string
	Line     int
	Col      int
	Op       string // the called function: "malloc", "calloc", ...
	Type     string // what the site's size expression says the block is, in C, or ""
	TypeSize uint64 // the block's size when Type is all of it, else 0 (a run-time count)
	// Hidden marks the site of allocations made by code that was not
	// woven (a library calling malloc), charged to the innermost woven
	// function: the A node's parent. See format.go.
	Hidden bool
	// Caller marks a site (Func nil) whose blocks are charged to the
	// caller, the A node's parent: a declared allocator's entry, a site
	// in an excluded function. See format.go.
	Caller bool
	// From and Object say where a hidden site's allocator was called
	// from (an R record): an address, and the object file holding it,
	// or "" when the runtime did not know its name (see HiddenObject).
	From   uint64
	Object string
}

// HiddenObject returns the object file a hidden site's allocator was
// called from: its R record's, else the mapping holding its address in
// the memory map (the exit snapshot's, then the others'), else "".
func (p *Profile) HiddenObject(s *Site) string {
	if !s.Hidden || s.Object != "" || s.From == 0 {
		return s.Object
	}
	names := []string{"exit", "peak", "start"}
	for _, sn := range p.Snapshots {
		if !slices.Contains(names, sn.Name) {
			names = append(names, sn.Name)
		}
	}
	for _, name := range names {
		sn := p.Snapshot(name)
		if sn == nil {
			continue
		}
		for _, l := range strings.Split(sn.Maps, "\n") {
			f := strings.Fields(l)
			lo, hi, ok := strings.Cut(f0(f), "-")
			if !ok || len(f) < 6 {
				continue
			}
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil && a <= s.From && s.From < b {
				return strings.Join(f[5:], " ")
			}
		}
	}
	return ""
}

func f0(f []string) string {
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// SiteHidden is the flag of a hidden site in an A record's flags field.
const SiteHidden = 1

// SiteCaller is the flag (in an A record's flags) of a site whose blocks
// are charged to the caller, the parent of the A node: a declared
// allocator's entry, or a site in an excluded function.
const SiteCaller = 2

// Thread is a thread of the profiled program (a T record).
type Thread struct {
	ID   int
	TID  uint64 // kernel thread id
	Root *Node  // its calling-context tree; nil if the file has no R node for it
}

// Kind is the kind of a calling-context-tree node.
type Kind byte

// Node kinds, as written in N records.
const (
	KindRoot  Kind = 'R' // a thread's root
	KindFunc  Kind = 'F' // a woven function
	KindAlloc Kind = 'A' // an allocation leaf
)

// Node is a calling-context-tree node (an N record, with its C and H
// records folded in).
type Node struct {
	ID       int
	Parent   *Node   // nil for a root
	Children []*Node // by id
	Thread   *Thread
	Kind     Kind
	Func     *Func // KindFunc nodes
	Site     *Site // KindAlloc nodes
	Calls    uint64
	Heap     Heap   // KindAlloc nodes
	Time     uint64 // self time in ns (a D record; KindRoot and KindFunc nodes)
	// Leaks: a KindAlloc node's blocks in use at exit by kind (a K
	// record); nil when the profile has no scan or the node no K record.
	Leaks *LeakKinds
}

// Size classes of mprof, the index of the arrays in Heap.
const (
	Small  = iota // 0-32 bytes
	Medium        // 33-256
	Large         // 257-2048
	XLarge        // more than 2048
	NumClasses
)

// ClassNames are mprof's one-letter names of the size classes.
var ClassNames = [NumClasses]string{"s", "m", "l", "x"}

// SizeClass returns the size class of a request of n bytes.
func SizeClass(n uint64) int {
	switch {
	case n <= 32:
		return Small
	case n <= 256:
		return Medium
	case n <= 2048:
		return Large
	}
	return XLarge
}

// Heap holds the heap counters of an allocation leaf, by size class.
type Heap struct {
	Allocs     [NumClasses]uint64 // allocations
	Bytes      [NumClasses]uint64 // bytes allocated
	Frees      [NumClasses]uint64 // frees of blocks allocated here
	FreedBytes [NumClasses]uint64 // bytes of those blocks
}

// IsZero reports whether all counters are 0.
func (h *Heap) IsZero() bool { return *h == Heap{} }

// Add adds the counters of o to h.
func (h *Heap) Add(o *Heap) {
	for c := range NumClasses {
		h.Allocs[c] += o.Allocs[c]
		h.Bytes[c] += o.Bytes[c]
		h.Frees[c] += o.Frees[c]
		h.FreedBytes[c] += o.FreedBytes[c]
	}
}

// TotalAllocs returns the number of allocations over all size classes.
func (h *Heap) TotalAllocs() uint64 { return sum(h.Allocs) }

// TotalBytes returns the bytes allocated over all size classes.
func (h *Heap) TotalBytes() uint64 { return sum(h.Bytes) }

// TotalFrees returns the number of frees over all size classes.
func (h *Heap) TotalFrees() uint64 { return sum(h.Frees) }

// TotalFreedBytes returns the bytes freed over all size classes.
func (h *Heap) TotalFreedBytes() uint64 { return sum(h.FreedBytes) }

func sum(a [NumClasses]uint64) uint64 {
	var s uint64
	for _, v := range a {
		s += v
	}
	return s
}

// LargeBin is the size of the bin that counts every request larger than
// 1024 bytes.
const LargeBin = 1025

// Bin is one line of mprof's bin table (a B record).
type Bin struct {
	Size       int // request size 0..1024, or LargeBin
	Allocs     uint64
	Frees      uint64
	Bytes      uint64
	FreedBytes uint64
}

// MetaValue returns the value of the first metadata record with the key.
func (p *Profile) MetaValue(key string) (string, bool) {
	for _, m := range p.Meta {
		if m.Key == key {
			return m.Value, true
		}
	}
	return "", false
}

// HasTime reports whether the profile holds times (the program ran with
// timing on).
func (p *Profile) HasTime() bool {
	if _, ok := p.MetaValue("time_mode"); ok {
		return true
	}
	for _, n := range p.Nodes {
		if n.Time != 0 {
			return true
		}
	}
	return false
}

// String returns a readable dump of the profile, for debugging: metadata,
// each thread's tree indented by depth, and the bins.
func (p *Profile) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "weave profile %d\n", Version)
	for _, m := range p.Meta {
		fmt.Fprintf(&b, "meta %s=%q\n", m.Key, m.Value)
	}
	for _, t := range p.Threads {
		fmt.Fprintf(&b, "thread %d tid %d\n", t.ID, t.TID)
		if t.Root == nil {
			continue
		}
		type item struct {
			n     *Node
			depth int
		}
		stack := []item{{t.Root, 1}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			b.WriteString(strings.Repeat("  ", it.depth))
			b.WriteString(it.n.describe())
			b.WriteByte('\n')
			for i := len(it.n.Children) - 1; i >= 0; i-- {
				stack = append(stack, item{it.n.Children[i], it.depth + 1})
			}
		}
	}
	for _, bin := range p.Bins {
		size := fmt.Sprint(bin.Size)
		if bin.Size == LargeBin {
			size = ">1024"
		}
		fmt.Fprintf(&b, "bin %s allocs %d frees %d bytes %d freed %d\n",
			size, bin.Allocs, bin.Frees, bin.Bytes, bin.FreedBytes)
	}
	for _, sn := range p.Snapshots {
		fmt.Fprintf(&b, "snapshot %s at %dns heap %d bytes %d blocks vm %d rss %d\n", sn.Name, sn.NS, sn.Bytes, sn.Blocks, sn.VM, sn.RSS)
		for _, l := range strings.SplitAfter(sn.Maps, "\n") {
			if l != "" {
				fmt.Fprintf(&b, "  map %s", l)
			}
		}
	}
	for _, pt := range p.Timeline {
		fmt.Fprintf(&b, "point %dns heap %d bytes %d blocks +%d -%d vm %d rss %d\n", pt.NS, pt.Bytes, pt.Blocks, pt.Allocs, pt.Frees, pt.VM, pt.RSS)
	}
	for _, pn := range p.PeakHeap {
		fmt.Fprintf(&b, "peak #%d %d bytes %d blocks\n", pn.Node.ID, pn.Bytes, pn.Blocks)
	}
	for _, bl := range p.Blocks {
		fmt.Fprintf(&b, "block %#x %d bytes #%d\n", bl.Addr, bl.Size, bl.Node.ID)
	}
	return b.String()
}

// describe returns a one-line description of n for String.
func (n *Node) describe() string {
	var s string
	switch n.Kind {
	case KindRoot:
		s = fmt.Sprintf("#%d root", n.ID)
	case KindFunc:
		s = fmt.Sprintf("#%d %s %s:%d", n.ID, escape(n.Func.Name), escape(n.Func.File), n.Func.Line)
	case KindAlloc:
		st := n.Site
		if st.Func == nil {
			s = fmt.Sprintf("#%d %s at %s:%d:%d", n.ID, escape(st.Op), escape(st.File), st.Line, st.Col)
		} else {
			s = fmt.Sprintf("#%d %s at %s:%d:%d in %s", n.ID, escape(st.Op), escape(st.File), st.Line, st.Col, escape(st.Func.Name))
		}
		if st.Hidden {
			s += " hidden"
			if st.From != 0 || st.Object != "" {
				s += fmt.Sprintf(" from %#x %s", st.From, escape(st.Object))
			}
		}
		if st.Type != "" {
			s += fmt.Sprintf(" sizeof(%s)=%d", escape(st.Type), st.TypeSize)
		}
	default:
		s = fmt.Sprintf("#%d kind %q", n.ID, n.Kind)
	}
	if n.Calls != 0 {
		s += fmt.Sprintf(" calls %d", n.Calls)
	}
	if n.Time != 0 {
		s += fmt.Sprintf(" self %dns", n.Time)
	}
	if !n.Heap.IsZero() {
		h := &n.Heap
		s += fmt.Sprintf(" allocs %v bytes %v frees %v freed %v", h.Allocs, h.Bytes, h.Frees, h.FreedBytes)
	}
	return s
}
