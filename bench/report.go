package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// median is the median of the successful samples' f, and how many
// succeeded.
func median(ss []sample, f func(sample) float64) (float64, int) {
	var v []float64
	for _, s := range ss {
		if s.Err == "" {
			v = append(v, f(s))
		}
	}
	if len(v) == 0 {
		return math.NaN(), 0
	}
	sort.Float64s(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2], n
	}
	return (v[n/2-1] + v[n/2]) / 2, n
}

func wallOf(s sample) float64    { return s.Wall.Seconds() }
func cpuOf(s sample) float64     { return s.CPU.Seconds() }
func rssOf(s sample) float64     { return float64(s.RSS) }
func profileOf(s sample) float64 { return float64(s.Profile) }

// failCell says why a cell has no value.
func failCell(ss []sample) string {
	for _, s := range ss {
		if s.Err == "timeout" {
			return "timeout"
		}
	}
	if len(ss) == 0 {
		return "–"
	}
	return "fail"
}

// wall is the median wall time of a program's configuration, in seconds.
func (res *results) wall(p, c string) float64 {
	v, _ := median(res.cells[p][c], wallOf)
	return v
}

// slowdown is a configuration's median wall time over plain's.
func (res *results) slowdown(p, c string) float64 { return res.wall(p, c) / res.wall(p, "plain") }

// rssRatio is a configuration's median peak RSS over plain's.
func (res *results) rssRatio(p, c string) float64 {
	a, _ := median(res.cells[p][c], rssOf)
	b, _ := median(res.cells[p]["plain"], rssOf)
	return a / b
}

// events is the number of allocation events (allocations plus frees, as
// weave and valgrind count them) a program makes, from weave's profile.
func (res *results) events(p string) int64 {
	if st := res.stats[p]; st != nil && st.Err == "" {
		return st.Allocs + st.Frees
	}
	return 0
}

// perEvent is a configuration's extra time per allocation event, in ns.
func (res *results) perEvent(p, c string) float64 {
	n := res.events(p)
	if n == 0 {
		return math.NaN()
	}
	return (res.wall(p, c) - res.wall(p, "plain")) * 1e9 / float64(n)
}

// perEventCPU is a configuration's extra CPU time per allocation event,
// in ns.
func (res *results) perEventCPU(p, c string) float64 {
	n := res.events(p)
	a, _ := median(res.cells[p][c], cpuOf)
	b, _ := median(res.cells[p]["plain"], cpuOf)
	if n == 0 {
		return math.NaN()
	}
	return (a - b) * 1e9 / float64(n)
}

// perAlloc is a configuration's extra time per allocation, in ns.
func (res *results) perAlloc(p, c string) float64 {
	st := res.stats[p]
	if st == nil || st.Allocs == 0 {
		return math.NaN()
	}
	return (res.wall(p, c) - res.wall(p, "plain")) * 1e9 / float64(st.Allocs)
}

// table is a markdown table under construction.
type table struct{ rows [][]string }

func (t *table) row(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) String() string {
	var b strings.Builder
	for i, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
		if i == 0 {
			b.WriteString("|" + strings.Repeat("---|", len(r)) + "\n")
		}
	}
	return b.String()
}

// cell formats v with format, or the reason there is no value.
func cell(format string, v float64, ss []sample) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return failCell(ss)
	}
	return fmt.Sprintf(format, v)
}

func mib(b float64) float64 { return b / (1 << 20) }

