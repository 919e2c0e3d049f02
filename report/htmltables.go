package report

import (
	"fmt"
	"slices"
	"strings"
)

// htmlTable is a table of the HTML report; the page renders and sorts it.
// A cell is a number or a string.
type htmlTable struct {
	ID    string    `json:"id"`
	Title string    `json:"title"`
	Note  string    `json:"note,omitempty"`
	Cols  []htmlCol `json:"cols"`
	Rows  [][]any   `json:"rows"`
}

// htmlCol is a column: Kind tells the page how to show its numbers:
// "bytes", "count", "pct", "ns", "size" (a bin size: 1025 is ">1024"),
// "hex"; "" for text.
type htmlCol struct {
	Name string `json:"name"`
	Kind string `json:"kind,omitempty"`
}

// maxHTMLRows bounds a table of the page (a leak table can have a row
// per calling context); the rows kept are the first, the largest.
const maxHTMLRows = 2000

// htmlTables returns the report's tables for the page.
func (r *Report) htmlTables() []htmlTable {
	var ts []htmlTable
	if r.Has(TableLeaks) {
		t := htmlTable{ID: "leaks", Title: "Memory leaks", Note: fmt.Sprintf("blocks never freed, by partial call chain, innermost first (%s)", depthNote(r.Depth)),
			Cols: []htmlCol{{"bytes kept", "bytes"}, {"% kept", "pct"}, {"blocks kept", "count"}, {"allocs", "count"}, {"frees", "count"}, {"chain", ""}}}
		if r.Metadata["frees_seen"] == "0" {
			t.Title, t.Note = "In use at exit", "blocks not seen freed (code that was not woven may have freed them), by partial call chain, innermost first ("+depthNote(r.Depth)+")"
		}
		scanned := r.Totals.LeakKinds != nil
		if scanned {
			t.Cols = slices.Insert(t.Cols, 3, htmlCol{"kind", ""})
			t.Cols[4].Name, t.Cols[5].Name = "chain allocs", "chain frees"
			t.Note += "; kind: the leak scan's; chain allocs, frees: of all the chain's blocks, every kind"
		}
		for _, l := range r.Leaks {
			row := []any{l.BytesKept, l.PctKept, l.BlocksKept, l.Allocs, l.Frees, chainText(r, l.Chain, l.Hidden)}
			if scanned {
				row = slices.Insert(row, 3, any(l.Kind))
			}
			t.Rows = append(t.Rows, row)
		}
		ts = append(ts, t)
	}
	if r.Has(TableBins) {
		t := htmlTable{ID: "bins", Title: "Allocation bins", Note: "requests by size; types: of the sites whose size expression names a type of that size (sizeof(T), 4 * sizeof(T)); untyped: the other allocations (no sizeof, or a run-time count)",
			Cols: []htmlCol{{"size", "size"}, {"allocs", "count"}, {"% allocs", "pct"}, {"bytes", "bytes"}, {"% bytes", "pct"},
				{"frees", "count"}, {"bytes kept", "bytes"}, {"% kept", "pct"}, {"types", ""}}}
		if s := runTimeTypes(r); s != "" {
			t.Note += "; " + s
		}
		for _, b := range r.Bins {
			t.Rows = append(t.Rows, []any{b.Size, b.Allocs, b.PctAllocs, b.Bytes, b.PctBytes, b.Frees, b.BytesKept, b.PctKept, binTypes(b)})
		}
		ts = append(ts, t)
	}
	if r.Has(TableDirect) && r.Direct != nil {
		t := htmlTable{ID: "direct", Title: "Direct allocation", Note: "what each function allocated itself; s, m, l, x: 0-32, 33-256, 257-2048, >2048 bytes",
			Cols: []htmlCol{{"function", ""}, {"% mem", "pct"}, {"bytes", "bytes"}, {"bytes kept", "bytes"}, {"calls", "count"},
				{"s bytes", "bytes"}, {"m bytes", "bytes"}, {"l bytes", "bytes"}, {"x bytes", "bytes"}}}
		for _, d := range r.Direct.Functions {
			name := r.Label(*d.Func)
			if d.Hidden {
				name += " (hidden)"
			}
			b := d.BytesBySize
			t.Rows = append(t.Rows, []any{name, d.PctMem, d.Bytes, d.BytesKept, d.Calls, b[0], b[1], b[2], b[3]})
		}
		ts = append(ts, t)
	}
	if r.Has(TableGraph) {
		t := htmlTable{ID: "graph", Title: "Allocation call graph", Note: "each function with its callers and callees (gprof style, cycles merged); bytes allocated by it and below it",
			Cols: []htmlCol{{"index", "count"}, {"function", ""}, {"self+desc", "bytes"}, {"% self+desc", "pct"}, {"self", "bytes"},
				{"calls", "count"}, {"recursive", "count"}, {"callers", ""}, {"callees", ""}}}
		at := false
		for _, e := range r.Graph {
			calls := htmlCalls(e.Calls, e.NotCounted, e.AtCalls)
			at = at || e.AtCalls && !e.NotCounted
			t.Rows = append(t.Rows, []any{e.Index, e.Name, e.SelfDesc, e.PctSelfDesc, e.Self, calls, e.Recursive, arcs(e.Callers), arcs(e.Callees)})
		}
		if at {
			t.Note += atCallsNote
		}
		ts = append(ts, t)
	}
	if r.Time != nil && r.Has(TableFlat) {
		t := htmlTable{ID: "flat", Title: "Flat profile (time)", Note: "time " + r.Time.Mode + "; total is the function and its callees, outermost activations",
			Cols: []htmlCol{{"function", ""}, {"% time", "pct"}, {"self", "ns"}, {"calls", "count"}, {"self/call", "ns"}, {"total", "ns"}, {"% total", "pct"}, {"total/call", "ns"}}}
		at := false
		for _, f := range r.Time.Functions {
			calls := htmlCalls(f.Calls, f.NotCounted, f.AtCalls)
			at = at || f.AtCalls && !f.NotCounted
			t.Rows = append(t.Rows, []any{r.Label(f.Func), f.PctSelf, f.SelfNS, calls, f.SelfPerCallNS, f.TotalNS, f.PctTotal, f.TotalPerCallNS})
		}
		if at {
			t.Note += atCallsNote
		}
		ts = append(ts, t)
	}
	ts = append(ts, r.memoryTables()...)
	for i := range ts {
		if n := len(ts[i].Rows); n > maxHTMLRows {
			ts[i].Rows = ts[i].Rows[:maxHTMLRows]
			ts[i].Note += fmt.Sprintf(" (the first %s of %s rows: the text and JSON reports have all)", num(maxHTMLRows), num(uint64(n)))
		}
	}
	return ts
}

