package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// graphEntry is an allocation call graph entry of the JSON report.
type graphEntry struct {
	Name       string `json:"name"`
	Calls      uint64 `json:"calls"`
	NotCounted bool   `json:"calls_not_counted"`
	Callers    []struct {
		Name       string `json:"name"`
		Calls      uint64 `json:"calls"`
		NotCounted bool   `json:"calls_not_counted"`
	} `json:"callers"`
}

// TestReportRows builds testdata/rows/rows.c and checks that no row says
// 0 for what was not counted, and that each row's numbers mean what they
// say: new_node, frameless under --frames auto, is "not counted" in the
// call graph (text and JSON), and called as often as the program says
// under --frames=all; a chain's allocs and frees are on its first leak
// row only, and equal the program's; the report's header says in one
// line how many functions are frameless; the HTML leak table has a kind
// column, and its heap chart is scaled to the heap, the resident set on
// an axis of its own.
func TestReportRows(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	for _, frames := range []string{"auto", "all"} {
		src, _ := filepath.Abs("../../testdata/rows/rows.c")
		plain, woven := filepath.Join(dir, "plain"), filepath.Join(dir, "woven-"+frames)
		mustRun(t, dir, nil, "gcc", "-O2", src, "-o", plain)
		mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--frames="+frames, "-O2", src, "-o", woven)
		pr := run(t, dir, nil, plain, "1000")
		prof := filepath.Join(dir, frames+".prof")
		sameRun(t, frames, pr, run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, woven, "1000"))
		var rep struct {
			Graph []graphEntry `json:"graph"`
			Leaks []struct {
				Kind   string `json:"kind"`
				Allocs uint64 `json:"allocs"`
				Frees  uint64 `json:"frees"`
				Chain  []struct {
					Name string `json:"name"`
				} `json:"chain"`
			} `json:"leaks"`
		}
		js := mustRun(t, "", nil, weaveBin, "report", "--format", "json", prof).stdout
		if err := json.Unmarshal([]byte(js), &rep); err != nil {
			t.Fatal(err)
		}
		var nn *graphEntry
		for i := range rep.Graph {
			if rep.Graph[i].Name == "new_node" {
				nn = &rep.Graph[i]
			}
		}
		if nn == nil {
			t.Fatalf("%s: no new_node in the call graph", frames)
		}
		text := mustRun(t, "", nil, weaveBin, "report", "--tables", "leaks,graph", prof).stdout
		entry := graphLine(text, "new_node")
		if frames == "auto" {
			if !nn.NotCounted || nn.Calls != 0 || len(nn.Callers) != 1 || !nn.Callers[0].NotCounted {
				t.Errorf("frames auto: new_node %+v, want its calls not counted", nn)
			}
			if !strings.Contains(entry, "not counted") {
				t.Errorf("frames auto: new_node's entry line %q does not say its calls were not counted", entry)
			}
			header, _, _ := strings.Cut(mustRun(t, "", nil, weaveBin, "report", prof).stdout, "\n\n")
			if n := strings.Count(header, "frameless"); n != 1 || !strings.Contains(header, "weave -v") {
				t.Errorf("report header: frameless %d times, want one line pointing to weave -v:\n%s", n, header)
			}
		} else if nn.NotCounted || nn.Calls != 10000 || strings.Contains(entry, "not counted") {
			t.Errorf("frames all: new_node %+v, line %q: want 10,000 calls as the program made", nn, entry)
		}

		// The chain of the lists has three kinds; its 10,000 allocations
		// and 9,940 frees are on its first row, the others' cells empty.
		rows := 0
		for _, l := range rep.Leaks {
			if len(l.Chain) > 0 && l.Chain[0].Name == "new_node" {
				rows++
				if l.Allocs != 10000 || l.Frees != 9940 {
					t.Errorf("%s: %s row: allocs %d frees %d, want the chain's 10,000 and 9,940", frames, l.Kind, l.Allocs, l.Frees)
				}
			}
		}
		if rows != 3 {
			t.Errorf("%s: %d leak rows for new_node's chain, want 3 (definite, indirect, reachable)", frames, rows)
		}
		var first, others int
		for _, l := range strings.Split(text, "\n") {
			if strings.HasSuffix(l, "new_node <- make_list <- main") {
				if strings.Contains(l, "10,000") && strings.Contains(l, "9,940") {
					first++
				} else if !strings.Contains(l, "9,940") {
					others++
				}
			}
		}
		if first != 1 || others != 2 || !strings.Contains(text, "(allocs, frees: of the chain, all its kinds, on its first row)") {
			t.Errorf("%s: leak table: the chain's numbers on %d rows, %d rows without, want 1 and 2, and the legend:\n%s", frames, first, others, text)
		}
		if frames == "all" {
			continue
		}

		html := filepath.Join(dir, "rows.html")
		mustRun(t, "", nil, weaveBin, "report", "--format", "html", "-o", html, prof)
		p := openPage(t, html)
		kinds := eval[string](p, `(() => {
			const t = document.getElementById("table-leaks");
			const k = [...t.querySelectorAll("th")].findIndex(th => th.textContent.startsWith("kind"));
			if (k < 0) return "no kind column";
			return [...t.querySelectorAll("tbody tr")].filter(tr => tr.textContent.includes("new_node")).map(tr => tr.children[k].textContent).sort().join(",");
		})()`)
		if kinds != "definite,indirect,reachable" {
			t.Errorf("HTML leak table: kinds of new_node's rows %q", kinds)
		}
		// The heap's peak is at the top of the chart, and so is the
		// resident set's, on its own axis.
		tops := eval[[]float64](p, `(() => {
			const ys = (cls) => Math.min(...document.querySelector("#timeline polyline." + cls).getAttribute("points").trim().split(" ").map(p => +p.split(",")[1]));
			const axis = +document.querySelectorAll("#timeline svg line")[1].getAttribute("y1");
			return [axis, ys("heap"), ys("rss"), document.querySelectorAll("#timeline .rss-axis").length];
		})()`)
		if len(tops) != 4 || tops[1]-tops[0] > 1 || tops[2]-tops[0] > 1 || tops[3] != 1 {
			t.Errorf("heap chart: top of the axis, heap, RSS, RSS axes %v: want the heap and RSS peaks at the top, on two axes", tops)
		}
		p.clean()
	}
}

