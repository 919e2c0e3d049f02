package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// WriteText writes the diff for people: the totals, then each table's rows
// whose counts changed (or whose time did, when sorted by time), at most
// top of them per table (0: all), each with the quantities that changed,
// and the verdicts of the budget rules.
func (d *Diff) WriteText(w io.Writer, base, new string, top int, verdicts []Verdict) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "weave diff\n  base %s\n  new  %s\n\n", base, new)
	if d.Identical {
		fmt.Fprintln(bw, "No change: every count is the same in both profiles (allocations, bytes, bytes in use")
		fmt.Fprintln(bw, "at exit, calls) for every function, chain, site and type.")
		if d.HasTime && d.Totals.Change.TimeNS != 0 {
			fmt.Fprintf(bw, "%s differs by %s (measured, not counted: it varies from run to run).\n", profile.QuantityTime, formatQ(profile.QuantityTime, d.Totals.Change.TimeNS, true))
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintf(bw, "%-16s %16s %16s %16s %8s\n", "TOTALS", "base", "new", "change", "")
	for _, q := range d.shown() {
		fmt.Fprintf(bw, "%-16s %16s %16s %16s %8s\n", quantity(q, &d.Totals), formatQ(q, d.Totals.Base.Get(q), false),
			formatQ(q, d.Totals.New.Get(q), false), formatQ(q, d.Totals.Change.Get(q), true),
			relative(d.Totals.Base.Get(q), d.Totals.Change.Get(q)))
	}
	if d.Totals.AtCalls {
		fmt.Fprintln(bw, "  calls*: the sum includes counts of functions framed at their calls (weave --frames auto), not all their calls")
	}
	if d.Totals.NotCounted {
		fmt.Fprintln(bw, "  calls: the sum leaves out the calls of functions woven without a frame (weave --frames auto), not counted")
	}
	tables := []struct {
		title string
		rows  []Row
	}{
		{"FUNCTIONS (what each allocated itself, its calls, its self time)", d.Functions},
		{fmt.Sprintf("CHAINS (innermost first, %s)", depthText(d.Depth)), d.Chains},
		{"ALLOCATION SITES", d.Sites},
		{"TYPES (sizeof(T) at the allocation sites)", d.Types},
	}
	for _, t := range tables {
		var changed []Row
		for _, r := range t.rows {
			if r.CountsChanged() || d.Sort == profile.QuantityTime && r.Change.TimeNS != 0 {
				changed = append(changed, r)
			}
		}
		fmt.Fprintf(bw, "\n%s, by change in %s: %d of %d changed\n", t.title, d.Sort, len(changed), len(t.rows))
		if top > 0 && len(changed) > top {
			changed = changed[:top]
		}
		if slices.ContainsFunc(changed, func(r Row) bool { return r.AtCalls && r.Change.Calls != 0 }) {
			fmt.Fprintln(bw, profile.AtCallsLegend)
		}
		for _, r := range changed {
			fmt.Fprintf(bw, "\n%s\n", r.Key)
			if r.NotCounted && r.Base.Calls != r.New.Calls {
				fmt.Fprintf(bw, "    %-16s not compared: woven without a frame (weave --frames auto) in a profile, its calls not counted\n", profile.QuantityCalls)
			}
			for _, q := range d.shown() {
				if r.Change.Get(q) == 0 {
					continue
				}
				fmt.Fprintf(bw, "    %-16s %16s -> %-16s %16s %8s\n", quantity(q, &r), formatQ(q, r.Base.Get(q), false),
					formatQ(q, r.New.Get(q), false), formatQ(q, r.Change.Get(q), true), relative(r.Base.Get(q), r.Change.Get(q)))
			}
		}
	}
	if len(verdicts) > 0 {
		fmt.Fprintln(bw, "\nBUDGETS")
		for _, v := range verdicts {
			state := "ok    "
			if v.Broken {
				state = "BROKEN"
			}
			fmt.Fprintf(bw, "%s %s\n", state, v)
		}
	}
	return bw.Flush()
}

// WriteJSON writes the diff as one JSON object: the tables whole (every
// key seen in either profile) and the verdicts.
func (d *Diff) WriteJSON(w io.Writer, base, new string, verdicts []Verdict) error {
	out := struct {
		Base     string    `json:"base"`
		New      string    `json:"new"`
		Diff     *Diff     `json:"diff"`
		Verdicts []Verdict `json:"budgets,omitempty"`
	}{base, new, d, verdicts}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// quantity names q in row r's line: calls ends in "*" when they are those
// of a function framed at its calls (profile.AtCallsLegend).
func quantity(q string, r *Row) string {
	if q == profile.QuantityCalls && r.AtCalls {
		return q + "*"
	}
	return q
}

// shown returns the quantities the text shows: time only when measured.
func (d *Diff) shown() []string {
	if d.HasTime {
		return profile.Quantities
	}
	return profile.Quantities[:len(profile.Quantities)-1]
}

func depthText(depth int) string {
	if depth <= 0 {
		return "whole chains"
	}
	return fmt.Sprintf("up to %d deep", depth)
}

// relative returns the change in percent of base, or "new" from 0.
func relative(base, change int64) string {
	switch {
	case change == 0:
		return ""
	case base == 0:
		return "new"
	}
	return fmt.Sprintf("%+.1f%%", 100*float64(change)/float64(base))
}

// formatQ formats a value of quantity q: time in ms, the rest as integers
// with thousands separators; signed shows a + on positive numbers.
func formatQ(q string, v int64, signed bool) string {
	sign := ""
	if v < 0 {
		sign, v = "-", -v
	} else if signed && v > 0 {
		sign = "+"
	}
	if q == profile.QuantityTime {
		return sign + strconv.FormatFloat(float64(v)/1e6, 'f', 3, 64) + " ms"
	}
	s := strconv.FormatInt(v, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}