// size formats a byte count.
func size(n float64) string {
	switch {
	case n < 0 || math.IsNaN(n):
		return "–"
	case n < 1<<10:
		return fmt.Sprintf("%.0f B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", n/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", n/(1<<20))
	}
	return fmt.Sprintf("%.2f GiB", n/(1<<30))
}

// markdown renders every table, with the machine and the command: the
// run's header, and under each table a line saying where it comes from,
// so that a table quoted alone still does.
func (res *results) markdown() string {
	tables := res.mdRatios() + res.mdSizes() + res.mdEvents() + res.mdDepth() + res.mdMemory() + res.mdResident() +
		res.mdTools() + res.targets()
	return res.mdHeader() + captioned(tables, res.caption())
}

// caption is the line under each table: command, date, machine, commit.
func (res *results) caption() string {
	e := res.env
	machine := ""
	if len(e.machine) > 0 {
		machine = e.machine[0]
	}
	return fmt.Sprintf("_`%s`, %s, %s, weave %s_", res.command, e.date.UTC().Format("2006-01-02 15:04 UTC"), machine, e.commit)
}

// captioned adds caption after each "#### " section of md.
func captioned(md, caption string) string {
	parts := strings.Split(md, "\n#### ")
	for i := range parts {
		if i > 0 || strings.HasPrefix(parts[0], "#### ") {
			parts[i] = strings.TrimRight(parts[i], "\n") + "\n\n" + caption + "\n"
		}
	}
	return strings.Join(parts, "\n#### ")
}

// mdHeader is the run: date, command, machine, tools, programs and configurations.
func (res *results) mdHeader() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	e := res.env
	p("### Run of %s\n\n", e.date.UTC().Format("2006-01-02 15:04 UTC"))
	p("- command: `%s` (size %s, %d runs of each configuration, interleaved)\n", res.command, res.size, res.runs)
	p("- machine: %s\n", strings.Join(e.machine, "; "))
	var tools []string
	for _, t := range append([]string{"gcc"}, optionalTools...) {
		if v := e.versions[t]; v != "" {
			tools = append(tools, v)
		} else {
			tools = append(tools, t+": not installed")
		}
	}
	p("- tools: %s\n", strings.Join(tools, "; "))
	p("- weave: commit %s\n", e.commit)
	p("- harness time: %s\n\n", res.elapsed.Round(time.Second))

	var t table
	t.row("program", "what it runs")
	for _, pr := range res.programs {
		t.row(pr.name, pr.desc)
	}
	p("%s\n", t.String())
	t = table{}
	t.row("configuration", "what it is")
	for _, c := range res.configs {
		t.row(c.name, c.desc)
	}
	p("%s\n", t.String())
	return b.String()
}

// mdRatios is the slowdown and peak RSS tables: plain's values, every other configuration's ratio to them.
func (res *results) mdRatios() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	head := res.head()
	// ratioTable writes a table with plain's own value in its first row
	// and every other configuration's ratio to it below.
	ratioTable := func(title, plainLabel, plainFormat string, plainValue func(program string) float64,
		ratio func(program, config string) float64) {
		p("%s\n\n", title)
		t := table{}
		t.row(head...)
		r := []string{plainLabel}
		for _, pr := range res.programs {
			r = append(r, cell(plainFormat, plainValue(pr.name), res.cells[pr.name]["plain"]))
		}
		t.row(r...)
		for _, c := range res.configs[1:] {
			r := []string{c.name}
			for _, pr := range res.programs {
				r = append(r, cell("%.2f", ratio(pr.name, c.name), res.cells[pr.name][c.name]))
			}
			t.row(r...)
		}
		p("%s\n", t.String())
	}
	ratioTable("#### Slowdown: median wall time / plain's", "plain, seconds", "%.3f s",
		func(pr string) float64 { return res.wall(pr, "plain") }, res.slowdown)
	ratioTable("#### Peak RSS: median / plain's", "plain, MiB", "%.1f",
		func(pr string) float64 { v, _ := median(res.cells[pr]["plain"], rssOf); return mib(v) }, res.rssRatio)
	return b.String()
}

// mdSizes is the profile size table.
func (res *results) mdSizes() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var t table
	head := res.head()
	p("#### Profile size (the file or directory the tool writes; – for none)\n\n")
	t.row(head...)
	for _, c := range res.configs[1:] {
		r := []string{c.name}
		any := false
		for _, pr := range res.programs {
			v, n := median(res.cells[pr.name][c.name], profileOf)
			if n == 0 {
				r = append(r, failCell(res.cells[pr.name][c.name]))
				continue
			}
			any = any || v >= 0
			r = append(r, size(v))
		}
		if any {
			t.row(r...)
		}
	}
	p("%s\n", t.String())
	return b.String()
}

