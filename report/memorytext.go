package report

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/vmmap"
)

// textSegments writes the VIRTUAL MEMORY table:
//
//	segment          start       at start    at peak    at exit
//	text    0x55d000001000          4 KiB      4 KiB      4 KiB
//	...
//	mapped                        2.1 MiB  102.3 MiB   12.3 MiB
func textSegments(w *bufio.Writer, r *Report) {
	s := r.Segments
	fmt.Fprintln(w, "VIRTUAL MEMORY: the process's map by segment (from /proc/self/maps)")
	fmt.Fprintln(w)
	if len(s.Snapshots) == 0 || s.Unavailable != "" && len(s.Rows) == 0 {
		why := s.Unavailable
		if why == "" {
			why = "no snapshot recorded"
		}
		fmt.Fprintf(w, "Map unavailable: %s.\n", why)
		return
	}
	cols := []column{{head: "segment", left: true}, {head: "start"}}
	for _, sn := range s.Snapshots {
		cols = append(cols, column{head: "at " + sn.Name})
	}
	t := table{cols: cols}
	for _, row := range s.Rows {
		cells := []string{row.Name, fmt.Sprintf("%#x", row.Start)}
		for _, sn := range s.Snapshots {
			cells = append(cells, sizeCell(int64(row.Size[sn.Name])))
		}
		t.add(cells...)
	}
	t.rule()
	foot := func(name string, v func(SnapshotInfo) int64) {
		cells := []string{name, ""}
		for _, sn := range s.Snapshots {
			cells = append(cells, sizeCell(v(sn)))
		}
		t.add(cells...)
	}
	foot("mapped", func(sn SnapshotInfo) int64 { return int64(sn.Mapped) })
	foot("VM size", func(sn SnapshotInfo) int64 { return sn.VM })
	foot("RSS", func(sn SnapshotInfo) int64 { return sn.RSS })
	foot("heap in use", func(sn SnapshotInfo) int64 { return int64(sn.HeapBytes) })
	t.write(w)
	if note := peakCopyNote(s); note != "" {
		fmt.Fprintln(w, note)
	}
	if s.Unavailable != "" {
		fmt.Fprintf(w, "Some maps unavailable: %s.\n", s.Unavailable)
	}
}

// peakCopyNote says, when the "at peak" map was copied below the heap's
// peak, at what heap and when, and what the peak was; else "".
func peakCopyNote(s *Segments) string {
	if s.HeapPeak == nil {
		return ""
	}
	for _, sn := range s.Snapshots {
		if sn.Name == "peak" {
			return fmt.Sprintf("at peak: the map as copied with %s bytes of heap in use, at %s;\n"+
				"the heap's peak was %s bytes, at %s (the map is copied at a new peak only when\n"+
				"the heap has doubled since the last copy, or 10 ms have passed)",
				num(sn.HeapBytes), seconds(sn.NS), num(s.HeapPeak.Bytes), seconds(s.HeapPeak.NS))
		}
	}
	return ""
}

// sizeCell formats a size for a table cell: "-" when unknown, blank for 0.
func sizeCell(n int64) string {
	switch {
	case n < 0:
		return "-"
	case n == 0:
		return ""
	}
	return vmmap.Bytes(uint64(n))
}

// Chart dimensions: the plot's rows and columns, inside 100 columns with
// the axis labels.
const (
	chartRows = 16
	chartCols = 80
)

