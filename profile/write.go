package profile

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Write writes p in the format described in format.go, version Version.
//
// Strings are interned in order of first use (F records, then A records);
// other records are written by kind, each kind in id order, except that a
// node's parent always precedes it. So a profile read from a file in that
// canonical order is written back byte for byte. Comments and records of
// unknown kinds, skipped by Read, are not written.
func (p *Profile) Write(w io.Writer) error {
	if err := p.checkIDs(); err != nil {
		return err
	}
	e := &encoder{w: bufio.NewWriter(w), ids: map[string]int{}}
	fmt.Fprintf(e.w, "weave profile %d\n", Version)
	for _, m := range p.Meta {
		if m.Key == "" || strings.ContainsAny(m.Key, " \n") || strings.Contains(m.Value, "\n") {
			return fmt.Errorf("profile: metadata %q=%q cannot be written", m.Key, m.Value)
		}
		e.record("M %s %s", m.Key, m.Value)
	}

	e.writeStrings(p)
	e.writeDefs(p)
	e.writeNodes(p)
	e.writeCounts(p)
	e.writeMemory(p)
	e.writeLeaks(p)
	for _, bl := range p.Blocks {
		e.record("X %d %d %d", bl.Addr, bl.Size, bl.Node.ID)
	}
	e.writeMarks(p)
	fmt.Fprintf(e.w, "E %d\n", e.records)
	return e.w.Flush()
}

// writeStrings writes the string table, before the strings' first use.
func (e *encoder) writeStrings(p *Profile) {
	for _, f := range p.Funcs {
		e.intern(f.Name)
		e.intern(f.File)
	}
	for _, s := range p.Sites {
		e.intern(s.File)
		e.intern(s.Op)
		if s.Type != "" {
			e.intern(s.Type)
		}
	}
	for _, f := range p.Funcs {
		if f.Module != "" {
			e.intern(f.Module)
		}
	}
	for _, s := range p.Sites {
		if s.Object != "" {
			e.intern(s.Object)
		}
	}
	for i, s := range e.strs {
		e.record("S %d %s", i, escape(s))
	}
}

// writeDefs writes the functions, sites and threads the nodes refer to.
func (e *encoder) writeDefs(p *Profile) {

	for _, f := range p.Funcs {
		flags := ""
		switch {
		case f.Frameless:
			flags = " 1"
		case f.CallFramed:
			flags = " 2"
		}
		e.record("F %d %d %d %d%s", f.ID, e.ids[f.Name], e.ids[f.File], f.Line, flags)
	}
	for _, s := range p.Sites {
		typ := -1
		if s.Type != "" {
			typ = e.ids[s.Type]
		}
		fn, flags := -1, ""
		if s.Func != nil {
			fn = s.Func.ID
		}
		if f := b2i(s.Hidden)*SiteHidden | b2i(s.Caller)*SiteCaller; f != 0 {
			flags = fmt.Sprintf(" %d", f)
		}
		e.record("A %d %d %d %d %d %d %d %d%s", s.ID, fn, e.ids[s.File], s.Line, s.Col, e.ids[s.Op], typ, s.TypeSize, flags)
	}
	for _, s := range p.Sites {
		if s.Hidden && (s.From != 0 || s.Object != "") {
			obj := -1
			if s.Object != "" {
				obj = e.ids[s.Object]
			}
			e.record("R %d %d %d", s.ID, s.From, obj)
		}
	}
	for _, t := range p.Threads {
		e.record("T %d %d", t.ID, t.TID)
	}
}

// writeNodes writes the calling-context trees, each node after its parent.
func (e *encoder) writeNodes(p *Profile) {
	written := make([]bool, len(p.Nodes))
	var node func(n *Node)
	node = func(n *Node) {
		if written[n.ID] {
			return
		}
		written[n.ID] = true
		switch n.Kind {
		case KindRoot:
			e.record("N %d -1 %d R -1", n.ID, n.Thread.ID)
			return
		case KindFunc:
			node(n.Parent)
			e.record("N %d %d %d F %d", n.ID, n.Parent.ID, n.Thread.ID, n.Func.ID)
		case KindAlloc:
			node(n.Parent)
			e.record("N %d %d %d A %d", n.ID, n.Parent.ID, n.Thread.ID, n.Site.ID)
		}
	}
	for _, n := range p.Nodes {
		node(n)
	}
}

// writeCounts writes the nodes' calls, heap counts and times, and the bins.
func (e *encoder) writeCounts(p *Profile) {
	for _, n := range p.Nodes {
		if n.Calls != 0 {
			e.record("C %d %d", n.ID, n.Calls)
		}
	}
	for _, n := range p.Nodes {
		if !n.Heap.IsZero() {
			h := &n.Heap
			var b strings.Builder
			for _, a := range [...]*[NumClasses]uint64{&h.Allocs, &h.Bytes, &h.Frees, &h.FreedBytes} {
				for _, v := range a {
					fmt.Fprintf(&b, " %d", v)
				}
			}
			e.record("H %d%s", n.ID, b.String())
		}
	}
	for _, b := range p.Bins {
		e.record("B %d %d %d %d %d", b.Size, b.Allocs, b.Frees, b.Bytes, b.FreedBytes)
	}
	for _, n := range p.Nodes {
		if n.Time != 0 && n.Kind != KindAlloc {
			e.record("D %d %d", n.ID, n.Time)
		}
	}
}