// mdEvents is the cost per allocation event table.
func (res *results) mdEvents() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var ap []*program
	for _, pr := range res.programs {
		if pr.allocs && res.events(pr.name) > 0 {
			ap = append(ap, pr)
		}
	}
	// eventTable writes a table of a cost per event, a column per program.
	eventTable := func(title string, progs []*program, name func(*program) string, events bool, f func(p, c string) float64) {
		if len(progs) == 0 {
			return
		}
		p("%s\n\n", title)
		t := table{}
		r := []string{""}
		for _, pr := range progs {
			r = append(r, name(pr))
		}
		t.row(r...)
		if events {
			r = []string{"events (weave's count)"}
			for _, pr := range progs {
				r = append(r, commas(res.events(pr.name)))
			}
			t.row(r...)
		}
		for _, c := range res.configs[1:] {
			r := []string{c.name}
			for _, pr := range progs {
				r = append(r, cell("%.1f", f(pr.name, c.name), res.cells[pr.name][c.name]))
			}
			t.row(r...)
		}
		p("%s\n", t.String())
	}
	eventTable("#### Cost per allocation event: (median − plain's median) / (allocations + frees), ns", ap,
		func(pr *program) string { return pr.name }, true, res.perEvent)
	// Threads: CPU time per event, which the machine's load disturbs less
	// than wall time when the threads outnumber the CPUs.
	var tp []*program
	for _, pr := range ap {
		if pr.threads > 0 {
			tp = append(tp, pr)
		}
	}
	eventTable("#### Threads: CPU cost per allocation event: (median CPU − plain's median CPU) / (allocations + frees), ns", tp,
		func(pr *program) string { return fmt.Sprintf("%s (%d threads)", pr.name, pr.threads) }, false, res.perEventCPU)
	return b.String()
}

// mdDepth is the depth table.
func (res *results) mdDepth() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var t table
	if res.cells["depth-10"] != nil && res.cells["depth-1000"] != nil {
		p("#### Depth: extra time per allocation at depth 10 and 1000 (ns), and their ratio\n\n")
		t.row("configuration", "depth 10", "depth 1000", "1000 / 10")
		for _, c := range res.configs[1:] {
			a, b := res.perAlloc("depth-10", c.name), res.perAlloc("depth-1000", c.name)
			t.row(c.name, cell("%.1f", a, res.cells["depth-10"][c.name]), cell("%.1f", b, res.cells["depth-1000"][c.name]),
				cell("%.2f", b/a, res.cells["depth-1000"][c.name]))
		}
		p("%s\n", t.String())
	}
	return b.String()
}

// mdMemory is the runtime memory table (WEAVE_STATS).
func (res *results) mdMemory() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var t table
	if len(res.stats) > 0 {
		p("#### weave runtime memory (WEAVE_STATS=1, at exit)\n\n")
		t.row("program", "live blocks", "side table", "bytes per live block", "CCT nodes", "(table + nodes) per live block", "(peak RSS − plain's) per live block", "profile")
		for _, pr := range res.programs {
			st := res.stats[pr.name]
			if st == nil {
				continue
			}
			if st.Err != "" {
				t.row(pr.name, "fail", "", "", "", "", "", "")
				continue
			}
			all, extra := "–", "–"
			if st.LiveBlocks > 0 {
				all = fmt.Sprintf("%.1f", float64(st.TableBytes+st.Nodes*st.NodeBytes)/float64(st.LiveBlocks))
				a, _ := median(res.cells[pr.name]["weave"], rssOf)
				b, _ := median(res.cells[pr.name]["plain"], rssOf)
				if !math.IsNaN(a - b) {
					extra = fmt.Sprintf("%.1f", (a-b)/float64(st.LiveBlocks))
				}
			}
			t.row(pr.name, commas(st.LiveBlocks), size(float64(st.TableBytes)), fmt.Sprintf("%.2f", st.PerBlock),
				fmt.Sprintf("%s × %d B", commas(st.Nodes), st.NodeBytes), all, extra, size(float64(st.ProfileBytes)))
		}
		p("%s\n", t.String())
		p("Runtime line of the program with the most live blocks: `%s`\n\n", res.stats[res.mostLive()].Line)
	}
	return b.String()
}

func runtimeOf(s sample) float64 { return float64(s.Runtime) }

