package report

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/vmmap"
)

// The memory tables: the process's virtual memory by segment, the heap
// over time, and what held the heap at its peak.
const (
	TableSegments = "segments"
	TableTimeline = "timeline"
	TablePeak     = "peak"
)

// VMTables are the memory tables built from the runtime's memory records;
// by default they follow mprof's tables when the profile has them.
var VMTables = []string{TableSegments, TableTimeline, TablePeak}

// HasVM reports whether p has memory records (snapshots, a timeline, a
// peak, or the reason the maps could not be read).
func HasVM(p *profile.Profile) bool {
	_, peak := p.HeapPeak()
	_, unavailable := p.MetaValue("maps_error")
	return len(p.Snapshots) > 0 || len(p.Timeline) > 0 || peak || unavailable
}

// Segments is the VIRTUAL MEMORY table: the segments of the process's map
// at each snapshot (start-up, the heap peak, exit).
type Segments struct {
	// Unavailable says why there is no map ("open /proc/self/maps: ..."),
	// or is empty.
	Unavailable string         `json:"unavailable,omitempty"`
	Snapshots   []SnapshotInfo `json:"snapshots"` // in time order
	Rows        []SegmentRow   `json:"rows"`
	// HeapPeak is the heap's exact peak when the "peak" snapshot's map was
	// copied below it (the runtime copies the map when the heap doubles,
	// or grows after 10 ms: vmmap.c's vm_peak_take), else nil.
	HeapPeak *HeapMark `json:"heap_peak,omitempty"`
}

// SnapshotInfo describes one snapshot of the process.
type SnapshotInfo struct {
	Name       string `json:"name"` // "start", "peak", "exit"
	NS         uint64 `json:"ns"`   // since the start
	HeapBytes  uint64 `json:"heap_bytes"`
	HeapBlocks uint64 `json:"heap_blocks"`
	Mapped     uint64 `json:"mapped"` // sum of the maps' sizes
	VM         int64  `json:"vm"`     // VM size from statm; -1 unknown
	RSS        int64  `json:"rss"`    // resident set from statm; -1 unknown
	Maps       int    `json:"maps"`   // number of mappings
}

// SegmentRow is a segment (vmmap's class, per library for libraries) with
// its size at each snapshot.
type SegmentRow struct {
	Name  string `json:"name"`          // "text", "libc.so.6 data", ...
	Class string `json:"class"`         // vmmap's class
	Lib   string `json:"lib,omitempty"` // the library, for a library segment
	Start uint64 `json:"start"`         // lowest address, at the first snapshot that has the segment
	// Size is the bytes mapped at each snapshot, by snapshot name; 0 when
	// the segment was not mapped then.
	Size map[string]uint64 `json:"size"`
}

// Timeline is the HEAP OVER TIME chart's data: the runtime's points, and
// the exact peak.
type Timeline struct {
	Points  []Point          `json:"points"`
	Peak    *HeapMark        `json:"peak,omitempty"` // the exact high-water mark
	Exit    *HeapMark        `json:"exit,omitempty"` // the heap at exit
	Marks   []TimelineMark   `json:"marks,omitempty"`
	Regions []TimelineRegion `json:"regions,omitempty"`
}

// TimelineMark is a mark (WEAVE_MARK, weave mark) on the timeline.
type TimelineMark struct {
	Label  string `json:"label"`
	Gen    int    `json:"gen"` // 1, 2, ... in time order
	NS     uint64 `json:"ns"`
	Bytes  uint64 `json:"bytes"` // heap in use then
	Blocks uint64 `json:"blocks"`
	Allocs uint64 `json:"allocs"` // so far
	Frees  uint64 `json:"frees"`
	Thread int    `json:"thread"` // -1: set from outside (weave mark)
}

// TimelineRegion is when a region ran on a thread: Count consecutive runs
// merged, from T0 to T1.
type TimelineRegion struct {
	Label  string `json:"label"`
	Thread int    `json:"thread"`
	T0     uint64 `json:"t0"`
	T1     uint64 `json:"t1"`
	Count  uint64 `json:"count"`
}

// Point is a point of the heap timeline.
type Point struct {
	NS     uint64 `json:"ns"` // since the start
	Bytes  uint64 `json:"bytes"`
	Blocks uint64 `json:"blocks"`
	Allocs uint64 `json:"allocs"` // since the previous point
	Frees  uint64 `json:"frees"`
	// VM size and RSS in bytes; -1 when unknown or not read at this point
	// (the runtime reads statm at most every 5 ms): carry the last value.
	VM  int64 `json:"vm"`
	RSS int64 `json:"rss"`
}

// HeapMark is the heap at one time.
type HeapMark struct {
	Bytes  uint64 `json:"bytes"`
	Blocks uint64 `json:"blocks"`
	NS     uint64 `json:"ns"`
}

// Peak is the table of the contexts that held the heap at its peak.
type Peak struct {
	Peak     HeapMark `json:"peak"`     // the exact peak
	Snapshot HeapMark `json:"snapshot"` // when the contexts were recorded
	// Tolerance: a snapshot was taken each time the heap exceeded the last
	// by this fraction, so Snapshot.Bytes >= Peak.Bytes / (1 + Tolerance).
	Tolerance float64       `json:"tolerance"`
	Contexts  []PeakContext `json:"contexts"` // by bytes, decreasing
}

