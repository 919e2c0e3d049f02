package report

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The text layout of the time tables (see text.go for the memory tables).

// profileKind names what the report holds, for its title: "memory",
// "time", or "memory and time".
func (r *Report) profileKind() string {
	mem, tim := false, false
	for _, t := range r.Tables {
		switch {
		case slices.Contains(MemoryTables, t):
			mem = true
		case slices.Contains(TimeTables, t):
			tim = true
		}
	}
	switch {
	case tim && mem:
		return "memory and time"
	case tim:
		return "time"
	}
	return "memory"
}

// hasMemory reports whether a memory table is selected.
func (r *Report) hasMemory() bool {
	for _, t := range r.Tables {
		if slices.Contains(MemoryTables, t) {
			return true
		}
	}
	return false
}

// textTimeSummary writes the time lines of the header:
//
//	time: exact mode (wall-clock, tsc clock): 1.23s in 1 thread, 0.1% outside woven functions
//	instrumentation overhead: 208ms (20.8ns per call, 14.5% of the run), measured and subtracted
//	note: 2 calling contexts uncompensated: subtracting would leave less than zero (a busy machine)
func textTimeSummary(w *bufio.Writer, r *Report) {
	tm := r.Time
	if tm == nil || tm.TotalNS == 0 && tm.Mode == "" {
		fmt.Fprintln(w, "time: none in this profile (the program ran with WEAVE_TIME=off)")
		return
	}
	var how []string
	switch tm.Mode {
	case "exact":
		how = append(how, "wall-clock")
	case "sampled":
		if tm.Clock == "goroutine_wall" { // Go: goroutines sampled where they are, running or blocked
			how = append(how, "wall-clock of goroutines in woven code")
		} else {
			how = append(how, "CPU time")
		}
	}
	if tm.Clock != "" && tm.Clock != "thread_cputime" && tm.Clock != "goroutine_wall" {
		how = append(how, tm.Clock+" clock")
	}
	if tm.Mode == "sampled" {
		how = append(how, plural(int(tm.Samples), "sample"))
	}
	mode := "time:"
	if tm.Mode != "" {
		mode = "time: " + tm.Mode + " mode"
		if len(how) > 0 {
			mode += " (" + strings.Join(how, ", ") + ")"
		}
		mode += ":"
	}
	where := "in " + plural(len(tm.Threads), "thread")
	if tm.Clock == "goroutine_wall" {
		where = "in woven code" // goroutines' wall-clock time: no thread count means anything
	}
	fmt.Fprintf(w, "%s %s %s, %s%% outside woven functions\n", mode, dur(float64(tm.TotalNS)),
		where, pct1(pct(tm.OutsideNS, tm.TotalNS)))
	if r.MainUnframed && tm.OutsideNS*20 > tm.TotalNS {
		// Over 5% there, of which main's own work may be most.
		fmt.Fprintln(w, "note: main has no frame of its own (--frames auto framed it at its calls, or not at all): its time, and that of the frameless functions it calls, is counted outside woven functions; weave cc --frame main gives it one")
	}
	if rest := tm.ProcessCPUNS - min(tm.ProcessCPUNS, tm.TotalNS); rest > 1e6 && rest*20 > tm.ProcessCPUNS {
		// Over 5% and 1 ms of the process's CPU is in no table.
		fmt.Fprintf(w, "note: the process used %s of CPU; %s of it is in no table: threads that never ran a framed function nor allocated (build with --frame on their start routine to see them), and work before weave started\n",
			dur(float64(tm.ProcessCPUNS)), dur(float64(rest)))
	}
	if len(tm.Threads) > 1 {
		// The busiest threads first: "T2 1.20s, T0 10.0ms, ... and 3 more".
		ts := slices.Clone(tm.Threads)
		slices.SortStableFunc(ts, func(x, y ThreadTime) int { return cmp.Compare(y.TotalNS, x.TotalNS) })
		var parts []string
		for i, th := range ts {
			if i == 6 {
				parts = append(parts, fmt.Sprintf("and %d more", len(ts)-i))
				break
			}
			parts = append(parts, fmt.Sprintf("T%d %s", th.ID, dur(float64(th.TotalNS))))
		}
		fmt.Fprintf(w, "per thread: %s\n", strings.Join(parts, ", "))
	}
	if tm.Mode == "exact" {
		fmt.Fprintf(w, "instrumentation overhead: %s (%s per call, %s%% of the run), measured and subtracted\n",
			dur(float64(tm.OverheadNS)), dur(tm.CallOverheadNS), pct1(pct(tm.OverheadNS, tm.TotalNS+tm.OverheadNS)))
		if tm.Clamped > 0 {
			fmt.Fprintf(w, "note: %s uncompensated: subtracting would leave less than zero (a busy machine)\n",
				plural(int(tm.Clamped), "calling context"))
		}
	}
	if tm.Mode == "sampled" && tm.Samples < 100 && (tm.Signal == "SIGURG" || tm.Sampler == "thread" || tm.Clock == "goroutine_wall") {
		fmt.Fprintf(w, "note: %s: the split among functions is rough (WEAVE_TIME=exact splits short runs exactly)\n",
			plural(int(tm.Samples), "sample"))
	}
	switch {
	case strings.HasPrefix(tm.Sampler, "stopped"):
		fmt.Fprintf(w, "WARNING: the sampler stopped (%s): no samples after, each thread's time since charged to where it ended (see docs/timing.md)\n",
			strings.TrimSpace(strings.TrimPrefix(tm.Sampler, "stopped")))
	case strings.HasPrefix(tm.Sampler, "none"):
		fmt.Fprintf(w, "WARNING: no sampler (%s): each thread's time is charged to where it ended\n", strings.TrimSpace(strings.TrimPrefix(tm.Sampler, "none")))
	}
	switch tm.Signal {
	case "busy":
		fmt.Fprintln(w, "WARNING: the program handled SIGURG itself: no samples; all time is charged at thread exit")
	case "replaced":
		fmt.Fprintln(w, "WARNING: the program took SIGURG over: samples stopped there")
	}
}