// spread is a median with the range of the successful samples' f, in KiB.
func spread(ss []sample, f func(sample) float64) string {
	m, n := median(ss, f)
	if n == 0 {
		return failCell(ss)
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range ss {
		if s.Err == "" {
			lo, hi = math.Min(lo, f(s)), math.Max(hi, f(s))
		}
	}
	return fmt.Sprintf("%.0f (%.0f–%.0f)", m/1024, lo/1024, hi/1024)
}

// mdResident is the peak RSS table of the configurations whose runs said
// the runtime's own resident memory (WEAVE_STATS=1: -weave-env
// weave-stats:WEAVE_STATS=1): medians with their ranges, so that weave's
// own share is read apart from the C library's noise.
func (res *results) mdResident() string {
	var b strings.Builder
	for _, c := range res.configs {
		var t table
		for _, pr := range res.programs {
			ss := res.cells[pr.name][c.name]
			if m, _ := median(ss, runtimeOf); !(m > 0) {
				continue
			}
			if len(t.rows) == 0 {
				t.row("program", "runs", "plain peak RSS, KiB", c.name+" peak RSS, KiB", "ratio of medians", "runtime's own maps, KiB", "own maps / plain's RSS")
			}
			plain := res.cells[pr.name]["plain"]
			pm, n := median(plain, rssOf)
			cm, _ := median(ss, rssOf)
			rm, _ := median(ss, runtimeOf)
			t.row(pr.name, fmt.Sprint(n), spread(plain, rssOf), spread(ss, rssOf), fmt.Sprintf("%.2fx", cm/pm),
				spread(ss, runtimeOf), fmt.Sprintf("%.2f", rm/pm))
		}
		if len(t.rows) > 0 {
			fmt.Fprintf(&b, "#### Peak RSS and the runtime's own memory (%s: median, min–max)\n\n%s\n", c.name, t.String())
		}
	}
	return b.String()
}

// tools are the runs of weave's own tools that were measured.
func (res *results) tools() []*toolRun {
	var out []*toolRun
	for _, tr := range append([]*toolRun{res.report, res.merge}, res.weaving...) {
		if tr != nil {
			out = append(out, tr)
		}
	}
	return out
}

// mdTools is the table of weave's own tools (report, merge, weaving).
func (res *results) mdTools() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	var t table
	if tools := res.tools(); len(tools) > 0 {
		p("#### weave's own tools\n\n")
		t.row("command", "median wall", "median CPU", "peak RSS")
		for _, tr := range tools {
			w, _ := median(tr.samples, wallOf)
			c, _ := median(tr.samples, cpuOf)
			m, _ := median(tr.samples, rssOf)
			t.row(tr.what, cell("%.3f s", w, tr.samples), cell("%.3f s", c, tr.samples), cell("%.1f MiB", mib(m), tr.samples))
		}
		p("%s\n", t.String())
		p("CPU time and peak RSS include the children a command waited for (the preprocessor weave runs).\n\n")
	}
	return b.String()
}

// head is a table's header row: an empty corner, then the programs.
func (res *results) head() []string {
	head := []string{""}
	for _, pr := range res.programs {
		head = append(head, pr.name)
	}
	return head
}

// mostLive is the program whose weave run ended with the most live blocks.
func (res *results) mostLive() string {
	best, n := "", int64(-1)
	for _, pr := range res.programs {
		if st := res.stats[pr.name]; st != nil && st.LiveBlocks > n {
			best, n = pr.name, st.LiveBlocks
		}
	}
	return best
}