// graphLine returns the entry line of function name in a text call graph.
func graphLine(text, name string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "  "+name+" ["+strings.TrimPrefix(strings.Fields(l)[0], "[")) {
			return l
		}
	}
	return ""
}

// TestElidedPair checks what the README says of testdata/elided.c: gcc
// -O2 deletes its malloc/free pair whose block is never used, the woven
// build counts it (the source's calls), so weave's count at -O2 is
// memcheck's at -O0, 100 more than memcheck's at -O2; and weave -v says
// so.
func TestElidedPair(t *testing.T) {
	testtool.Need(t, "gcc")
	testtool.Need(t, "valgrind")
	dir := t.TempDir()
	src, _ := filepath.Abs("../../testdata/elided.c")
	count := map[string]int64{}
	for _, o := range []string{"-O0", "-O2"} {
		plain, woven := filepath.Join(dir, "plain"+o), filepath.Join(dir, "woven"+o)
		mustRun(t, dir, nil, "gcc", o, src, "-o", plain)
		mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", o, src, "-o", woven)
		prof := filepath.Join(dir, o+".prof")
		mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, woven)
		count["weave"+o] = reportTotals(t, prof).Allocs
		count["memcheck"+o] = valgrindTotals(t, dir, nil, plain).Allocs
	}
	if w := count["weave-O0"]; count["weave-O2"] != w || count["memcheck-O0"] != w || count["memcheck-O2"] != w-100 {
		t.Errorf("allocations %v: want weave's at -O0 and -O2 and memcheck's at -O0 the same, memcheck's at -O2 100 fewer (the pairs gcc deletes)", count)
	}
	if r := mustRun(t, dir, nil, weaveBin, "-v", "-o", filepath.Join(dir, "v.c"), src); !strings.Contains(r.stderr, "gcc -O2 deletes") {
		t.Errorf("weave -v does not say that the counts are the source's:\n%s", r.stderr)
	}
}
