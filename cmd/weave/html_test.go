package main

// Tests of the HTML report in a real browser: headless Chromium driven
// with chromedp loads the page from its file, with no network.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// page is an HTML report open in headless Chromium.
type page struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	bad []string // console errors, warnings and uncaught exceptions
}

// openPage starts a fresh headless Chromium and loads the file.
func openPage(t *testing.T, file string) *page {
	t.Helper()
	testtool.Need(t, "chromium")
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath("chromium"),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelT(); cancelB(); cancelA() })
	p := &page{t: t, ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			msg = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				msg += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				msg = fmt.Sprintf("console.%s", e.Type)
				for _, a := range e.Args {
					msg += " " + string(a.Value) + a.Description
				}
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				msg = fmt.Sprintf("log %s: %s %s", e.Entry.Level, e.Entry.Text, e.Entry.URL)
			}
		}
		if msg != "" {
			p.mu.Lock()
			p.bad = append(p.bad, msg)
			p.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	abs, _ := filepath.Abs(file)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+abs)); err != nil {
		t.Fatalf("loading %s: %v", file, err)
	}
	return p
}

// eval evaluates a JavaScript expression on the page.
func eval[T any](p *page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// clean fails the test if the page wrote an error to its console.
func (p *page) clean() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.bad {
		p.t.Errorf("console: %s", m)
	}
}

// foldedFrames counts the bars a flame graph of the folded stacks has: the
// distinct stack prefixes, and the root.
func foldedFrames(folded string) int {
	prefixes := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
		stack := line[:strings.LastIndexByte(line, ' ')]
		for i := 0; i <= len(stack); i++ {
			if i == len(stack) || stack[i] == ';' {
				prefixes[stack[:i]] = true
			}
		}
	}
	return len(prefixes) + 1
}

