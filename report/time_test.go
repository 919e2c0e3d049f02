package report

import (
	"regexp"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

var timeGoldenCases = []goldenCase{
	// Hand-written, every table (the default for a profile with times).
	{"time", "time", Options{Depth: DefaultDepth}, []string{"text", "json"}},
	// Recorded: testdata/timing/ratio.c in exact mode, fib.c and threads.c (now spinthreads.c)
	// sampled; time tables only, the command line's default threshold.
	{"time-exact", "time-exact", Options{Tables: TimeTables, Threshold: DefaultThreshold}, []string{"text", "json"}},
	{"time-sampled", "time-sampled", Options{Tables: TimeTables, Threshold: DefaultThreshold}, []string{"text"}},
	{"time-threads", "time-threads", Options{Tables: []string{TableFlat, TableTree}, Threshold: DefaultThreshold}, []string{"text"}},
}

func TestTimeGolden(t *testing.T) { checkGoldens(t, timeGoldenCases) }

func funcTime(t *testing.T, r *Report, name string) FuncTime {
	t.Helper()
	for _, f := range r.Time.Functions {
		if f.Name == name {
			return f
		}
	}
	t.Fatalf("no function %s", name)
	return FuncTime{}
}

// TestTimeModel checks the hand-written profile's numbers, worked out by
// hand: totals count outermost activations only, the cycle of f and g is
// one graph entry with exact arcs, and the threads' trees merge by path.
func TestTimeModel(t *testing.T) {
	r := build(t, load(t, "time"), Options{Tables: TimeTables})
	tm := r.Time
	if tm.Mode != "exact" || tm.TotalNS != 287 || tm.OutsideNS != 6 || tm.OverheadNS != 9 || tm.CallOverheadNS != 1 {
		t.Errorf("time %+v", tm)
	}
	if len(tm.Threads) != 2 || tm.Threads[0].TotalNS != 162 || tm.Threads[1].TotalNS != 125 || tm.Threads[1].OutsideNS != 1 {
		t.Errorf("threads %+v", tm.Threads)
	}
	for _, want := range []FuncTime{
		{Func: Func{"worker", "t.c"}, Calls: 1, OuterCalls: 1, SelfNS: 100, TotalNS: 124},
		{Func: Func{"f", "t.c"}, Calls: 9, OuterCalls: 3, SelfNS: 84, TotalNS: 164},
		{Func: Func{"h", "t.c"}, Calls: 6, OuterCalls: 6, SelfNS: 57, TotalNS: 57},
		{Func: Func{"g", "t.c"}, Calls: 3, OuterCalls: 3, SelfNS: 30, TotalNS: 120},
		{Func: Func{"main", "t.c"}, Calls: 1, OuterCalls: 1, SelfNS: 10, TotalNS: 157},
	} {
		got := funcTime(t, r, want.Name)
		if got.Calls != want.Calls || got.OuterCalls != want.OuterCalls || got.SelfNS != want.SelfNS || got.TotalNS != want.TotalNS {
			t.Errorf("%s: %+v, want %+v", want.Name, got, want)
		}
	}
	if f := tm.Functions; f[0].Name != "worker" || f[len(f)-1].CumulativeNS != 281 {
		t.Errorf("flat order or cumulative: %+v", f)
	}

	if len(tm.Graph) != 4 {
		t.Fatalf("%d graph entries, want 4", len(tm.Graph))
	}
	c := tm.Graph[0]
	if c.Name != "<cycle 1>" || c.SelfNS != 114 || c.Children != 50 || c.Calls != 3 || c.Recursive != 9 || len(c.Members) != 2 {
		t.Errorf("cycle %+v", c)
	}
	if len(c.Callers) != 2 || c.Callers[0] != (TimeArc{Index: 2, Name: "main", SelfNS: 90, ChildrenNS: 50, Calls: 2, TotalCalls: 3}) ||
		c.Callers[1] != (TimeArc{Index: 3, Name: "worker", SelfNS: 24, Calls: 1, TotalCalls: 3}) {
		t.Errorf("cycle callers %+v", c.Callers)
	}
	if len(c.Callees) != 1 || c.Callees[0] != (TimeArc{Index: 4, Name: "h", SelfNS: 50, Calls: 5, TotalCalls: 6}) {
		t.Errorf("cycle callees %+v", c.Callees)
	}
	if m := tm.Graph[1]; m.Name != "main" || m.Callers[0].Index != 0 || m.Callers[0].Name != "<spontaneous>" || len(m.Callees) != 2 {
		t.Errorf("main %+v", m)
	}
	checkTimeGraph(t, r)

	root := tm.Tree
	if root.TotalNS != 287 || root.SelfNS != 6 || len(root.Children) != 2 || root.Children[0].Name != "main" {
		t.Fatalf("tree root %+v", root)
	}
	w := root.Children[1]
	if w.Name != "worker" || w.TotalNS != 124 || len(w.Children) != 1 || w.Children[0].Children[0].Calls != 2 {
		t.Errorf("worker subtree %+v", w)
	}

	// A threshold of 30% hides h (19.9%) from the tree, the graph text and
	// the flat text; the model's function list stays whole.
	r = build(t, load(t, "time"), Options{Tables: TimeTables, Threshold: 30})
	if len(r.Time.Functions) != 5 {
		t.Errorf("functions cut by the threshold: %d", len(r.Time.Functions))
	}
	main := r.Time.Tree.Children[0]
	if len(main.Children) != 1 || main.Hidden != 1 || main.HiddenNS != 7 {
		t.Errorf("main's tree children %+v, hidden %d %d", main.Children, main.Hidden, main.HiddenNS)
	}
	text := render(t, r, "text")
	for _, want := range []string{"(1 function below 30% of all time not shown", "(1 entry below 30%", "`- ... 1 more context, 7ns"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}

// checkTimeGraph checks invariants of a time call graph: an entry's total
// is its self plus what its callees took on its behalf; its callers' arcs
// add up to its total; its calls are its callers'.
func checkTimeGraph(t *testing.T, r *Report) {
	t.Helper()
	for _, e := range r.Time.Graph {
		down := e.SelfNS
		for _, a := range e.Callees {
			down += a.SelfNS + a.ChildrenNS
		}
		if down != e.SelfNS+e.Children {
			t.Errorf("%s: self + callees %d, total %d", e.Name, down, e.SelfNS+e.Children)
		}
		var up, calls uint64
		for _, a := range e.Callers {
			up += a.SelfNS + a.ChildrenNS
			calls += a.Calls
		}
		if up != e.SelfNS+e.Children || calls != e.Calls {
			t.Errorf("%s: callers %d ns %d calls, entry %d ns %d calls", e.Name, up, calls, e.SelfNS+e.Children, e.Calls)
		}
	}
}

// TestTimeRecorded checks the recorded profiles' invariants.
func TestTimeRecorded(t *testing.T) {
	for _, name := range []string{"time-exact", "time-sampled", "time-threads"} {
		r := build(t, load(t, name), Options{Tables: TimeTables})
		checkTimeGraph(t, r)
		var self uint64
		for _, f := range r.Time.Functions {
			self += f.SelfNS
			if f.TotalNS < f.SelfNS {
				t.Errorf("%s: %s total %d < self %d", name, f.Name, f.TotalNS, f.SelfNS)
			}
		}
		if self+r.Time.OutsideNS != r.Time.TotalNS {
			t.Errorf("%s: self times add up to %d + outside %d, total %d", name, self, r.Time.OutsideNS, r.Time.TotalNS)
		}
	}
	r := build(t, load(t, "time-exact"), Options{Tables: TimeTables})
	var sum uint64
	for _, w := range []string{"work1", "work2", "work3"} {
		sum += funcTime(t, r, w).SelfNS
	}
	if e := funcTime(t, r, "empty"); e.Calls != 1000 {
		t.Errorf("empty: %+v", e)
	}
	if float64(sum) < 0.8*float64(r.Time.TotalNS) {
		t.Errorf("work functions have %d of %d ns", sum, r.Time.TotalNS)
	}
}

func TestTablesGroups(t *testing.T) {
	got, err := ParseTables("time,leaks,flat")
	if err != nil || strings.Join(got, ",") != "flat,timegraph,tree,leaks" {
		t.Errorf("ParseTables(time,leaks,flat) = %v, %v", got, err)
	}
	got, _ = ParseTables("memory")
	if strings.Join(got, ",") != strings.Join(append(MemoryTables, VMTables...), ",") {
		t.Errorf("memory: %v", got)
	}
	if _, err := ParseTables("times"); err == nil || !strings.Contains(err.Error(), "memory, time or all") {
		t.Errorf("error %v", err)
	}
	// nil tables: the memory tables, and the time tables with times.
	if r := build(t, load(t, "widget"), Options{}); r.Time != nil || r.Has(TableFlat) {
		t.Errorf("widget (no times): tables %v", r.Tables)
	}
	if r := build(t, load(t, "time"), Options{}); r.Time == nil || !r.Has(TableTree) || !r.Has(TableLeaks) {
		t.Errorf("time: tables %v", r.Tables)
	}
	// Time tables of a profile without times say so.
	r := build(t, load(t, "widget"), Options{Tables: TimeTables})
	if text := render(t, r, "text"); !strings.Contains(text, "No timing data") || strings.Contains(text, "MEMORY LEAKS") ||
		!strings.HasPrefix(text, "weave time profile") {
		t.Errorf("widget, time tables:\n%s", text)
	}
}

func TestHasTime(t *testing.T) {
	p, err := profile.Read(strings.NewReader("weave profile 1\nT 0 1\nN 0 -1 0 R -1\nD 0 5\nE 3\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !HasTime(p) || HasTime(load(t, "widget")) {
		t.Error("HasTime")
	}
}

func TestDur(t *testing.T) {
	for ns, want := range map[float64]string{0: "0", 7: "7ns", 0.45: "0.45ns", 9.33: "9.33ns", 12: "12ns", 999: "999ns",
		1000: "1.00us", 3410: "3.41us", 12040: "12.0us", 123456: "123us", 1.5e6: "1.50ms", 2.3456e9: "2.35s", 150e9: "150s",
		// Rounding up to the next width or unit: three significant digits still.
		999.6: "1.00us", 9996: "10.0us", 99960: "100us", 999999: "1.00ms", 9.9996: "10ns", 9.996e8: "1.00s", 2e12: "2000s"} {
		if got := dur(ns); got != want {
			t.Errorf("dur(%g) = %q, want %q", ns, got, want)
		}
	}
}

// TestTimeClamped: a profile's M time_clamped (contexts exact mode left
// uncompensated) is in the model and the header says so; without it, no
// line.
func TestTimeClamped(t *testing.T) {
	p := load(t, "time-exact")
	r := build(t, p, Options{Tables: TimeTables})
	if out := render(t, r, "text"); r.Time.Clamped != 0 || strings.Contains(out, "uncompensated") {
		t.Errorf("clamped %d without time_clamped", r.Time.Clamped)
	}
	p.Meta = append(p.Meta, profile.Meta{Key: "time_clamped", Value: "3"})
	r = build(t, p, Options{Tables: TimeTables})
	want := "note: 3 calling contexts uncompensated: subtracting would leave less than zero (a busy machine)\n"
	if out := render(t, r, "text"); r.Time.Clamped != 3 || !strings.Contains(out, want) {
		t.Errorf("clamped %d; the header lacks %q:\n%s", r.Time.Clamped, want, out)
	}
}

// TestFlatNotCounted: a frameless function (F flag 1) with time of its
// own, as an allocation leaf's node gets when a sample lands in its
// allocation (work in an OpenMP loop's body), says "not counted" in the
// flat profile, as in the time call graph, and calls_not_counted in JSON,
// not 0 calls.
func TestFlatNotCounted(t *testing.T) {
	const text = `weave profile 1
M argv ./x
M complete 1
M time_mode sampled
S 0 main
S 1 x.c
S 2 leaf
F 0 0 1 5
F 1 2 1 9 1
T 0 100
N 0 -1 0 R -1
N 1 0 0 F 0
N 2 1 0 F 1
C 1 1
D 1 40000
D 2 60000
E 15
`
	p, err := profile.Read(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	r := build(t, p, Options{Tables: TimeTables})
	if f := funcTime(t, r, "leaf"); !f.NotCounted || f.Calls != 0 {
		t.Errorf("leaf: %+v, want calls not counted", f)
	}
	if f := funcTime(t, r, "main"); f.NotCounted || f.Calls != 1 {
		t.Errorf("main: %+v", f)
	}
	out := render(t, r, "text")
	flat := out[strings.Index(out, "FLAT PROFILE"):]
	flat = flat[:strings.Index(flat, "TIME CALL GRAPH")]
	if !regexp.MustCompile(`(?m)^ *60\.0 .* not counted .* leaf$`).MatchString(flat) || !strings.Contains(flat, notCountedLegend) {
		t.Errorf("flat profile:\n%s", flat)
	}
}
