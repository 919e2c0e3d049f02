package main

// Tests of the HTML report in a real browser: headless Chromium driven
// with chromedp loads the page from its file, with no network.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"weave/internal/testtool"
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

	// The flame graph draws one bar per context of the folded stacks.
	for _, q := range []string{"bytes_allocated", "calls", "time"} {
		folded := mustRun(t, "", nil, weaveBin, "report", "--format", "folded", "--quantity", q, prof).stdout
		want := foldedFrames(folded)
		if got := eval[int](p, `weave.setQuantity("`+q+`"), weave.drawn`); got != want {
			t.Errorf("%s: %d bars drawn, want %d (the folded stacks' contexts)", q, got, want)
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