// noTime writes the line of a time table when the profile has no times.
func noTime(w *bufio.Writer, r *Report) bool {
	if r.Time == nil || r.Time.TotalNS == 0 {
		fmt.Fprintln(w, "No timing data (the program ran with WEAVE_TIME=off).")
		return true
	}
	return false
}

// thresholdNote says how many lines the threshold hid: "1 function", "2
// functions" (one, many).
func thresholdNote(w *bufio.Writer, r *Report, n int, one, many string) {
	if n > 0 {
		what := many
		if n == 1 {
			what = one
		}
		fmt.Fprintf(w, "(%d %s below %s%% of all time not shown; --threshold 0 shows all)\n",
			n, what, strconv.FormatFloat(r.Time.Threshold, 'f', -1, 64))
	}
}

// textFlat writes the flat profile, gprof's columns:
//
//	%time  cumulative    self   calls  self/call  total/call   total  name
//	 50.0       600ms   600ms      10     60.0ms      60.0ms   600ms  work3
func textFlat(w *bufio.Writer, r *Report) {
	w.WriteString(`FLAT PROFILE: time per function, summed over calling contexts and threads
  self = in the function itself; total = with its callees (outermost activations only);
  cumulative = self of this line and those above; total/call = per outermost call

`)
	if noTime(w, r) {
		return
	}
	t := table{cols: []column{
		{head: "%time"}, {head: "cumulative"}, {head: "self"}, {head: "calls"},
		{head: "self/call"}, {head: "total/call"}, {head: "total"}, {head: "name", left: true},
	}}
	hidden, atCalls, uncounted := 0, false, false
	for i := range r.Time.Functions {
		f := &r.Time.Functions[i]
		if !r.Time.shown(f.SelfNS) && !r.Time.shown(f.TotalNS) {
			hidden++
			continue
		}
		atCalls = atCalls || f.AtCalls
		uncounted = uncounted || f.NotCounted
		calls := num(f.Calls) + atCallsMark(f.AtCalls)
		if f.NotCounted {
			calls = NotCounted
		}
		t.add(pct1(f.PctSelf), dur(float64(f.CumulativeNS)), dur(float64(f.SelfNS)), calls,
			durCall(f.SelfPerCallNS, f.Calls), durCall(f.TotalPerCallNS, f.OuterCalls), dur(float64(f.TotalNS)),
			r.Label(f.Func))
	}
	if r.Time.OutsideNS > 0 && r.Time.shown(r.Time.OutsideNS) {
		t.add(pct1(pct(r.Time.OutsideNS, r.Time.TotalNS)), "", dur(float64(r.Time.OutsideNS)), "", "", "", "",
			"<outside woven functions>")
	}
	t.write(w)
	if uncounted {
		fmt.Fprintln(w, notCountedLegend)
	}
	if atCalls {
		fmt.Fprintln(w, atCallsLegend)
	}
	thresholdNote(w, r, hidden, "function", "functions")
}

