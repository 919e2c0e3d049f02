package report

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/golden"
	"github.com/weave-profiler/weave/profile"
)

func load(t *testing.T, name string) *profile.Profile {
	t.Helper()
	p, err := profile.ReadFile(filepath.Join("testdata", name+".prof"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func build(t *testing.T, p *profile.Profile, opt Options) *Report {
	t.Helper()
	r, err := New(p, opt)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func render(t *testing.T, r *Report, format string) string {
	t.Helper()
	rd, err := Lookup(format)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rd.Render(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// goldenCase renders a profile of testdata with opt in each format and
// compares the output with testdata/name.format.
type goldenCase struct {
	name, prof string
	opt        Options
	formats    []string
}

var goldenCases = []goldenCase{
	{"widget", "widget", Options{Depth: DefaultDepth}, []string{"text", "json"}},
	{"recursion", "recursion", Options{Depth: DefaultDepth}, []string{"text", "json"}},
	{"recursion-depth2", "recursion", Options{Depth: 2, Tables: []string{TableLeaks}}, []string{"text", "json"}},
	{"threads", "threads", Options{Depth: DefaultDepth}, []string{"text", "json"}},
	{"inline", "inline", Options{Depth: DefaultDepth}, []string{"text", "json"}},
	{"humps", "humps", Options{Depth: DefaultDepth, Tables: VMTables}, []string{"text", "json"}},
	{"inline-sites", "inline", Options{Depth: DefaultDepth, Sites: true, Tables: []string{TableLeaks, TableDirect}}, []string{"text"}},
}

func TestGolden(t *testing.T) { checkGoldens(t, goldenCases) }

func checkGoldens(t *testing.T, cases []goldenCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := build(t, load(t, tc.prof), tc.opt)
			for _, f := range tc.formats {
				out := render(t, r, f)
				golden.Check(t, tc.name+"."+f, out)
				if f == "json" && !json.Valid([]byte(out)) {
					t.Errorf("invalid JSON")
				}
				if f == "text" {
					checkWidth(t, out)
				}
			}
		})
	}
}

// checkWidth checks the text report fits in 100 columns, except for lines
// that end in a long name or chain.
func checkWidth(t *testing.T, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if n := len([]rune(line)); n > maxWidth && !strings.Contains(line, " <- ") {
			t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
		}
	}
}

func TestWidget(t *testing.T) {
	r := build(t, load(t, "widget"), Options{Depth: DefaultDepth})
	want := Totals{Allocs: 10000, Frees: 4981, BytesAllocated: 2040000, BytesFreed: 1016124,
		BytesInUse: 1023876, BlocksInUse: 5019, Threads: 1}
	if r.Totals != want {
		t.Errorf("totals %+v, want %+v", r.Totals, want)
	}
	if len(r.Leaks) != 1 {
		t.Fatalf("leaks: %+v", r.Leaks)
	}
	l := r.Leaks[0]
	if l.BytesKept != 1023876 || l.BlocksKept != 5019 || l.Allocs != 5019 || l.Frees != 0 || l.PctKept != 100 ||
		chainNames(l.Chain) != "make_widget <- make_red_widget <- main" {
		t.Errorf("leak %+v", l)
	}
	if len(r.Bins) != 1 || r.Bins[0].Size != 204 || r.Bins[0].BytesKept != 1023876 ||
		strings.Join(r.Bins[0].Types, ",") != "struct widget" {
		t.Errorf("bins %+v", r.Bins)
	}
	d := r.Direct
	if len(d.Functions) != 1 || d.Functions[0].Func.Name != "make_widget" || d.Functions[0].Calls != 10000 ||
		d.Total.Bytes != 2040000 || d.Total.PctMemSize[profile.Medium] != 100 {
		t.Errorf("direct %+v", d)
	}
	main := entry(t, r, "main")
	if main.SelfDesc != r.Totals.BytesAllocated || main.Index != 1 || main.Self != 0 {
		t.Errorf("main: %+v", main)
	}
	mw := entry(t, r, "make_widget")
	if mw.Self != 2040000 || mw.Calls != 10000 || len(mw.Callers) != 2 {
		t.Fatalf("make_widget: %+v", mw)
	}
	red := mw.Callers[0]
	if red.Name != "make_red_widget" || red.Bytes != 1023876 || red.Calls != 5019 || red.TotalCalls != 10000 {
		t.Errorf("make_widget's first caller: %+v", red)
	}
	if cw := findEntry(r, "consume_widget"); cw != nil {
		t.Errorf("consume_widget, which allocated nothing, is in the graph: %+v", cw)
	}
	checkGraph(t, r)
}

func TestRecursion(t *testing.T) {
	r := build(t, load(t, "recursion"), Options{Depth: DefaultDepth})
	if r.Totals.BytesAllocated != 38 || r.Totals.BytesInUse != 28 {
		t.Errorf("totals %+v", r.Totals)
	}
	var cycles []*Entry
	for i := range r.Graph {
		if r.Graph[i].Cycle != 0 {
			cycles = append(cycles, &r.Graph[i])
		}
		if f := r.Graph[i].Func; f != nil && (f.Name == "f" || f.Name == "g") {
			t.Errorf("cycle member %s has an entry of its own", f.Name)
		}
	}
	if len(cycles) != 1 {
		t.Fatalf("%d cycles, want 1", len(cycles))
	}
	c := cycles[0]
	// f and g are on the paths of 10 + 20 bytes; counted once, not once per
	// f->g arc as mprof would.
	if c.Name != "<cycle 1>" || c.SelfDesc != 30 || c.Self != 30 || c.Calls != 3 || c.Recursive != 3 {
		t.Errorf("cycle: %+v", c)
	}
	if len(c.Members) != 2 || c.Members[0].Name != "g" || c.Members[0].Self != 30 || c.Members[1].Name != "f" ||
		c.Members[1].Calls != 2 || c.Members[0].Calls != 4 {
		t.Errorf("members: %+v", c.Members)
	}
	if len(c.Callers) != 2 || c.Callers[0].Name != "h" || c.Callers[0].Bytes != 20 || c.Callers[0].Calls != 2 ||
		c.Callers[1].Name != "main" || c.Callers[1].Bytes != 10 || c.Callers[1].Calls != 1 {
		t.Errorf("cycle callers: %+v", c.Callers)
	}
	if len(c.Callees) != 0 {
		t.Errorf("cycle callees: %+v", c.Callees)
	}
	if m := entry(t, r, "main"); m.SelfDesc != 38 || len(m.Callees) != 3 {
		t.Errorf("main: %+v", m)
	}
	if rr := entry(t, r, "r"); rr.Calls != 1 || rr.Recursive != 1 || rr.Self != 8 || rr.Cycle != 0 {
		t.Errorf("self-recursive r: %+v", rr)
	}
	// Leak chains are raw call chains: recursion is not folded.
	if got := chainNames(r.Leaks[0].Chain); got != "g <- f <- g <- f <- main" {
		t.Errorf("first leak chain %q", got)
	}
	// The bin heuristic: calloc(10, sizeof(char)) lists char[10].
	for _, b := range r.Bins {
		if b.Size == 10 && strings.Join(b.Types, ",") != "char[10]" {
			t.Errorf("bin 10 types %v", b.Types)
		}
	}
	checkGraph(t, r)

	r2 := build(t, load(t, "recursion"), Options{Depth: 2})
	if got := chainNames(r2.Leaks[0].Chain); got != "g <- f" {
		t.Errorf("depth 2 chain %q", got)
	}
}

func TestThreads(t *testing.T) {
	r := build(t, load(t, "threads"), Options{Depth: DefaultDepth})
	if r.Totals.Threads != 3 || r.Totals.Allocs != 9 || r.Totals.BlocksInUse != 3 {
		t.Errorf("totals %+v", r.Totals)
	}
	// The two workers' trees merge by path.
	if len(r.Leaks) != 2 {
		t.Fatalf("leaks %+v", r.Leaks)
	}
	w := r.Leaks[1]
	if chainNames(w.Chain) != "make_buf <- fill <- worker" || w.Allocs != 8 || w.Frees != 6 || w.BytesKept != 200 {
		t.Errorf("worker leak %+v", w)
	}
	if fill := entry(t, r, "fill"); fill.Calls != 8 || fill.SelfDesc != 800 {
		t.Errorf("fill: %+v", fill)
	}
	if findEntry(r, "start_pool") != nil {
		t.Error("start_pool, on no allocating path, is in the graph")
	}
	for _, b := range r.Bins {
		if b.Size == profile.LargeBin && b.Bytes != 4000 {
			t.Errorf("large bin %+v", b)
		}
	}
	checkGraph(t, r)
}

func TestInline(t *testing.T) {
	r := build(t, load(t, "inline"), Options{Depth: DefaultDepth, Sites: true})
	if r.Complete {
		t.Error("complete 0 read as complete")
	}
	var names []string
	for _, d := range r.Direct.Functions {
		names = append(names, r.Label(*d.Func))
	}
	// xmalloc, woven into a.c and b.c, is one function; the two static
	// init functions are two.
	if got := strings.Join(names, ","); got != "xmalloc,init (b.c),init (a.c)" {
		t.Errorf("direct functions %s", got)
	}
	if x := r.Direct.Functions[0]; x.Bytes != 320 || x.Calls != 5 || x.BytesKept != 128 {
		t.Errorf("xmalloc: %+v", x)
	}
	if x := entry(t, r, "xmalloc"); x.Calls != 5 || len(x.Callers) != 2 {
		t.Errorf("xmalloc entry: %+v", x)
	}
	found := false
	for _, l := range r.Leaks {
		if l.Chain[0].Site == "util.h:4" && l.Chain[0].Name == "xmalloc" {
			found = true
		}
	}
	if !found {
		t.Errorf("no leak chain with site util.h:4: %+v", r.Leaks)
	}
	for _, b := range r.Bins {
		want := map[int]string{48: "struct table", 64: "", 192: "struct table[4]"}[b.Size]
		if got := strings.Join(b.Types, ","); got != want {
			t.Errorf("bin %d types %q, want %q", b.Size, got, want)
		}
	}
	checkGraph(t, r)
}

// TestDepthCap checks a leaf whose parent is not its site's function (the
// runtime's depth cap dropped the function's node): the allocation is the
// site's function's, called from the parent.
func TestDepthCap(t *testing.T) {
	const prof = `weave profile 1
S 0 main
S 1 m.c
S 2 deep
S 3 malloc
F 0 0 1 1
F 1 2 1 5
A 0 1 1 6 3 3 -1 0
T 0 1
N 0 -1 0 R -1
N 1 0 0 F 0
N 2 1 0 A 0
C 1 1
H 2 1 0 0 0 16 0 0 0 0 0 0 0 0 0 0 0
B 16 1 0 16 0
E 14
`
	p, err := profile.Read(strings.NewReader(prof))
	if err != nil {
		t.Fatal(err)
	}
	r := build(t, p, Options{})
	if d := r.Direct.Functions; len(d) != 1 || d[0].Func.Name != "deep" {
		t.Errorf("direct %+v", d)
	}
	if got := chainNames(r.Leaks[0].Chain); got != "deep <- main" {
		t.Errorf("chain %q", got)
	}
	if deep := entry(t, r, "deep"); deep.Self != 16 || len(deep.Callers) != 1 || deep.Callers[0].Name != "main" {
		t.Errorf("deep: %+v", deep)
	}
	checkGraph(t, r)
}

func TestTablesOption(t *testing.T) {
	if _, err := ParseTables("leaks,nope"); err == nil || !strings.Contains(err.Error(), `unknown table "nope"`) {
		t.Errorf("ParseTables error %v", err)
	}
	tables, err := ParseTables("graph,leaks,graph")
	if err != nil {
		t.Fatal(err)
	}
	r := build(t, load(t, "widget"), Options{Tables: tables})
	if r.Bins != nil || r.Direct != nil || r.Leaks == nil || r.Graph == nil {
		t.Errorf("tables built: %v", r.Tables)
	}
	if strings.Join(r.Tables, ",") != "leaks,graph" {
		t.Errorf("Tables %v", r.Tables)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(render(t, r, "json")), &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"totals", "leaks", "graph"} {
		if _, ok := top[k]; !ok {
			t.Errorf("JSON has no %s", k)
		}
	}
	for _, k := range []string{"bins", "direct"} {
		if _, ok := top[k]; ok {
			t.Errorf("JSON has %s, not selected", k)
		}
	}
	text := render(t, r, "text")
	if strings.Contains(text, "DIRECT ALLOCATION") || !strings.Contains(text, "ALLOCATION CALL GRAPH") {
		t.Errorf("text tables:\n%s", text)
	}
}

// TestJSONTotals checks the keys other tools rely on.
func TestJSONTotals(t *testing.T) {
	out := render(t, build(t, load(t, "widget"), Options{Depth: DefaultDepth}), "json")
	var top struct {
		Totals map[string]uint64 `json:"totals"`
		Leaks  []any             `json:"leaks"`
		Bins   []any             `json:"bins"`
		Direct map[string]any    `json:"direct"`
		Graph  []any             `json:"graph"`
	}
	if err := json.Unmarshal([]byte(out), &top); err != nil {
		t.Fatal(err)
	}
	want := map[string]uint64{"allocs": 10000, "frees": 4981, "bytes_allocated": 2040000, "bytes_in_use": 1023876, "blocks_in_use": 5019}
	for k, v := range want {
		if got, ok := top.Totals[k]; !ok || got != v {
			t.Errorf("totals.%s = %d (present %v), want %d", k, got, ok, v)
		}
	}
	if top.Leaks == nil || top.Bins == nil || top.Direct == nil || top.Graph == nil {
		t.Errorf("missing tables in %s", out)
	}
}

func TestLookup(t *testing.T) {
	_, err := Lookup("xml")
	if err == nil || !strings.HasPrefix(err.Error(), `unknown format "xml" (want `) {
		t.Fatalf("Lookup(xml) error %v", err)
	}
	for _, f := range []string{"text", "json", "pprof", "folded"} {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("Lookup(xml) error %v does not name format %s", err, f)
		}
		if _, err := Lookup(f); err != nil {
			t.Errorf("Lookup(%s): %v", f, err)
		}
	}
}

func TestEmptyProfile(t *testing.T) {
	p, err := profile.Read(strings.NewReader("weave profile 1\nT 0 1\nN 0 -1 0 R -1\nE 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := build(t, p, Options{})
	text := render(t, r, "text")
	for _, want := range []string{"No leaks", "No allocations"} {
		if !strings.Contains(text, want) {
			t.Errorf("empty report lacks %q:\n%s", want, text)
		}
	}
	if out := render(t, r, "json"); !strings.Contains(out, `"leaks": []`) {
		t.Errorf("empty JSON leaks:\n%s", out)
	}
}

func TestNum(t *testing.T) {
	for n, want := range map[uint64]string{0: "0", 999: "999", 1000: "1,000", 1023876: "1,023,876", 12345678901: "12,345,678,901"} {
		if got := num(n); got != want {
			t.Errorf("num(%d) = %q, want %q", n, got, want)
		}
	}
}

// checkGraph checks invariants of any call graph: the roots' self+desc
// add up to all bytes; an entry's self plus its callees' arcs is its
// self+desc; its callers' arcs add up to at most its self+desc; direct
// self bytes add up to all bytes.
func checkGraph(t *testing.T, r *Report) {
	t.Helper()
	var selfSum, rootSum uint64
	for i := range r.Graph {
		e := &r.Graph[i]
		selfSum += e.Self
		if len(e.Callers) == 0 {
			rootSum += e.SelfDesc
		}
		down := e.Self
		for _, a := range e.Callees {
			down += a.Bytes
		}
		if down != e.SelfDesc {
			t.Errorf("%s: self %d + callees = %d, self+desc %d", e.Name, e.Self, down, e.SelfDesc)
		}
		var up uint64
		for _, a := range e.Callers {
			up += a.Bytes
		}
		if up > e.SelfDesc {
			t.Errorf("%s: callers %d > self+desc %d", e.Name, up, e.SelfDesc)
		}
	}
	if selfSum != r.Totals.BytesAllocated {
		t.Errorf("entries' self bytes add up to %d, want %d", selfSum, r.Totals.BytesAllocated)
	}
	if rootSum != r.Totals.BytesAllocated {
		t.Errorf("top entries' self+desc add up to %d, want %d", rootSum, r.Totals.BytesAllocated)
	}
	if r.Direct != nil && r.Direct.Total.Bytes != r.Totals.BytesAllocated {
		t.Errorf("direct total %d", r.Direct.Total.Bytes)
	}
}

func chainNames(chain []Frame) string {
	var s []string
	for _, f := range chain {
		s = append(s, f.Name)
	}
	return strings.Join(s, " <- ")
}

func findEntry(r *Report, name string) *Entry {
	for i := range r.Graph {
		if r.Graph[i].Name == name {
			return &r.Graph[i]
		}
	}
	return nil
}

func entry(t *testing.T, r *Report, name string) *Entry {
	t.Helper()
	e := findEntry(r, name)
	if e == nil {
		t.Fatalf("no graph entry %s", name)
	}
	return e
}
