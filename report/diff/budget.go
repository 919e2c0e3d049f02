package diff

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/weave-profiler/weave/profile"
)

// A Rule is a budget: a condition on the new profile that, when true,
// breaks the build (weave diff --fail-if). Its syntax:
//
//	QUANTITY[(FUNCTION)] OP LIMIT
//
// QUANTITY is allocs, bytes_allocated (or bytes), bytes_in_use, calls or
// time; with (FUNCTION) it is that function's, its callees included (but
// calls are its own calls), of every function of that name if the name is
// not one of the diff's labels; else the whole profile's. OP is >, >=, < or <=. LIMIT is
//
//	N     the new value       allocs(parse_config) > 12
//	+N    the change          bytes_in_use > +64K    (-N: a decrease)
//	+N%   the relative change bytes_allocated > +5%
//
// N may carry a unit: K, M, G (or KiB, MiB, GiB: powers of 1024) for any quantity; ns, us,
// ms, s for time, whose plain unit is ns.
type Rule struct {
	Text     string
	Quantity string
	Func     string // "" for the whole profile
	Op       string
	Limit    float64
	Change   bool // the limit is on New-Base
	Percent  bool // ... relative to Base, in percent
}

var ruleRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*([a-z_]+)\s*(?:\(\s*([^()]*?)\s*\))?\s*(>=|<=|>|<)\s*([+-]?)([0-9]+(?:\.[0-9]+)?)\s*(%|[KMG](?:iB)?|ns|us|ms|s)?\s*$`)
})

// ParseRule parses a budget rule.
func ParseRule(s string) (*Rule, error) {
	m := ruleRE().FindStringSubmatch(s)
	if m == nil {
		return nil, fmt.Errorf("budget rule %q: want QUANTITY[(FUNCTION)] >|>=|<|<= [+|-]N[unit|%%] (units K, M, G or KiB, MiB, GiB; ns, us, ms, s for time), e.g. 'bytes_in_use > +5%%'", s)
	}
	r := &Rule{Text: strings.TrimSpace(s), Func: m[2], Op: m[3], Change: m[4] != ""}
	switch m[1] {
	case "bytes":
		r.Quantity = profile.QuantityBytes
	case profile.QuantityAllocs, profile.QuantityBytes, profile.QuantityInUse, profile.QuantityCalls, profile.QuantityTime:
		r.Quantity = m[1]
	default:
		return nil, fmt.Errorf("budget rule %q: unknown quantity %q (want %s)", s, m[1], strings.Join(profile.Quantities, ", "))
	}
	v, _ := strconv.ParseFloat(m[5], 64)
	if m[4] == "-" {
		v = -v
	}
	switch unit := m[6]; unit {
	case "":
	case "%":
		if !r.Change {
			return nil, fmt.Errorf("budget rule %q: a percentage is a change: write +%s%% or -%s%%", s, m[5], m[5])
		}
		r.Percent = true
	case "K", "M", "G", "KiB", "MiB", "GiB":
		v *= math.Pow(1024, float64(strings.Index("KMG", unit[:1])+1))
	default:
		if r.Quantity != profile.QuantityTime {
			return nil, fmt.Errorf("budget rule %q: unit %s is for time", s, unit)
		}
		v *= map[string]float64{"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
	}
	r.Limit = v
	return r, nil
}

// Verdict is a rule checked against a diff.
type Verdict struct {
	Rule   string  `json:"rule"`
	Base   int64   `json:"base"`
	New    int64   `json:"new"`
	Value  float64 `json:"value"` // what was compared with the limit: New, the change, or the change in %
	Broken bool    `json:"broken"`
	// AtCalls: a whole-profile calls rule whose sum includes counts of
	// functions framed at their calls (--frames auto), not all their calls.
	AtCalls bool `json:"calls_at_calls,omitempty"`
	// NotCounted: a whole-profile calls rule whose sum leaves out the
	// calls of functions woven without a frame (--frames auto).
	NotCounted bool `json:"calls_not_counted,omitempty"`
}

// String tells the rule and its numbers: "bytes_in_use > +5%: 1000 -> 1200 (+20.0%)".
func (v Verdict) String() string {
	d := v.New - v.Base
	rel := "new"
	if v.Base != 0 {
		rel = fmt.Sprintf("%+.1f%%", 100*float64(d)/float64(v.Base))
	}
	s := fmt.Sprintf("%s: %d -> %d (%+d, %s)", v.Rule, v.Base, v.New, d, rel)
	if v.AtCalls {
		s += ", calls* including functions framed at their calls (weave --frames auto), not all their calls"
	}
	if v.NotCounted {
		s += ", calls leaving out functions woven without a frame (weave --frames auto)"
	}
	return s
}

// Check evaluates r on d. It fails when the rule names a function that
// neither profile has, or counts the calls of a function framed at its
// calls or woven without a frame, which are not all its calls.
func (r *Rule) Check(d *Diff) (Verdict, error) {
	row := d.Totals
	if r.Func != "" {
		var ok bool
		if row, ok = d.inclusive(r.Func); !ok {
			return Verdict{}, fmt.Errorf("budget rule %q: no function %s in either profile", r.Text, r.Func)
		}
		if why := row.partialCalls(); r.Quantity == profile.QuantityCalls && why != "" {
			return Verdict{}, fmt.Errorf("budget rule %q: %s %s; weave with --frames all or --frame %s to budget them", r.Text, r.Func, why, r.Func)
		}
	}
	v := Verdict{Rule: r.Text, Base: row.Base.Get(r.Quantity), New: row.New.Get(r.Quantity),
		AtCalls:    r.Func == "" && r.Quantity == profile.QuantityCalls && d.Totals.AtCalls,
		NotCounted: r.Func == "" && r.Quantity == profile.QuantityCalls && d.Totals.NotCounted}
	v.Value = float64(v.New)
	switch {
	case r.Percent && v.Base == 0:
		v.Value = 0
		if v.New != 0 {
			v.Value = math.Copysign(math.Inf(1), float64(v.New))
		}
	case r.Percent:
		v.Value = 100 * float64(v.New-v.Base) / float64(v.Base)
	case r.Change:
		v.Value = float64(v.New - v.Base)
	}
	switch r.Op {
	case ">":
		v.Broken = v.Value > r.Limit
	case ">=":
		v.Broken = v.Value >= r.Limit
	case "<":
		v.Broken = v.Value < r.Limit
	case "<=":
		v.Broken = v.Value <= r.Limit
	}
	return v, nil
}

// partialCalls says why the row's calls are not all its function's calls
// (--frames auto), or "".
func (r *Row) partialCalls() string {
	switch {
	case r.NotCounted:
		return "is woven without a frame (weave --frames auto), whose calls are not counted"
	case r.AtCalls:
		return "is framed at its calls (weave --frames auto), which counts only its calls that may allocate, not all its calls"
	}
	return ""
}

// inclusive returns the inclusive counts of a function by label, or of
// every function of that name.
func (d *Diff) inclusive(name string) (Row, bool) {
	if r, ok := d.Inclusive[name]; ok {
		return *r, true
	}
	var sum Row
	found := false
	for label, r := range d.Inclusive {
		if strings.HasPrefix(label, name+" (") {
			sum.Base.Add(&r.Base)
			sum.New.Add(&r.New)
			sum.AtCalls = sum.AtCalls || r.AtCalls
			sum.NotCounted = sum.NotCounted || r.NotCounted
			found = true
		}
	}
	sum.Change = sum.New.Sub(sum.Base)
	return sum, found
}
