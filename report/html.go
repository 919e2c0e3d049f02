package report

import (
	_ "embed"
	"encoding/json"
	"html"
	"io"
	"slices"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

func init() { Register("html", htmlRenderer{}) }

// htmlRenderer writes one self-contained HTML page (its script and style
// inline, no network): an icicle graph of the calling-context tree for a
// chosen quantity with zoom and search, the heap over time with its peak
// when the profile has a timeline, and the report's tables, sortable.
// The page (html/) draws everything from one JSON object.
type htmlRenderer struct{}

var (
	//go:embed html/page.html
	htmlPage string
	//go:embed html/page.css
	htmlCSS string
	//go:embed html/page.js
	htmlJS string
)

// htmlData is what the page draws.
type htmlData struct {
	Program    string      `json:"program"`
	Sources    []string    `json:"sources,omitempty"`
	Runs       int         `json:"runs,omitempty"`
	Complete   bool        `json:"complete"`
	Notes      []string    `json:"notes,omitempty"` // statusLine, countNotes
	Totals     Totals      `json:"totals"`
	TimeMode   string      `json:"time_mode,omitempty"`
	Quantity   string      `json:"quantity"`   // shown first
	Quantities []string    `json:"quantities"` // those with a non-zero total
	Tree       *flameTree  `json:"tree"`
	Tables     []htmlTable `json:"tables"`
	Timeline   *timeline   `json:"timeline,omitempty"`
	Picture    *picture    `json:"picture,omitempty"`
}

func (htmlRenderer) Render(w io.Writer, r *Report) error {
	d := htmlData{Program: r.Program, Sources: r.Sources, Runs: r.Runs, Complete: r.Complete, Totals: r.Totals,
		Tree: r.flameTree(maxFlameNodes), Tables: r.htmlTables(), Timeline: r.htmlTimeline(), Picture: r.picture()}
	d.TimeMode, _ = r.prof.MetaValue("time_mode")
	if s := statusLine(r); s != "" {
		d.Notes = append(d.Notes, s+".")
	}
	for _, n := range countNotes(r) {
		d.Notes = append(d.Notes, strings.ToUpper(n[:1])+n[1:]+".")
	}
	for _, q := range profile.Quantities {
		var sum int64
		for _, v := range d.Tree.Self[q] {
			sum += v
		}
		if sum > 0 {
			d.Quantities = append(d.Quantities, q)
		}
	}
	d.Quantity = r.Quantity
	if len(d.Quantities) > 0 && !slices.Contains(d.Quantities, d.Quantity) {
		d.Quantity = d.Quantities[0]
	}
	data, err := json.Marshal(d) // escapes <, > and &: safe in a script element
	if err != nil {
		return err
	}
	title := "weave profile"
	if r.Program != "" {
		title += " of " + r.Program
	}
	page := strings.NewReplacer(
		"{{TITLE}}", html.EscapeString(title),
		"{{CSS}}", htmlCSS,
		"{{JS}}", htmlJS,
		"{{DATA}}", string(data),
	).Replace(htmlPage)
	_, err = io.WriteString(w, page)
	return err
}

// timeline is the heap over time: the runtime's points, the peak and the
// snapshots as labelled marks, the program's marks and regions.
type timeline struct {
	NS    []uint64   `json:"ns"`
	Bytes []uint64   `json:"bytes"`
	RSS   []int64    `json:"rss"`
	Marks []heapMark `json:"marks"`
	// The program's own: WEAVE_MARK and weave mark (labelled above the
	// curve, as KPROF's Figure 5), and its regions' spans.
	User    []heapMark       `json:"user,omitempty"`
	Regions []TimelineRegion `json:"regions,omitempty"`
}

type heapMark struct {
	Label string `json:"label"`
	NS    uint64 `json:"ns"`
	Bytes uint64 `json:"bytes"`
}

func (r *Report) htmlTimeline() *timeline {
	tl := r.Timeline
	if tl == nil || len(tl.Points) == 0 {
		return nil
	}
	t := &timeline{}
	for _, pt := range tl.Points {
		t.NS = append(t.NS, pt.NS)
		t.Bytes = append(t.Bytes, pt.Bytes)
		t.RSS = append(t.RSS, pt.RSS)
	}
	if tl.Peak != nil {
		t.Marks = append(t.Marks, heapMark{"peak", tl.Peak.NS, tl.Peak.Bytes})
	}
	if tl.Exit != nil {
		t.Marks = append(t.Marks, heapMark{"exit", tl.Exit.NS, tl.Exit.Bytes})
	}
	for _, m := range tl.Marks {
		t.User = append(t.User, heapMark{m.Label, m.NS, m.Bytes})
	}
	t.Regions = tl.Regions
	return t
}