// textTimeline writes the HEAP OVER TIME chart, in the spirit of massif's
// ms_print: bytes in use as '#' columns, RSS as '.', the peak marked '^'
// under the time axis. Each column shows the highest value in its stretch
// of time.
func textTimeline(w *bufio.Writer, r *Report) {
	tl := r.Timeline
	fmt.Fprintln(w, "HEAP OVER TIME: bytes in use (#) and RSS (.)")
	fmt.Fprintln(w)
	if len(tl.Points) == 0 {
		fmt.Fprintln(w, "No timeline recorded.")
		return
	}
	end := tl.Points[len(tl.Points)-1].NS
	if tl.Peak != nil {
		end = max(end, tl.Peak.NS)
	}
	end = max(end, 1)
	col := func(ns uint64) int { return min(int(ns*uint64(chartCols)/(end+1)), chartCols-1) }
	heap := make([]uint64, chartCols)
	rss := make([]int64, chartCols)
	for i := range rss {
		rss[i] = -1
	}
	// Each point holds until the next: a column gets every point in it and
	// the one before it. RSS not read at a point (-1) is the last read's.
	lastRSS := int64(-1)
	for i, pt := range tl.Points {
		to := chartCols - 1
		if i+1 < len(tl.Points) {
			to = col(tl.Points[i+1].NS)
		}
		if pt.RSS >= 0 {
			lastRSS = pt.RSS
		}
		for c := col(pt.NS); c <= to; c++ {
			heap[c] = max(heap[c], pt.Bytes)
			rss[c] = max(rss[c], lastRSS)
		}
	}
	peakCol := -1
	if tl.Peak != nil {
		peakCol = col(tl.Peak.NS)
		heap[peakCol] = max(heap[peakCol], tl.Peak.Bytes)
	}
	// One scale for both, unless RSS dwarfs the heap: then the heap's, and
	// RSS above it shows as ' on the top row.
	var top, rssTop uint64 = 1, 0
	for c := range heap {
		top = max(top, heap[c])
		rssTop = max(rssTop, uint64(max(rss[c], 0)))
	}
	clipped := rssTop > 4*top
	if !clipped {
		top = max(top, rssTop)
	}
	level := func(v uint64) int { // 0: nothing, chartRows: the top row
		return int((v*chartRows + top - 1) / top)
	}
	for row := chartRows; row >= 1; row-- {
		label := ""
		switch row {
		case chartRows:
			label = vmmap.Bytes(top)
		case chartRows / 2:
			label = vmmap.Bytes(top / 2)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%10s |", label)
		for c := range chartCols {
			ch := byte(' ')
			if rss[c] >= 0 && level(uint64(rss[c])) == row {
				ch = '.'
			} else if rss[c] >= 0 && row == chartRows && level(uint64(rss[c])) > row {
				ch = '\''
			}
			if level(heap[c]) >= row {
				ch = '#'
			}
			b.WriteByte(ch)
		}
		w.WriteString(strings.TrimRight(b.String(), " ") + "\n")
	}
	fmt.Fprintf(w, "%10s +%s> time\n", "0", strings.Repeat("-", chartCols))
	if clipped {
		fmt.Fprintf(w, "%12s(RSS, up to %s, is above the top where marked ')\n", "", vmmap.Bytes(rssTop))
	}
	axis := fmt.Sprintf("%12s", "0")
	last := seconds(end)
	axis += strings.Repeat(" ", max(1, 12+chartCols-len(axis)-len(last))) + last
	fmt.Fprintln(w, axis)
	if tl.Peak != nil {
		mark := fmt.Sprintf("^ peak %s (%s bytes, %s blocks) at %s", vmmap.Bytes(tl.Peak.Bytes),
			num(tl.Peak.Bytes), num(tl.Peak.Blocks), seconds(tl.Peak.NS))
		at := 12 + peakCol
		if at+len(mark) > maxWidth {
			// Too far right: the caret, then the label to its left.
			mark = mark[2:] + " ^"
			at = max(0, at-len(mark)+1)
		}
		fmt.Fprintln(w, strings.Repeat(" ", at)+mark)
	}
	if len(tl.Marks) > 0 {
		row := []byte(strings.Repeat(" ", 12+chartCols))
		for _, m := range tl.Marks {
			row[12+col(m.NS)] = '|'
		}
		fmt.Fprintln(w, strings.TrimRight(string(row), " ")+"  marks")
	}
	if tl.Exit != nil {
		fmt.Fprintf(w, "At exit: %s in %s blocks. %d points.\n", vmmap.Bytes(tl.Exit.Bytes), num(tl.Exit.Blocks), len(tl.Points))
	} else {
		fmt.Fprintf(w, "%d points.\n", len(tl.Points))
	}
	textMarks(w, tl)
}

// textMarks lists the marks and regions of the timeline:
//
//	MARKS (weave report --between A B: the blocks allocated after A, live at B)
//	mark  time     heap in use  blocks  allocs  frees  label
//	   1  0.001 s            0       0      10     10  start
func textMarks(w *bufio.Writer, tl *Timeline) {
	if len(tl.Marks) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "MARKS (weave report --between A B: the blocks allocated after mark A, live at mark B)")
		t := table{cols: []column{{head: "mark"}, {head: "time"}, {head: "heap in use"}, {head: "blocks"},
			{head: "allocs"}, {head: "frees"}, {head: "thread"}, {head: "label", left: true}}}
		for _, m := range tl.Marks {
			th := "outside"
			if m.Thread >= 0 {
				th = strconv.Itoa(m.Thread)
			}
			t.add(strconv.Itoa(m.Gen), seconds(m.NS), num(m.Bytes), num(m.Blocks), num(m.Allocs), num(m.Frees), th, strconv.Quote(m.Label))
		}
		t.write(w)
	}
	if len(tl.Regions) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "REGIONS: when each ran (consecutive runs merged)")
		t := table{cols: []column{{head: "from"}, {head: "to"}, {head: "runs"}, {head: "thread"}, {head: "region", left: true}}}
		for _, r := range tl.Regions {
			t.add(seconds(r.T0), seconds(r.T1), num(r.Count), strconv.Itoa(r.Thread), strconv.Quote(r.Label))
		}
		t.write(w)
	}
}