func TestHTMLReport(t *testing.T) {
	dir := t.TempDir()
	prof := widgetsProfile(t, dir, "10000", "exact")
	out := filepath.Join(dir, "report.html")
	mustRun(t, "", nil, weaveBin, "report", "--format", "html", "-o", out, prof)
	html, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	standalone := strings.ReplaceAll(string(html), "'http://www.w3.org/2000/svg'", "") // a name, not an address
	for _, net := range []string{"http://", "https://", "<link", "src=", "href=", "@import", "url(", "fetch(", "XMLHttpRequest"} {
		if strings.Contains(standalone, net) {
			t.Errorf("the page refers to %q: it must stand alone", net)
		}
	}
	p := openPage(t, out)
	if n := eval[int](p, `window.weave ? 1 : 0`); n != 1 {
		t.Fatal("window.weave not set: the script did not run")
	}

	// The flame graph has one bar per context of the folded stacks, and
	// draws them all but those too thin to see (a function with a few ns
	// of time).
	for _, q := range []string{"bytes_allocated", "calls", "time"} {
		folded := mustRun(t, "", nil, weaveBin, "report", "--format", "folded", "--quantity", q, prof).stdout
		want := foldedFrames(folded)
		n := eval[int](p, `weave.setQuantity("`+q+`"), weave.contexts()`)
		drawn := eval[int](p, `weave.drawn`)
		if n != want || drawn > n || q != "time" && drawn != n || drawn < 4 {
			t.Errorf("%s: %d bars, %d drawn, want %d (the folded stacks' contexts)", q, n, drawn, want)
		}
	}

	// Clicking make_red_widget's bar zooms to it: its ancestors and subtree
	// are drawn (all, main, make_red_widget, make_widget).
	eval[int](p, `weave.setQuantity("bytes_allocated"), 0`)
	red := eval[int](p, `weave.find("make_red_widget")`)
	xy := eval[[]float64](p, `(() => { const r = weave.rect(weave.find("make_red_widget")), c = document.getElementById("flame").getBoundingClientRect(); return [c.left + r[0] + r[2] / 2, c.top + r[1] + 5]; })()`)
	if err := chromedp.Do(p.ctx, chromedp.MouseClickXY(xy[0], xy[1])); err != nil {
		t.Fatal(err)
	}
	if z, n := eval[int](p, `weave.zoomed`), eval[int](p, `weave.drawn`); z != red || n != 4 {
		t.Errorf("after a click on make_red_widget: zoomed to %d (want %d), %d bars (want 4)", z, red, n)
	}
	if n := eval[int](p, `weave.reset(), weave.drawn`); n != 6 {
		t.Errorf("after reset: %d bars, want 6", n)
	}
	status := eval[string](p, `weave.search("make_widget"), document.getElementById("status").textContent`)
	if !strings.Contains(status, "2 contexts match") || !strings.Contains(status, "(100.0%)") {
		t.Errorf("search make_widget: status %q", status)
	}

	// The heap picture draws every live block, as the profile's X records
	// list them.
	tot := jsonExportTotals(t, prof)
	if n := eval[int](p, `weave.picture.blocks`); int64(n) != tot.BlocksInUse || n == 0 {
		t.Errorf("heap picture: %d blocks drawn, %d in use", n, tot.BlocksInUse)
	}
	tip := eval[string](p, `(() => { const c = document.querySelector("#picture canvas"), r = c.getBoundingClientRect();
		c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + 1, clientY: r.top + 1})); return document.getElementById("picture-tip").textContent; })()`)
	if !strings.Contains(tip, "widget") || !strings.Contains(tip, "make_widget <- make_red_widget <- main") {
		t.Errorf("hovering the first block: %q", tip)
	}

	// Coloured by leak kind (the runtime's scan at exit): the red widgets
	// are definitely lost.
	legend := eval[string](p, `(() => { const s = document.getElementById("picture-color"); s.value = "leak"; s.dispatchEvent(new Event("change"));
		return document.getElementById("picture-legend").textContent; })()`)
	if !strings.HasPrefix(legend, "definitely lost (") {
		t.Errorf("leak kind legend %q", legend)
	}

	// The tables are there and sort.
	rows := eval[int](p, `document.querySelectorAll("#table-leaks tbody tr").length`)
	if rows != 1 {
		t.Errorf("leak table: %d rows, want 1", rows)
	}
	first := eval[string](p, `(() => { const th = document.querySelectorAll("#table-flat th")[3]; th.click(); th.click(); return document.querySelector("#table-flat tbody tr td").textContent; })()`)
	if first != "main" { // calls, increasing: main is called once
		t.Errorf("flat profile sorted by calls: first row %q, want main", first)
	}
	p.clean()

	// A profile with memory records: the heap over time with its peak and
	// the exit labelled, and the memory map.
	humps := filepath.Join(dir, "humps.html")
	mustRun(t, "", nil, weaveBin, "report", "--format", "html", "-o", humps, "../../report/testdata/humps.prof")
	var rep struct {
		Timeline struct {
			Points []any `json:"points"`
		} `json:"timeline"`
		Segments struct {
			Rows []any `json:"rows"`
		} `json:"segments"`
	}
	js := mustRun(t, "", nil, weaveBin, "report", "--format", "json", "../../report/testdata/humps.prof").stdout
	if err := json.Unmarshal([]byte(js), &rep); err != nil || len(rep.Timeline.Points) == 0 || len(rep.Segments.Rows) == 0 {
		t.Fatalf("humps report: %v, %d points, %d segments", err, len(rep.Timeline.Points), len(rep.Segments.Rows))
	}
	if err := chromedp.Do(p.ctx, chromedp.Navigate("file://"+humps)); err != nil {
		t.Fatal(err)
	}
	points := eval[int](p, `document.querySelector("#timeline polyline.heap").getAttribute("points").trim().split(" ").length`)
	labels := eval[string](p, `[...document.querySelectorAll("#timeline .mark-label")].map(e => e.textContent).join("|")`)
	if points != len(rep.Timeline.Points) || !strings.Contains(labels, "peak 100.0 MiB at 900.00 ms") || !strings.Contains(labels, "exit 10.0 MiB") {
		t.Errorf("heap chart: %d points (want %d), labels %q", points, len(rep.Timeline.Points), labels)
	}
	if n := eval[int](p, `document.querySelectorAll("#table-segments tbody tr").length`); n != len(rep.Segments.Rows)+3 {
		t.Errorf("memory map: %d rows, want %d segments and heap, VM, RSS", n, len(rep.Segments.Rows))
	}
	p.clean()

	// The console check itself sees errors and exceptions.
	bad := filepath.Join(dir, "bad.html")
	os.WriteFile(bad, []byte(`<script>console.error("e1"); throw new Error("e2")</script>`), 0o644)
	if err := chromedp.Do(p.ctx, chromedp.Navigate("file://"+bad), chromedp.Sleep(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	if len(p.bad) < 2 {
		t.Errorf("a page with console.error and an exception: the check saw %q", p.bad)
	}
	p.mu.Unlock()
}

// bigProfile writes a profile of a million allocations over about 250,000
// calling contexts: main calls 7 of 60 functions, each of those 7 more, 6
// deep, and every innermost call allocates.
func bigProfile(t *testing.T, path string) {
	t.Helper()
	p := &profile.Profile{Meta: []profile.Meta{{Key: "argv", Value: "./big"}, {Key: "complete", Value: "1"}}}
	for i := range 60 {
		f := &profile.Func{ID: i, Name: fmt.Sprintf("f%02d", i), File: "big.c", Line: 10 * (i + 1)}
		p.Funcs = append(p.Funcs, f)
		p.Sites = append(p.Sites, &profile.Site{ID: i, Func: f, File: "big.c", Line: f.Line + 2, Col: 5, Op: "malloc"})
	}
	th := &profile.Thread{ID: 0, TID: 1}
	p.Threads = []*profile.Thread{th}
	node := func(parent *profile.Node, kind profile.Kind) *profile.Node {
		n := &profile.Node{ID: len(p.Nodes), Parent: parent, Thread: th, Kind: kind}
		p.Nodes = append(p.Nodes, n)
		if parent != nil {
			parent.Children = append(parent.Children, n)
		}
		return n
	}
	th.Root = node(nil, profile.KindRoot)
	seed := uint64(1)
	var leaves []*profile.Node
	var grow func(parent *profile.Node, depth int)
	grow = func(parent *profile.Node, depth int) {
		for range 7 {
			seed = seed*6364136223846793005 + 1442695040888963407
			f := p.Funcs[seed>>58%60]
			n := node(parent, profile.KindFunc)
			n.Func, n.Calls = f, 1+seed>>60
			if depth == 6 {
				a := node(n, profile.KindAlloc)
				a.Site = p.Sites[f.ID]
				leaves = append(leaves, a)
			} else {
				grow(n, depth+1)
			}
		}
	}
	main := node(th.Root, profile.KindFunc)
	main.Func, main.Calls = p.Funcs[0], 1
	grow(main, 1)
	var bin profile.Bin
	for i, l := range leaves {
		n := uint64(1_000_000 / len(leaves))
		if i < 1_000_000%len(leaves) {
			n++
		}
		l.Heap.Allocs[profile.Medium] = n
		l.Heap.Bytes[profile.Medium] = 48 * n
		l.Heap.Frees[profile.Medium] = n / 2
		l.Heap.FreedBytes[profile.Medium] = 48 * (n / 2)
		bin.Allocs += n
		bin.Frees += n / 2
	}
	bin.Size, bin.Bytes, bin.FreedBytes = 48, 48*bin.Allocs, 48*bin.Frees
	p.Bins = []profile.Bin{bin}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
}

// cpuRun runs weave with args and returns its output and CPU time (user
// and system), which a busy machine does not inflate as it does wall time.
func cpuRun(t *testing.T, args ...string) (string, time.Duration) {
	t.Helper()
	cmd := exec.Command(weaveBin, args...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("weave %v: %v", args, err)
	}
	return string(out), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// TestHTMLLarge: a million allocations over 250,000 contexts make a page
// under 5 MB that Chromium loads and draws. The time limits are loose (a
// shared machine); the test logs the times.
func TestHTMLLarge(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "big.prof")
	bigProfile(t, prof)
	text, textCPU := cpuRun(t, "report", prof)
	if !strings.Contains(text, "1,000,000") {
		t.Errorf("text report lacks the million allocations:\n%.400s", text)
	}
	out := filepath.Join(dir, "big.html")
	_, htmlCPU := cpuRun(t, "report", "--format", "html", "-o", out, prof)
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() > 5<<20 {
		t.Errorf("the page is %d bytes, over 5 MB", fi.Size())
	}
	p := openPage(t, out)
	drawn := eval[int](p, `weave.drawn`)
	ms := eval[float64](p, `weave.ms`)
	status := eval[string](p, `document.getElementById("status").textContent`)
	t.Logf("text report %v CPU, HTML report %v CPU (%d bytes), Chromium navigation to drawn page %.0f ms: %d bars; %s",
		textCPU, htmlCPU, fi.Size(), ms, drawn, status)
	if drawn < 100 || !strings.Contains(status, "tiny contexts folded") {
		t.Errorf("%d bars drawn, status %q", drawn, status)
	}
	if textCPU > 5*time.Second || ms > 10000 {
		t.Errorf("too slow: text %v CPU, browser %.0f ms", textCPU, ms)
	}
	p.clean()
}

// TestHTMLUnits: the page writes sizes that round up to the next unit in
// it, as the text report does: testdata/html/units.c's one block of
// 1,048,575 bytes is "1.00 MiB" in the direct allocation table (it was
// "1024.0 KiB").
func TestHTMLUnits(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src, _ := filepath.Abs("../../testdata/html/units.c")
	exe, prof, html := filepath.Join(dir, "units"), filepath.Join(dir, "units.prof"), filepath.Join(dir, "units.html")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", src, "-o", exe)
	mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, exe)
	mustRun(t, "", nil, weaveBin, "report", "--format", "html", "-o", html, prof)
	p := openPage(t, html)
	cell := eval[string](p, `(() => {
		const t = document.getElementById("table-direct");
		const k = [...t.querySelectorAll("th")].findIndex(th => th.textContent.trim().startsWith("bytes"));
		const row = [...t.querySelectorAll("tbody tr")].find(tr => tr.textContent.includes("main"));
		return row ? row.children[k].textContent : "no row of main";
	})()`)
	if cell != "1.00 MiB" {
		t.Errorf("main's bytes in the direct allocation table: %q, want \"1.00 MiB\" (1,048,575 bytes)", cell)
	}
	p.clean()
}