// atCallsNote explains the HTML tables' "*" (atCallsLegend's words).
const atCallsNote = "; calls ending in * are of a function framed at its calls (weave --frames auto): those calls, which may allocate (or its runs that made one), not all its calls"

func depthNote(depth int) string {
	if depth <= 0 {
		return "whole chains"
	}
	return fmt.Sprintf("up to %d deep", depth)
}

func arcs(as []Arc) string {
	var s []string
	for _, a := range as {
		s = append(s, fmt.Sprintf("%s [%d] %d B", a.Name, a.Index, a.Bytes))
	}
	return strings.Join(s, "; ")
}

// memoryTables are the VIRTUAL MEMORY and HEAP AT THE PEAK tables (the
// report's memory.go), when built.
func (r *Report) memoryTables() []htmlTable {
	var ts []htmlTable
	if sg := r.Segments; sg != nil && len(sg.Rows) > 0 {
		t := htmlTable{ID: "segments", Title: "Virtual memory", Note: "the process's memory map by segment at each snapshot",
			Cols: []htmlCol{{"segment", ""}, {"address", ""}}}
		if note := peakCopyNote(sg); note != "" {
			t.Note += "; " + strings.ReplaceAll(note, "\n", " ")
		}
		for _, sn := range sg.Snapshots {
			t.Cols = append(t.Cols, htmlCol{sn.Name, "bytes"})
		}
		for _, row := range sg.Rows {
			cells := []any{row.Name, fmt.Sprintf("%#x", row.Start)}
			for _, sn := range sg.Snapshots {
				cells = append(cells, row.Size[sn.Name])
			}
			t.Rows = append(t.Rows, cells)
		}
		for _, what := range []struct {
			name string
			get  func(*SnapshotInfo) int64
		}{
			{"(heap in use)", func(s *SnapshotInfo) int64 { return int64(s.HeapBytes) }},
			{"(VM size)", func(s *SnapshotInfo) int64 { return s.VM }},
			{"(resident)", func(s *SnapshotInfo) int64 { return s.RSS }},
		} {
			cells := []any{what.name, ""}
			for i := range sg.Snapshots {
				cells = append(cells, max(what.get(&sg.Snapshots[i]), 0))
			}
			t.Rows = append(t.Rows, cells)
		}
		ts = append(ts, t)
	} else if sg != nil && sg.Unavailable != "" {
		ts = append(ts, htmlTable{ID: "segments", Title: "Virtual memory", Note: "no memory map: " + sg.Unavailable, Cols: []htmlCol{{"segment", ""}}})
	}
	if pk := r.Peak; pk != nil && len(pk.Contexts) > 0 {
		t := htmlTable{ID: "peak", Title: "Heap at the peak",
			Note: fmt.Sprintf("what held the heap at the peak snapshot (%s in use; the exact peak was %s), by partial call chain, innermost first",
				num(pk.Snapshot.Bytes), num(pk.Peak.Bytes)),
			Cols: []htmlCol{{"bytes", "bytes"}, {"% of snapshot", "pct"}, {"blocks", "count"}, {"chain", ""}}}
		for _, c := range pk.Contexts {
			t.Rows = append(t.Rows, []any{c.Bytes, c.Pct, c.Blocks, chainText(r, c.Chain, c.Hidden)})
		}
		ts = append(ts, t)
	}
	return ts
}

// htmlCalls is a calls cell of the HTML tables: the count (a number, for
// sorting), NotCounted for a frameless function's, or the count marked
// for a function framed at its calls.
func htmlCalls(calls uint64, notCounted, atCalls bool) any {
	switch {
	case notCounted:
		return NotCounted
	case atCalls:
		return num(calls) + atCallsMark(true)
	}
	return calls
}