// textTimeGraph writes the time call graph, gprof style.
func textTimeGraph(w *bufio.Writer, r *Report) {
	w.WriteString(`TIME CALL GRAPH: an entry per function (or cycle of recursive functions): its callers,
its own [index] line, its callees. Times are exact per arc (from the calling-context tree).
  entry line:   %total = its time with its callees, of all time; self = in itself,
                children = in its callees; called = its calls (+ calls from within itself)
  caller line:  its time when called from that caller; calls from it / all its calls
  callee line:  the callee's time when called from it; calls to it / all the callee's calls

`)
	if noTime(w, r) {
		return
	}
	t := table{cols: []column{
		{head: "index", left: true}, {head: "%total"}, {head: "self"}, {head: "children"},
		{head: "called", left: true}, {head: "name", left: true},
	}}
	uncounted, atCalls := false, false // a "not counted" or "*" shown: the legends go below
	arc := func(a *TimeArc) {
		called := ""
		if a.Index > 0 {
			called = arcCalls(a.Calls, a.TotalCalls, a.NotCounted, a.AtCalls)
			uncounted = uncounted || a.NotCounted
			atCalls = atCalls || a.AtCalls && !a.NotCounted
		}
		name := "  " + a.Name
		if a.Index > 0 {
			name += fmt.Sprintf(" [%d]", a.Index)
		}
		t.add("", "", dur(float64(a.SelfNS)), dur(float64(a.ChildrenNS)), called, name)
	}
	hidden := 0
	for i := range r.Time.Graph {
		e := &r.Time.Graph[i]
		if !r.Time.shown(e.SelfNS + e.Children) {
			hidden++
			continue
		}
		uncounted = uncounted || e.NotCounted
		atCalls = atCalls || e.AtCalls
		addEntryRows(&t, e.Callers, e.Callees, arc, e.Calls, e.Recursive, e.NotCounted, e.AtCalls, func(called string) {
			t.add(fmt.Sprintf("[%d]", e.Index), pct1(e.PctTotal), dur(float64(e.SelfNS)), dur(float64(e.Children)),
				called, fmt.Sprintf("%s [%d]", e.Name, e.Index))
			for _, m := range e.Members {
				t.add("", "", dur(float64(m.SelfNS)), "", num(m.Calls), fmt.Sprintf("  %s %s [%d]", m.Label, e.Name, e.Index))
			}
		})
	}
	t.rule()
	t.write(w)
	if uncounted {
		fmt.Fprintln(w, notCountedLegend)
	}
	if atCalls {
		fmt.Fprintln(w, atCallsLegend)
	}
	thresholdNote(w, r, hidden, "entry", "entries")
}