// PeakContext is a partial call chain (as in the leak table) and the heap
// its allocations held at the peak snapshot.
type PeakContext struct {
	Chain  []Frame `json:"chain"` // innermost function first
	Bytes  uint64  `json:"bytes"`
	Blocks uint64  `json:"blocks"`
	Pct    float64 `json:"pct"` // of the snapshot's bytes
	Hidden bool    `json:"hidden,omitempty"`
}

// segments builds the VIRTUAL MEMORY table.
func (b *builder) segments() *Segments {
	p := b.p
	t := &Segments{Snapshots: []SnapshotInfo{}, Rows: []SegmentRow{}}
	t.Unavailable, _ = p.MetaValue("maps_error")
	exe, _ := p.MetaValue("exe")
	rows := map[vmmap.Label]*SegmentRow{}
	var order []*SegmentRow
	for _, sn := range p.Snapshots {
		info := SnapshotInfo{Name: sn.Name, NS: sn.NS, HeapBytes: sn.Bytes, HeapBlocks: sn.Blocks, VM: sn.VM, RSS: sn.RSS}
		maps, err := vmmap.Parse(sn.Maps)
		if err != nil && t.Unavailable == "" {
			t.Unavailable = "snapshot " + sn.Name + ": " + err.Error()
		}
		info.Maps = len(maps)
		for _, s := range vmmap.Classify(maps, exe) {
			info.Mapped += s.Size
			k := vmmap.Label{Class: s.Class, Lib: s.Lib}
			r := rows[k]
			if r == nil {
				r = &SegmentRow{Name: s.Name(), Class: s.Class, Lib: s.Lib, Start: s.Start, Size: map[string]uint64{}}
				rows[k] = r
				order = append(order, r)
			}
			r.Size[sn.Name] += s.Size
		}
		t.Snapshots = append(t.Snapshots, info)
		if pk, ok := p.HeapPeak(); ok && sn.Name == "peak" && sn.Bytes != pk.Bytes {
			t.HeapPeak = &HeapMark{pk.Bytes, pk.Blocks, pk.NS}
		}
	}
	slices.SortStableFunc(order, func(a, c *SegmentRow) int {
		return vmmap.Compare(vmmap.Label{Class: a.Class, Lib: a.Lib}, vmmap.Label{Class: c.Class, Lib: c.Lib})
	})
	for _, r := range order {
		t.Rows = append(t.Rows, *r)
	}
	return t
}

// timeline builds the HEAP OVER TIME data.
func (b *builder) timeline() *Timeline {
	p := b.p
	t := &Timeline{Points: []Point{}}
	for _, pt := range p.Timeline {
		t.Points = append(t.Points, Point{pt.NS, pt.Bytes, pt.Blocks, pt.Allocs, pt.Frees, pt.VM, pt.RSS})
	}
	if pk, ok := p.HeapPeak(); ok {
		t.Peak = &HeapMark{pk.Bytes, pk.Blocks, pk.NS}
	}
	if ex := p.Snapshot("exit"); ex != nil {
		t.Exit = &HeapMark{ex.Bytes, ex.Blocks, ex.NS}
	}
	for _, m := range p.Marks {
		th := -1
		if m.Thread != nil {
			th = m.Thread.ID
		}
		t.Marks = append(t.Marks, TimelineMark{m.Label, m.Gen, m.NS, m.Bytes, m.Blocks, m.Allocs, m.Frees, th})
	}
	for _, s := range p.Regions {
		t.Regions = append(t.Regions, TimelineRegion{s.Label, s.Thread.ID, s.T0, s.T1, s.Count})
	}
	return t
}

// peak builds the table of the contexts at the peak, with leak-table
// chains of the given depth.
func (b *builder) peak(depth int, sites bool) *Peak {
	p := b.p
	t := &Peak{Contexts: []PeakContext{}}
	if pk, ok := p.HeapPeak(); ok {
		t.Peak = HeapMark{pk.Bytes, pk.Blocks, pk.NS}
	}
	if sn, tol, ok := p.PeakSnapshot(); ok {
		t.Snapshot, t.Tolerance = HeapMark{sn.Bytes, sn.Blocks, sn.NS}, tol
	}
	index := map[string]int{}
	for _, pn := range p.PeakHeap {
		chain, site, key := b.leafChain(pn.Node, depth, sites)
		i, ok := index[key]
		if !ok {
			i = len(t.Contexts)
			index[key] = i
			t.Contexts = append(t.Contexts, PeakContext{Chain: b.frames(chain, site), Hidden: pn.Node.Site.Hidden})
		}
		t.Contexts[i].Bytes += pn.Bytes
		t.Contexts[i].Blocks += pn.Blocks
	}
	for i := range t.Contexts {
		t.Contexts[i].Pct = pct(t.Contexts[i].Bytes, t.Snapshot.Bytes)
	}
	slices.SortStableFunc(t.Contexts, func(a, c PeakContext) int {
		return cmp.Or(cmp.Compare(c.Bytes, a.Bytes), cmp.Compare(c.Blocks, a.Blocks),
			cmp.Compare(chainString(a.Chain), chainString(c.Chain)), compareBool(a.Hidden, c.Hidden))
	})
	return t
}

// formatTolerance writes a tolerance as a percentage: "6.25%".
func formatTolerance(f float64) string {
	return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
}