// writeMemory writes the memory snapshots, the heap timeline and the heap
// at its peak.
func (e *encoder) writeMemory(p *Profile) {
	for _, sn := range p.Snapshots {
		e.record("Y %s %d %d %d %d %d", sn.Name, sn.NS, sn.Bytes, sn.Blocks, sn.VM, sn.RSS)
		for _, l := range strings.SplitAfter(sn.Maps, "\n") {
			if l = strings.TrimSuffix(l, "\n"); l != "" {
				e.record("V %s %s", sn.Name, l)
			}
		}
	}
	for _, pt := range p.Timeline {
		e.record("L %d %d %d %d %d %d %d", pt.NS, pt.Bytes, pt.Blocks, pt.Allocs, pt.Frees, pt.VM, pt.RSS)
	}
	for _, pn := range p.PeakHeap {
		e.record("P %d %d %d", pn.Node.ID, pn.Bytes, pn.Blocks)
	}
}

// encoder holds the state of Write.
type encoder struct {
	w       *bufio.Writer
	records int
	strs    []string
	ids     map[string]int
}

func (e *encoder) record(format string, args ...any) {
	fmt.Fprintf(e.w, format, args...)
	e.w.WriteByte('\n')
	e.records++
}

func (e *encoder) intern(s string) {
	if _, ok := e.ids[s]; !ok {
		e.ids[s] = len(e.strs)
		e.strs = append(e.strs, s)
	}
}

// checkIDs checks what Write relies on: every slice is indexed by id, every
// reference points into p, and the nodes form trees.
func (p *Profile) checkIDs() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("profile: cannot write: "+format, args...)
	}
	for i, f := range p.Funcs {
		if f == nil || f.ID != i {
			return bad("Funcs[%d] is nil or has another ID", i)
		}
	}
	for i, s := range p.Sites {
		if s == nil || s.ID != i {
			return bad("Sites[%d] is nil or has another ID", i)
		}
		if s.Func == nil && !s.Hidden && !s.Caller {
			return bad("site %d: no function, and neither hidden nor charged to the caller", i)
		}
		if s.Func != nil && (s.Func.ID >= len(p.Funcs) || p.Funcs[s.Func.ID] != s.Func) {
			return bad("site %d: function not in the profile", i)
		}
	}
	for i, t := range p.Threads {
		if t == nil || t.ID != i {
			return bad("Threads[%d] is nil or has another ID", i)
		}
	}
	inNodes := func(n *Node) bool { return n != nil && n.ID < len(p.Nodes) && p.Nodes[n.ID] == n }
	for i, n := range p.Nodes {
		if n == nil || n.ID != i {
			return bad("Nodes[%d] is nil or has another ID", i)
		}
		if n.Thread == nil || n.Thread.ID >= len(p.Threads) || p.Threads[n.Thread.ID] != n.Thread {
			return bad("node %d: thread not in the profile", i)
		}
		switch n.Kind {
		case KindRoot:
			if n.Parent != nil {
				return bad("root node %d has a parent", i)
			}
		case KindFunc:
			if n.Func == nil || n.Func.ID >= len(p.Funcs) || p.Funcs[n.Func.ID] != n.Func {
				return bad("node %d: function not in the profile", i)
			}
		case KindAlloc:
			if n.Site == nil || n.Site.ID >= len(p.Sites) || p.Sites[n.Site.ID] != n.Site {
				return bad("node %d: site not in the profile", i)
			}
		default:
			return bad("node %d: kind %q", i, n.Kind)
		}
		if n.Kind != KindRoot && (!inNodes(n.Parent) || n.Parent.Kind == KindAlloc || n.Parent.Thread != n.Thread) {
			return bad("node %d: parent not a root or function node of its thread", i)
		}
	}
	// Parent chains must end at a root: no cycles.
	state := make([]byte, len(p.Nodes)) // 0 unseen, 1 on the chain, 2 done
	for _, n := range p.Nodes {
		var chain []*Node
		for m := n; m != nil && state[m.ID] == 0; m = m.Parent {
			state[m.ID] = 1
			chain = append(chain, m)
		}
		if last := chain; len(last) > 0 {
			if top := last[len(last)-1].Parent; top != nil && state[top.ID] == 1 {
				return bad("node %d: parent chain has a cycle", top.ID)
			}
		}
		for _, m := range chain {
			state[m.ID] = 2
		}
	}
	for _, sn := range p.Snapshots {
		if sn.Name == "" || strings.ContainsAny(sn.Name, " \n") {
			return bad("snapshot name %q", sn.Name)
		}
	}
	for i, pn := range p.PeakHeap {
		if !inNodes(pn.Node) || pn.Node.Kind != KindAlloc || i > 0 && p.PeakHeap[i-1].Node.ID >= pn.Node.ID {
			return bad("peak node %d: not an allocation leaf of the profile, or out of order", i)
		}
	}
	for i, bl := range p.Blocks {
		if !inNodes(bl.Node) || bl.Node.Kind != KindAlloc || i > 0 && p.Blocks[i-1].Addr > bl.Addr {
			return bad("block %d: not of an allocation leaf of the profile, or out of order", i)
		}
	}
	seen := map[int]bool{}
	for _, b := range p.Bins {
		if b.Size < 0 || b.Size > LargeBin || seen[b.Size] {
			return bad("bin size %d out of range or repeated", b.Size)
		}
		seen[b.Size] = true
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
