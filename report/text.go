package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/weave-profiler/weave/profile"
)

func init() { Register("text", textRenderer{}) }

// textRenderer writes the report as plain-text tables that fit in 100
// columns, except for long function names and leak chains, which come last
// on their lines.
type textRenderer struct{}

// maxWidth is the terminal width the text report is laid out for.
const maxWidth = 100

func (textRenderer) Render(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	textHeader(bw, r)
	for _, t := range r.Tables {
		bw.WriteString("\n")
		switch t {
		case TableLeaks:
			textLeaks(bw, r)
		case TableBins:
			textBins(bw, r)
		case TableDirect:
			textDirect(bw, r)
		case TableGraph:
			textGraph(bw, r)
		case TableFlat:
			textFlat(bw, r)
		case TableTimeGraph:
			textTimeGraph(bw, r)
		case TableTree:
			textTree(bw, r)
		case TableSegments:
			textSegments(bw, r)
		case TableTimeline:
			textTimeline(bw, r)
		case TablePeak:
			textPeak(bw, r)
		}
	}
	return bw.Flush()
}

// textHeader writes the program, the run and the totals:
//
//	weave memory profile of ./widgets 10000
//	pid 4242, 1 thread, ran 0.250 s
//
//	               blocks        bytes
//	allocated      10,000    2,040,000
//	...
func textHeader(w *bufio.Writer, r *Report) {
	title := "weave " + r.profileKind() + " profile"
	if r.Program != "" {
		title += " of " + r.Program
	}
	if r.Runs > 0 {
		title += fmt.Sprintf(", the sum of %s:", plural(r.Runs, "profile"))
	}
	fmt.Fprintln(w, title)
	for _, s := range r.Sources {
		fmt.Fprintln(w, "  "+s)
	}
	if more := r.Runs - len(r.Sources); r.Runs > 0 && more > 0 {
		fmt.Fprintf(w, "  ... and %s more\n", num(uint64(more)))
	}
	var facts []string
	if pid := r.Metadata["pid"]; pid != "" {
		facts = append(facts, "pid "+pid)
	}
	facts = append(facts, plural(r.Totals.Threads, "thread"))
	start, err1 := strconv.ParseInt(r.Metadata["start_ns"], 10, 64)
	end, err2 := strconv.ParseInt(r.Metadata["end_ns"], 10, 64)
	switch {
	case r.Runs > 0:
		facts = append(facts, fmt.Sprintf("%s, %.3f s of run time in all", plural(r.Runs, "run"), time.Duration(r.RunNS).Seconds()))
	case err1 == nil && err2 == nil && end >= start:
		facts = append(facts, fmt.Sprintf("ran %.3f s", time.Duration(end-start).Seconds()))
	}
	fmt.Fprintln(w, strings.Join(facts, ", "))
	if s := statusLine(r); s != "" {
		fmt.Fprintln(w, s)
	}
	if pc := r.Metadata["pointcut"]; pc != "" {
		fmt.Fprintf(w, "pointcut: %s\n", pc)
	}
	if s := framesLine(r); s != "" {
		fmt.Fprintln(w, s)
	}
	if r.Time != nil {
		textTimeSummary(w, r)
	}
	if !r.hasMemory() {
		return
	}
	if b := r.Between; b != nil {
		fmt.Fprintf(w, "\nBETWEEN MARKS: %s bytes in %s blocks allocated after mark %s and still live at mark %s\n",
			num(b.Bytes), num(b.Blocks), b.From, b.To)
		return
	}
	fmt.Fprintln(w)
	t := table{cols: []column{{left: true}, {head: "blocks"}, {head: "bytes"}}}
	tt := r.Totals
	t.add("allocated", num(tt.Allocs), num(tt.BytesAllocated))
	if tt.HiddenAllocs > 0 {
		t.add("  of which hidden", num(tt.HiddenAllocs), num(tt.HiddenBytes))
	}
	// A Go profile's frees are the collector's, exact for the blocks the
	// runtime follows and estimated from its sampled heap profile for the
	// others (maps, strings): the rows say so themselves.
	freed, inUse := "freed", "in use at exit"
	if r.Metadata["lang"] == "go" && r.Metadata["go_inuse_exact"] != "1" {
		freed, inUse = "freed (estimated)", "in use at exit (estimated)"
		if strings.HasPrefix(r.Metadata["go_inuse"], "exact for ") {
			freed, inUse = "freed (partly estimated)", "in use at exit (partly estimated)"
		}
	}
	t.add(freed, num(tt.Frees), num(tt.BytesFreed))
	t.add(inUse, num(tt.BlocksInUse), num(tt.BytesInUse))
	if tt.LeakKinds != nil {
		for k := range profile.NumLeakKinds {
			c := tt.LeakKinds.Kind(k)
			t.add("  "+profile.LeakKindTitles[k], num(c.Blocks), num(c.Bytes))
		}
		if u := tt.LeakKinds.Unclassified; u != (KindCount{}) {
			t.add("  not classified", num(u.Blocks), num(u.Bytes))
		}
	}
	t.write(w)
	for _, n := range countNotes(r) {
		fmt.Fprintf(w, "(%s)\n", n)
	}
	if tt.HiddenAllocs > 0 {
		fmt.Fprintln(w, "(hidden: allocated by code that was not woven, e.g. the C library, charged to its woven caller)")
	}
	if r.Metadata["malloc"] == "valgrind" {
		fmt.Fprintln(w, "(allocations and frees by code that was not woven were not seen: the program ran under valgrind, whose malloc and free replace weave's; in use at exit counts blocks that code may have freed: read memcheck's totals and leak check, or run valgrind with --soname-synonyms=somalloc=nouserintercepts, under which weave sees every call)")
	} else if r.Metadata["frees_seen"] == "0" {
		fmt.Fprintln(w, "(allocations and frees by code that was not woven were not seen: the process's malloc and free were not weave's, as in a static link, a woven library in a program that was not woven, or a run under valgrind; in use at exit counts blocks that code may have freed)")
	} else if r.Metadata["hidden"] == "0" {
		fmt.Fprintln(w, "(allocations by code that was not woven were not recorded: WEAVE_HIDDEN=0)")
	}
	if r.Metadata["lang"] == "go" { // goweave/rt: Go has no free
		fmt.Fprintf(w, "(Go: allocated and calls are %s; freed and in use are %s)\n", r.Metadata["go_counts"], r.Metadata["go_inuse"])
	}
}