// textTree writes the calling-context tree:
//
//	total    self  calls  calling context
//	1.23s   8.0us      -  <all threads>
//	1.23s    12us      1  +- main
//	600ms   600ms     10  |  +- work3
func textTree(w *bufio.Writer, r *Report) {
	w.WriteString(`CALLING-CONTEXT TREE: the calls of every thread merged by call path
  total = in the context and below it; self = in the context itself

`)
	if noTime(w, r) || r.Time.Tree == nil {
		return
	}
	t := table{cols: []column{{head: "total"}, {head: "self"}, {head: "calls"}, {head: "calling context", left: true}}}
	// line is the prefix of n's own line, below that of its children's.
	// Past maxIndent levels the prefix stops growing, and lines say their
	// depth instead: "[depth 40] f".
	const maxIndent = 12
	uncounted, atCalls := false, false // a "not counted" or "*" shown: the legends go below
	var walk func(n *TreeNode, line, below string, depth int)
	walk = func(n *TreeNode, line, below string, depth int) {
		calls := num(n.Calls) + atCallsMark(n.AtCalls)
		switch {
		case depth == 0:
			calls = "-"
		case n.NotCounted:
			calls = NotCounted
			uncounted = true
		}
		atCalls = atCalls || n.AtCalls && !n.NotCounted
		name := n.Name
		if depth > maxIndent {
			name = fmt.Sprintf("[depth %d] %s", depth, name)
		}
		t.add(dur(float64(n.TotalNS)), dur(float64(n.SelfNS)), calls, line+name)
		for i, c := range n.Children {
			cl, cb := below+"+- ", below+"|  "
			if i == len(n.Children)-1 && n.Hidden == 0 {
				cl, cb = below+"`- ", below+"   "
			}
			if depth >= maxIndent {
				cl, cb = line, below
			}
			walk(c, cl, cb, depth+1)
		}
		if n.Hidden > 0 {
			more := fmt.Sprintf("... %s, %s", plural(n.Hidden, "more context"), dur(float64(n.HiddenNS)))
			if depth >= maxIndent {
				t.add("", "", "", fmt.Sprintf("%s[depth %d] %s", line, depth+1, more))
			} else {
				t.add("", "", "", below+"`- "+more)
			}
		}
	}
	walk(r.Time.Tree, "", "", 0)
	t.write(w)
	if uncounted {
		fmt.Fprintln(w, notCountedLegend)
	}
	if atCalls {
		fmt.Fprintln(w, atCallsLegend)
	}
}

// dur formats a duration in ns with three significant digits and a unit:
// 812ns, 3.41us, 12.0ms, 1.23s.
func dur(ns float64) string {
	if ns <= 0 {
		return "0"
	}
	units := []struct {
		name string
		size float64
	}{{"s", 1e9}, {"ms", 1e6}, {"us", 1e3}, {"ns", 1}}
	for i, u := range units {
		v := ns / u.size
		if v < 1 && i < len(units)-1 {
			continue
		}
		// Digits after the point: three significant digits as v would be
		// written (9.996 is 10.0, 999.6 is 1000: the next unit's 1.00).
		d := 2
		if math.Round(v*100) >= 1000 {
			d = 1
		}
		if math.Round(v*10) >= 1000 || u.name == "ns" && (d < 2 || v == math.Trunc(v)) {
			d = 0
		}
		if math.Round(v) >= 1000 && i > 0 {
			return strconv.FormatFloat(v/1000, 'f', 2, 64) + units[i-1].name
		}
		return strconv.FormatFloat(v, 'f', d, 64) + u.name
	}
	return "0"
}

// durCall formats a time per call; blank when there were no calls.
func durCall(ns float64, calls uint64) string {
	if calls == 0 {
		return ""
	}
	return dur(ns)
}