// targets is the table of the targets and where weave stands.
func (res *results) targets() string {
	var t table
	t.row("target", "measured", "")
	check := func(name string, v, limit float64, format string) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.row(name, "not measured", "")
			return
		}
		mark := "met"
		if v > limit {
			mark = "**not met**"
		}
		t.row(name, fmt.Sprintf(format, v), mark)
	}
	nan := math.NaN()
	get := func(p string, f func(string) float64) float64 {
		if res.cells[p] == nil {
			return nan
		}
		return f(p)
	}
	check("widgets ≤ 1.5x", get("widgets", func(p string) float64 { return res.slowdown(p, "weave") }), 1.5, "%.2fx")
	check("binary-trees ≤ 2.5x", get("binary-trees", func(p string) float64 { return res.slowdown(p, "weave") }), 2.5, "%.2fx")
	check("Lua ≤ 1.5x", get("lua", func(p string) float64 { return res.slowdown(p, "weave") }), 1.5, "%.2fx")
	check("Lua ≤ 20 ns per allocation event", get("lua", func(p string) float64 { return res.perEvent(p, "weave") }), 20, "%.1f ns")
	worst, wp := nan, ""
	for _, pr := range res.programs {
		if v := res.rssRatio(pr.name, "weave"); !math.IsNaN(v) && (math.IsNaN(worst) || v > worst) {
			worst, wp = v, pr.name
		}
	}
	check("peak RSS ≤ 1.3x (worst program)", worst, 1.3, "%.2fx ("+wp+")")
	d := nan
	if res.cells["depth-10"] != nil && res.cells["depth-1000"] != nil {
		d = res.perAlloc("depth-1000", "weave") / res.perAlloc("depth-10", "weave")
	}
	check("per-allocation cost, depth 1000 / depth 10 ≤ 1.2", d, 1.2, "%.2f")
	one := get("server-1", func(p string) float64 { return res.perEventCPU(p, "weave") })
	for _, n := range []string{"server-2", "server-4", "server-8"} {
		v := get(n, func(p string) float64 { return res.perEventCPU(p, "weave") })
		check(n+": CPU per event ≤ 1.2x server-1's ("+fmt.Sprintf("%.1f ns", one)+")", v/one, 1.2, "%.2fx")
		check(n+": CPU per event ≤ LeakSanitizer's", v-get(n, func(p string) float64 { return res.perEventCPU(p, "lsan") }), 0, "%+.1f ns")
	}
	check("server-2 ≤ 2.0x", get("server-2", func(p string) float64 { return res.slowdown(p, "weave") }), 2.0, "%.2fx")
	pb := nan
	if m := res.mostLive(); m != "" {
		st := res.stats[m]
		if st.LiveBlocks > 0 {
			pb = float64(st.TableBytes+st.Nodes*st.NodeBytes) / float64(st.LiveBlocks)
		}
		check("≤ 24 bytes of runtime memory per live block ("+m+")", pb, 24, "%.1f B")
	}
	if res.merge != nil {
		w, _ := median(res.merge.samples, wallOf)
		m, _ := median(res.merge.samples, rssOf)
		check("weave merge of a test suite's profiles in ≤ 10 s", w, 10, "%.2f s")
		check("… and ≤ 300 MB", m/1e6, 300, "%.0f MB")
	}
	if len(res.weaving) > 0 {
		w, _ := median(res.weaving[0].samples, wallOf)
		m, _ := median(res.weaving[0].samples, rssOf)
		check("sqlite3.c woven in ≤ 1.0 s", w, 1.0, "%.2f s")
		check("… and ≤ 300 MB", m/1e6, 300, "%.0f MB")
	}
	return "#### Targets (weave, everything on)\n\n" + t.String() + "\n"
}

// writeJSON keeps every sample, for whoever wants more than medians.
func (res *results) writeJSON(path string) error {
	out := map[string]any{"date": res.env.date, "command": res.command, "machine": res.env.machine, "cells": res.cells, "stats": res.stats}
	var tools []map[string]any
	for _, tr := range res.tools() {
		tools = append(tools, map[string]any{"what": tr.what, "samples": tr.samples})
	}
	out["tools"] = tools
	b, err := json.MarshalIndent(out, "", "\t")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

const (
	beginMark = "<!-- bench:begin: generated by go run ./bench -record; edits here are replaced -->"
	endMark   = "<!-- bench:end -->"
)

// record replaces the results section of a markdown file (between the
// markers; appended if there are none).
func record(path, md string) error {
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	s := string(b)
	section := beginMark + "\n\n" + md + endMark
	i, j := strings.Index(s, beginMark), strings.Index(s, endMark)
	if i >= 0 && j > i {
		s = s[:i] + section + s[j+len(endMark):]
	} else {
		s = strings.TrimRight(s, "\n") + "\n\n" + section + "\n"
	}
	return os.WriteFile(filepath.Clean(path), []byte(s), 0o644)
}
