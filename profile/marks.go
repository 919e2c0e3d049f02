package profile

import (
	"fmt"
	"strconv"
	"strings"
)

// RegionFile is the file of a region's pseudo-function (WEAVE_REGION,
// weave_region_begin: its F record's name is the region's label).
const RegionFile = "(region)"

// IsRegion reports whether f is a region's pseudo-function.
func (f *Func) IsRegion() bool { return f != nil && f.File == RegionFile }

// Mark is a mark (a G record, with its W records): a point of the run
// set by WEAVE_MARK or weave mark.
type Mark struct {
	Gen    int // the generation it started: marks count 1, 2, ... in time order
	Label  string
	NS     uint64 // since the start, as the timeline's points
	Bytes  uint64 // heap in use then
	Blocks uint64
	Allocs uint64 // allocations and frees so far
	Frees  uint64
	Thread *Thread // the thread that set it; nil when set from outside (weave mark)
	// Live holds the blocks allocated after an earlier mark and live at
	// this one (W records), by allocation leaf and generation.
	Live []LiveGen
	// LiveKnown is false when the runtime recorded no live blocks at this
	// mark (M marks_live_dropped): its table was full.
	LiveKnown bool
}

// LiveGen counts the blocks of one allocation leaf allocated in one
// generation (after mark Gen, before the next) and live at a mark.
type LiveGen struct {
	Node          *Node
	Gen           int
	Blocks, Bytes uint64
}

// RegionSpan is when a region ran on a thread (a U record): consecutive
// runs of one region at one nesting level merged, Count of them.
type RegionSpan struct {
	Thread *Thread
	Label  string
	T0, T1 uint64 // since the start
	Count  uint64
}

// markRecord decodes a G record: gen ns bytes blocks allocs frees thread label.
func (d *decoder) markRecord(rest string) error {
	f := strings.SplitN(rest, " ", 8)
	if len(f) != 8 {
		return fmt.Errorf("%d fields, want 8", len(f))
	}
	v, err := nums(f[:7], "gen", "ns", "bytes", "blocks", "allocs", "frees", "thread?")
	if err != nil {
		return err
	}
	m := &Mark{Gen: int(v[0]), NS: v[1], Bytes: v[2], Blocks: v[3], Allocs: v[4], Frees: v[5], LiveKnown: true}
	if n := len(d.p.Marks); v[0] == 0 || n > 0 && d.p.Marks[n-1].Gen >= m.Gen {
		return fmt.Errorf("generation %d out of order", v[0])
	}
	if v[6] != none {
		if m.Thread, err = d.threads.lookup(v[6], "thread"); err != nil {
			return err
		}
	}
	if m.Label, err = unescape(f[7]); err != nil {
		return err
	}
	d.p.Marks = append(d.p.Marks, m)
	return nil
}

// liveRecord decodes a W record: gen node born blocks bytes, the blocks of
// leaf node allocated in generation born and live at mark gen.
func (d *decoder) liveRecord(rest string) error {
	f, err := fields(rest, 5)
	if err != nil {
		return err
	}
	v, err := nums(f, "gen", "node", "born", "blocks", "bytes")
	if err != nil {
		return err
	}
	var m *Mark
	if n := len(d.p.Marks); n > 0 && d.p.Marks[n-1].Gen == int(v[0]) {
		m = d.p.Marks[n-1]
	} else {
		return fmt.Errorf("mark %d is not the last G record's", v[0])
	}
	if v[2] == 0 || v[2] >= v[0] {
		return fmt.Errorf("generation %d is not before mark %d", v[2], v[0])
	}
	n, err := d.nodes.lookup(v[1], "node")
	if err != nil {
		return err
	}
	if n.Kind != KindAlloc {
		return fmt.Errorf("node %d is not an allocation leaf", n.ID)
	}
	m.Live = append(m.Live, LiveGen{n, int(v[2]), v[3], v[4]})
	return nil
}

// spanRecord decodes a U record: thread t0 t1 count label.
func (d *decoder) spanRecord(rest string) error {
	f := strings.SplitN(rest, " ", 5)
	if len(f) != 5 {
		return fmt.Errorf("%d fields, want 5", len(f))
	}
	v, err := nums(f[:4], "thread", "t0", "t1", "count")
	if err != nil {
		return err
	}
	s := RegionSpan{T0: v[1], T1: v[2], Count: v[3]}
	if s.Thread, err = d.threads.lookup(v[0], "thread"); err != nil {
		return err
	}
	if s.Label, err = unescape(f[4]); err != nil {
		return err
	}
	d.p.Regions = append(d.p.Regions, s)
	return nil
}

// finishMarks applies M marks_live_dropped (the gens of the marks without
// W records) and charges regions (chargeRegions).
func (p *Profile) finishMarks() {
	if v, ok := p.MetaValue("marks_live_dropped"); ok {
		for _, g := range strings.Fields(v) {
			if n, err := strconv.Atoi(g); err == nil {
				if m := p.MarkByGen(n); m != nil {
					m.LiveKnown = false
				}
			}
		}
	}
	p.chargeRegions()
}

// MarkByGen returns the mark that started generation gen, or nil.
func (p *Profile) MarkByGen(gen int) *Mark {
	for _, m := range p.Marks {
		if m.Gen == gen {
			return m
		}
	}
	return nil
}

// chargeRegions charges a region's own allocations to it: an allocation
// leaf directly under a region's node whose site lies in the function that
// opened the region (its nearest enclosing function node) gets a copy of
// its site flagged Caller, so that the tables count the blocks as the
// region's own, as KPROF and ghc's cost centres do, rather than as a call
// of that function from the region. A site of another function (a
// frameless allocation leaf called inside the region) keeps its own.
func (p *Profile) chargeRegions() {
	var clones map[*Site]*Site
	for _, n := range p.Nodes {
		if n.Kind != KindAlloc || n.Site == nil || n.Site.Func == nil || n.Parent == nil ||
			n.Parent.Kind != KindFunc || !n.Parent.Func.IsRegion() {
			continue
		}
		up := n.Parent
		for up != nil && up.Kind == KindFunc && up.Func.IsRegion() {
			up = up.Parent
		}
		if up == nil || up.Kind != KindFunc || up.Func != n.Site.Func {
			continue
		}
		c := clones[n.Site]
		if c == nil {
			cp := *n.Site
			cp.ID, cp.Func, cp.Caller = len(p.Sites), nil, true
			p.Sites = append(p.Sites, &cp)
			if clones == nil {
				clones = map[*Site]*Site{}
			}
			clones[n.Site], c = &cp, &cp
		}
		n.Site = c
	}
}

// writeMarks writes the G, W and U records and M marks_live_dropped.
func (e *encoder) writeMarks(p *Profile) {
	var dropped []string
	for _, m := range p.Marks {
		th := "-1"
		if m.Thread != nil {
			th = strconv.Itoa(m.Thread.ID)
		}
		e.record("G %d %d %d %d %d %d %s %s", m.Gen, m.NS, m.Bytes, m.Blocks, m.Allocs, m.Frees, th, escape(m.Label))
		for _, l := range m.Live {
			e.record("W %d %d %d %d %d", m.Gen, l.Node.ID, l.Gen, l.Blocks, l.Bytes)
		}
		if !m.LiveKnown {
			dropped = append(dropped, strconv.Itoa(m.Gen))
		}
	}
	if len(dropped) > 0 {
		e.record("M marks_live_dropped %s", strings.Join(dropped, " "))
	}
	for _, s := range p.Regions {
		e.record("U %d %d %d %d %s", s.Thread.ID, s.T0, s.T1, s.Count, escape(s.Label))
	}
}