// textGoroutines lists the goroutines a Go program left in woven code at
// exit (goweave/rt's go_goroutine_N metadata): a Go program's leaks are
// more often goroutines blocked for ever than blocks.
func textGoroutines(w *bufio.Writer, r *Report) {
	var chains []string
	for i := 0; ; i++ {
		c, ok := r.Metadata["go_goroutine_"+strconv.Itoa(i)]
		if !ok {
			break
		}
		chains = append(chains, c)
	}
	if len(chains) == 0 {
		return
	}
	fmt.Fprintf(w, "%s in woven code at exit, where each was (under its spawner's chain when a woven go statement started it):\n", plural(len(chains), "goroutine"))
	for _, c := range chains {
		fmt.Fprintf(w, "  %s\n", c)
	}
	fmt.Fprintln(w)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// textLeaks writes the memory leak table:
//
//	bytes kept  %kept  blocks kept  allocs  frees  chain
//	 1,023,876  100.0        5,019   5,019      0  make_widget <- make_red_widget <- main
func textLeaks(w *bufio.Writer, r *Report) {
	deep := "whole chains"
	if r.Depth > 0 {
		deep = fmt.Sprintf("up to %d deep", r.Depth)
	}
	scanned := r.Totals.LeakKinds != nil
	by := ""
	if scanned {
		by = " and leak kind"
	}
	if b := r.Between; b != nil {
		fmt.Fprintf(w, "BLOCKS BETWEEN MARKS: allocated after mark %s, live at mark %s, by partial call chain (innermost first, %s)\n\n",
			strconv.Quote(b.From.Label), strconv.Quote(b.To.Label), deep)
		if len(r.Leaks) == 0 {
			fmt.Fprintln(w, "None: every block allocated after the first mark was freed by the second.")
			return
		}
	} else if r.Metadata["lang"] == "go" {
		// Go frees what is unreachable: what it kept is reachable.
		fmt.Fprintf(w, "IN USE AT EXIT: blocks the collection at exit kept (reachable: from globals, running goroutines), by partial call chain (innermost first, %s)\n\n", deep)
		textGoroutines(w, r)
		if len(r.Leaks) == 0 && r.Metadata["go_inuse_exact"] != "1" {
			fmt.Fprintf(w, "None found; estimated, not exact: %s.\n", r.Metadata["go_inuse"])
			return
		}
	} else if r.Metadata["frees_seen"] == "0" {
		fmt.Fprintf(w, "IN USE AT EXIT: blocks not seen freed (code that was not woven may have freed them), by partial call chain%s (innermost first, %s)\n\n", by, deep)
	} else {
		fmt.Fprintf(w, "MEMORY LEAKS: blocks never freed, by partial call chain%s (innermost first, %s)\n\n", by, deep)
	}
	if len(r.Leaks) == 0 {
		if scanned && r.Totals.BlocksInUse > 0 {
			fmt.Fprintln(w, "No blocks of the kinds asked for.")
			return
		}
		fmt.Fprintln(w, "No leaks: every block allocated was freed.")
		return
	}
	t := table{cols: []column{
		{head: "bytes kept"}, {head: "%kept"}, {head: "blocks kept"}, {head: "allocs"}, {head: "frees"},
		{head: "chain", left: true},
	}}
	if scanned {
		t.cols = slices.Insert(t.cols, 3, column{head: "kind", left: true})
	}
	// A chain's allocs and frees are of all its blocks, whatever their
	// kind: on its first row only, so that the columns add up.
	seen := map[string]bool{}
	for _, l := range r.Leaks {
		chain := chainText(r, l.Chain, l.Hidden)
		cells := []string{num(l.BytesKept), pct1(l.PctKept), num(l.BlocksKept), num(l.Allocs), num(l.Frees), chain}
		if scanned {
			if seen[chain] {
				cells[3], cells[4] = "", ""
			}
			seen[chain] = true
			cells = slices.Insert(cells, 3, l.Kind)
		}
		t.add(cells...)
	}
	t.write(w)
	if scanned && len(seen) < len(r.Leaks) {
		fmt.Fprintln(w, "(allocs, frees: of the chain, all its kinds, on its first row)")
	}
}

// chainText writes a leak-table chain: "make_widget <- main", the
// innermost function marked (hidden) for a library's allocations.
func chainText(r *Report, frames []Frame, hidden bool) string {
	var chain []string
	for i, f := range frames {
		s := r.Label(f.Func)
		switch {
		case f.Site != "":
			s = f.Name + " (" + f.Site + ")" // the site tells static functions apart
		case i == 0 && hidden:
			s += " (hidden)"
		}
		chain = append(chain, s)
	}
	return strings.Join(chain, " <- ")
}

// textBins writes the allocation bin table:
//
//	size  allocs  %allocs      bytes  %bytes  frees  bytes kept  %kept  types
//	 204  10,000    100.0  2,040,000   100.0  4,981   1,023,876  100.0  struct widget
func textBins(w *bufio.Writer, r *Report) {
	fmt.Fprintln(w, "ALLOCATION BINS: requests by size; types: of the sites whose size expression names a type of")
	fmt.Fprintln(w, "that size (sizeof(T), 4 * sizeof(T)); untyped: the others (no sizeof, or a run-time count)")
	fmt.Fprintln(w)
	if len(r.Bins) == 0 {
		fmt.Fprintln(w, "No allocations.")
		return
	}
	t := table{cols: []column{
		{head: "size"}, {head: "allocs"}, {head: "%allocs"}, {head: "bytes"}, {head: "%bytes"},
		{head: "frees"}, {head: "bytes kept"}, {head: "%kept"}, {head: "types", left: true},
	}}
	for _, b := range r.Bins {
		size := strconv.Itoa(b.Size)
		if b.Size == profile.LargeBin {
			size = ">1024"
		}
		t.add(size, num(b.Allocs), pct1(b.PctAllocs), num(b.Bytes), pct1(b.PctBytes),
			num(b.Frees), num(b.BytesKept), pct1(b.PctKept), binTypes(b))
	}
	t.write(w)
	if s := runTimeTypes(r); s != "" {
		fmt.Fprintln(w, s)
	}
}

// runTimeTypes says which types of a run-time count the bins leave out,
// or "".
func runTimeTypes(r *Report) string {
	if len(r.RunTimeTypes) == 0 {
		return ""
	}
	var l []string
	for _, t := range r.RunTimeTypes {
		l = append(l, fmt.Sprintf("%s (%s)", t.Type, num(t.Allocs)))
	}
	return "types of a run-time count, in no bin (allocs): " + strings.Join(l, ", ")
}

// binTypes is a bin's types column: its types, then how many of its
// allocations are untyped.
func binTypes(b Bin) string {
	l := slices.Clone(b.Types)
	if b.Untyped > 0 {
		l = append(l, num(b.Untyped)+" untyped")
	}
	return strings.Join(l, ", ")
}

// textDirect writes the direct allocation table:
//
//	                                    ---- %mem ----  ---- %kept ---
//	 %mem      bytes  bytes kept   calls   s   m   l   x   s   m   l   x  function
//	100.0  2,040,000   1,023,876  10,000     100             100          <total>
func textDirect(w *bufio.Writer, r *Report) {
	fmt.Fprintln(w, "DIRECT ALLOCATION: what each function allocated itself, by calling the allocator")
	fmt.Fprintln(w, "(%mem, %kept: of all bytes allocated, of all bytes kept, by size class s m l x)")
	fmt.Fprintln(w)
	t := table{
		cols: slices.Concat(
			[]column{{head: "%mem"}, {head: "bytes"}, {head: "bytes kept"}, {head: "calls"}},
			classCols(), classCols(),
			[]column{{head: "function", left: true}}),
		spans: []span{{"%mem", 4, 7}, {"%kept", 8, 11}},
	}
	row := func(d *DirectRow, name string) {
		cells := []string{pct1(d.PctMem), num(d.Bytes), num(d.BytesKept), num(d.Calls)}
		cells = append(cells, classPcts(d.PctMemSize)...)
		cells = append(cells, classPcts(d.PctKeptSize)...)
		t.add(append(cells, name)...)
	}
	row(&r.Direct.Total, "<total>")
	for i := range r.Direct.Functions {
		d := &r.Direct.Functions[i]
		name := r.Label(*d.Func)
		if d.Hidden {
			name += " (hidden)"
		}
		row(d, name)
	}
	t.write(w)
}

// textGraph writes the allocation call graph, gprof style:
//
//	                                                -- size % --
//	index   %s+d  self+desc  self  called       s   m   l   x   frac  name
//	...
func textGraph(w *bufio.Writer, r *Report) {
	fmt.Fprint(w, `ALLOCATION CALL GRAPH: an entry per function (or cycle of recursive functions) on a path
to an allocation: its callers, its own [index] line, its callees.
  entry line:   self+desc = bytes allocated by it and its callees, self = by itself,
                called = its calls (+ calls from within its cycle or itself)
  caller line:  bytes it allocated on behalf of that caller, calls from it / all calls
  callee line:  bytes the callee allocated on its behalf, calls to it / all its calls
  frac = share of the entry's self+desc; s m l x = % of bytes by size class
`)
	if slices.ContainsFunc(r.Graph, func(e Entry) bool { return e.NotCounted }) {
		fmt.Fprintln(w, notCountedLegend)
	}
	if slices.ContainsFunc(r.Graph, func(e Entry) bool { return e.AtCalls }) {
		fmt.Fprintln(w, atCallsLegend)
	}
	fmt.Fprintln(w)
	if len(r.Graph) == 0 {
		fmt.Fprintln(w, "No allocations.")
		return
	}
	t := table{
		cols: slices.Concat(
			[]column{{head: "index", left: true}, {head: "%s+d"}, {head: "self+desc"}, {head: "self"}},
			classCols(),
			[]column{{head: "frac"}, {head: "called"}, {head: "name", left: true}}),
		spans: []span{{"size %", 4, 7}},
	}
	arc := func(a *Arc) {
		cells := []string{"", "", num(a.Bytes), ""}
		cells = append(cells, classPcts(a.BySize.Pct())...)
		cells = append(cells, pct0(100*a.Frac)+"%", arcCalls(a.Calls, a.TotalCalls, a.NotCounted, a.AtCalls),
			fmt.Sprintf("  %s [%d]", a.Name, a.Index))
		t.add(cells...)
	}
	for i := range r.Graph {
		e := &r.Graph[i]
		addEntryRows(&t, e.Callers, e.Callees, arc, e.Calls, e.Recursive, e.NotCounted, e.AtCalls, func(called string) {
			cells := []string{fmt.Sprintf("[%d]", e.Index), pct1(e.PctSelfDesc), num(e.SelfDesc), num(e.Self)}
			cells = append(cells, classPcts(e.SelfBySize.Pct())...)
			cells = append(cells, "", called, fmt.Sprintf("%s [%d]", e.Name, e.Index))
			t.add(cells...)
			for _, m := range e.Members {
				cells := []string{"", "", "", num(m.Self)}
				cells = append(cells, classPcts(m.SelfBySize.Pct())...)
				cells = append(cells, "", num(m.Calls), fmt.Sprintf("  %s %s [%d]", m.Label, e.Name, e.Index))
				t.add(cells...)
			}
		})
	}
	t.rule()
	t.write(w)
}

// addEntryRows adds a gprof-style entry's rows to t, for both call graphs:
// its callers, its own lines (written by own, given its "called" cell),
// its callees.
func addEntryRows[A any](t *table, callers, callees []A, arc func(*A), calls, recursive uint64, notCounted, atCalls bool, own func(called string)) {
	t.rule()
	for i := range callers {
		arc(&callers[i])
	}
	called := num(calls)
	if recursive > 0 {
		called += "+" + num(recursive)
	}
	if notCounted {
		called = NotCounted
	}
	own(called + atCallsMark(atCalls))
	for i := range callees {
		arc(&callees[i])
	}
}

// framesLine says in one line how many functions --frames auto left
// without a frame at their entry, or "".
func framesLine(r *Report) string {
	var l []string
	if r.Frameless > 0 {
		l = append(l, plural(r.Frameless, "function")+" frameless (calls not counted)")
	}
	if r.CallFramed > 0 {
		l = append(l, plural(r.CallFramed, "function")+" framed at their calls (those calls counted)")
	}
	if len(l) == 0 {
		return ""
	}
	return "frames auto: " + strings.Join(l, ", ") + "; weave -v lists and explains them"
}

// notCountedLegend explains NotCounted under a table that has it.
const notCountedLegend = "  not counted: the calls of a frameless function (weave --frames auto; weave -v lists them)"

// atCallsLegend explains the mark atCallsMark puts on counts.
const atCallsLegend = profile.AtCallsLegend

// atCallsMark marks the count of a function framed at its calls.
func atCallsMark(atCalls bool) string {
	if atCalls {
		return "*"
	}
	return ""
}

// NotCounted is what the call graphs say for the calls of a frameless
// function, which were not counted.
const NotCounted = "not counted"

// arcCalls is an arc's "called" cell: calls over it / all the callee's.
func arcCalls(calls, total uint64, notCounted, atCalls bool) string {
	if notCounted {
		return NotCounted
	}
	return num(calls) + "/" + num(total) + atCallsMark(atCalls)
}

// num formats n with thousands separators: 1,023,876.
func num(n uint64) string {
	s := strconv.FormatUint(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// pct1 formats a percentage with one decimal.
func pct1(p float64) string { return strconv.FormatFloat(p, 'f', 1, 64) }

// pct0 formats a percentage as a whole number, "<1" below 1 and never 100
// unless it is all.
func pct0(p float64) string {
	r := math.Round(p)
	switch {
	case r == 0 && p > 0:
		return "<1"
	case r == 100 && p < 100:
		return "99"
	}
	return strconv.Itoa(int(r))
}

// classPcts formats a size breakdown with pct0, blank for 0.
func classPcts(p PctBySize) []string {
	out := make([]string, len(p))
	for i, v := range p {
		if v != 0 {
			out[i] = pct0(v)
		}
	}
	return out
}

// table lays out rows of cells in columns two spaces apart, right-aligned
// unless the column says left; the last column is not padded.
type table struct {
	cols  []column
	spans []span     // titles over groups of columns
	rows  [][]string // nil is a rule
}

type column struct {
	head  string
	left  bool
	min   int  // minimum width
	tight bool // one space before the column, not two
}

// classCols are the columns of a size breakdown, s m l x.
func classCols() []column {
	var c []column
	for i, n := range profile.ClassNames {
		c = append(c, column{head: n, min: 3, tight: i > 0})
	}
	return c
}

// span is a title centered over columns from..to, inclusive.
type span struct {
	title    string
	from, to int
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }
func (t *table) rule()               { t.rows = append(t.rows, nil) }

// gap returns the number of spaces before column i.
func (t *table) gap(i int) int {
	if t.cols[i].tight {
		return 1
	}
	return 2
}

func width(s string) int { return utf8.RuneCountInString(s) }

func (t *table) write(w *bufio.Writer) {
	widths := make([]int, len(t.cols))
	for i, c := range t.cols {
		widths[i] = max(c.min, width(c.head))
	}
	for _, row := range t.rows {
		for i, cell := range row {
			widths[i] = max(widths[i], width(cell))
		}
	}
	// Widen the last column of a span whose title does not fit.
	spanWidth := func(s span) int {
		n := 0
		for i := s.from; i <= s.to; i++ {
			n += widths[i]
		}
		for i := s.from + 1; i <= s.to; i++ {
			n += t.gap(i)
		}
		return n
	}
	for _, s := range t.spans {
		if need := width(s.title) + 4; spanWidth(s) < need {
			widths[s.to] += need - spanWidth(s)
		}
	}
	line := func(cells []string) {
		var b strings.Builder
		for i, cell := range cells {
			if i > 0 {
				b.WriteString(strings.Repeat(" ", t.gap(i)))
			}
			pad := strings.Repeat(" ", widths[i]-width(cell))
			switch {
			case !t.cols[i].left:
				b.WriteString(pad + cell)
			case i < len(cells)-1:
				b.WriteString(cell + pad)
			default:
				b.WriteString(cell)
			}
		}
		w.WriteString(strings.TrimRight(b.String(), " "))
		w.WriteByte('\n')
	}
	if len(t.spans) > 0 {
		var b strings.Builder
		col := 0 // the column b has reached
		for _, s := range t.spans {
			for ; col < s.from; col++ {
				b.WriteString(strings.Repeat(" ", widths[col]+t.gap(col+1)))
			}
			sw := spanWidth(s)
			title := " " + s.title + " "
			left := (sw - width(title)) / 2
			b.WriteString(strings.Repeat("-", left) + title + strings.Repeat("-", sw-left-width(title)))
			col = s.to
			if col+1 < len(widths) {
				b.WriteString(strings.Repeat(" ", t.gap(col+1)))
			}
			col++
		}
		w.WriteString(strings.TrimRight(b.String(), " "))
		w.WriteByte('\n')
	}
	heads := make([]string, len(t.cols))
	for i, c := range t.cols {
		heads[i] = c.head
	}
	line(heads)
	full := 0
	for i, wd := range widths {
		full += wd
		if i > 0 {
			full += t.gap(i)
		}
	}
	for _, row := range t.rows {
		if row == nil {
			w.WriteString(strings.Repeat("-", min(full, maxWidth)) + "\n")
			continue
		}
		line(row)
	}
}

// commas writes a decimal number as num does ("1,234"); other text as it is.
func commas(s string) string {
	if n, err := strconv.ParseUint(s, 10, 64); err == nil {
		return num(n)
	}
	return s
}

// statusLine says when a profile's counts stop before the program's end:
// a checkpoint (WEAVE_CHECKPOINT) or snapshot (weave snapshot) written
// while it ran, or a crash; "" for a run that ended.
func statusLine(r *Report) string {
	start, err1 := strconv.ParseInt(r.Metadata["start_ns"], 10, 64)
	end, err2 := strconv.ParseInt(r.Metadata["end_ns"], 10, 64)
	switch how := map[string]string{"checkpoint": "CHECKPOINT", "snapshot": "SNAPSHOT"}[r.Metadata["end"]]; {
	case how != "" && err1 == nil && err2 == nil && end >= start:
		return fmt.Sprintf("%s: written while the program ran, %.3f s after it started (%s); counts stop there",
			how, time.Duration(end-start).Seconds(), time.Unix(0, end).UTC().Format("2006-01-02 15:04:05 UTC"))
	case !r.Complete:
		return "INCOMPLETE: written when the program crashed or aborted; counts stop there"
	}
	return ""
}

// countNotes are the runtime's counts of what the totals leave out: the
// allocations it had no memory to record, and those the C library refused.
func countNotes(r *Report) []string {
	var notes []string
	if u := strings.Fields(r.Metadata["unrecorded"]); len(u) == 2 {
		notes = append(notes, fmt.Sprintf("not recorded: %s allocs, %s bytes: the runtime ran out of memory for its tables, an address space full under ulimit -v; not in these totals", commas(u[0]), commas(u[1])))
	}
	if n := r.Metadata["alloc_refused"]; n != "" {
		notes = append(notes, fmt.Sprintf("refused: %s allocs returned NULL by the C library", commas(n)))
	}
	return notes
}