// seconds formats ns as seconds, with ms precision below 10 s.
func seconds(ns uint64) string {
	s := float64(ns) / 1e9
	if s < 10 {
		return strconv.FormatFloat(s, 'f', 3, 64) + " s"
	}
	return strconv.FormatFloat(s, 'f', 1, 64) + " s"
}

// textPeak writes the contexts that held the heap at its peak:
//
//	peak: 104,857,600 bytes in 100 blocks at 1.234 s
//	     bytes  blocks  %peak  chain
//	52,428,800      50   50.0  grow <- main
func textPeak(w *bufio.Writer, r *Report) {
	pk := r.Peak
	fmt.Fprintln(w, "HEAP AT THE PEAK: what held the heap at its peak, by partial call chain (innermost first)")
	fmt.Fprintln(w)
	if pk.Peak.Bytes == 0 && len(pk.Contexts) == 0 {
		fmt.Fprintln(w, "No heap peak recorded.")
		return
	}
	fmt.Fprintf(w, "Peak: %s bytes in %s blocks at %s (exact).\n", num(pk.Peak.Bytes), num(pk.Peak.Blocks), seconds(pk.Peak.NS))
	share := "%peak" // the contexts' Pct is of the snapshot's bytes
	if pk.Snapshot.Bytes != pk.Peak.Bytes {
		share = "%snap"
		fmt.Fprintf(w, "Contexts recorded at %s bytes in %s blocks at %s: a snapshot is taken when the heap\n"+
			"exceeds the last by %s, so this is within %s of the peak; %s is of the snapshot's bytes.\n",
			num(pk.Snapshot.Bytes), num(pk.Snapshot.Blocks), seconds(pk.Snapshot.NS),
			formatTolerance(pk.Tolerance), formatTolerance(pk.Tolerance), share)
	}
	fmt.Fprintln(w)
	if len(pk.Contexts) == 0 {
		fmt.Fprintln(w, "No contexts recorded.")
		return
	}
	t := table{cols: []column{{head: "bytes"}, {head: "blocks"}, {head: share}, {head: "chain", left: true}}}
	for _, c := range pk.Contexts {
		t.add(num(c.Bytes), num(c.Blocks), pct1(c.Pct), chainText(r, c.Chain, c.Hidden))
	}
	t.write(w)
}
