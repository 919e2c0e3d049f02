// Package diff compares two weave profiles: per function, call chain,
// allocation site and type, matched by name, never by node id.
package diff

import (
	"cmp"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// DefaultDepth is the number of functions in a chain, innermost first (as
// in mprof's leak table).
const DefaultDepth = 5

// Counts are the quantities compared (profile.Counts).
type Counts = profile.Counts

// Row is a function, chain, site or type in both profiles.
type Row struct {
	Key    string `json:"key"`
	Base   Counts `json:"base"`
	New    Counts `json:"new"`
	Change Counts `json:"change"` // New - Base
	// AtCalls: the calls are those of a function framed at its calls
	// (--frames auto) in either profile, which counts only its calls that
	// may allocate (or its runs that made one), not all its calls; of the
	// totals, that some function is.
	AtCalls bool `json:"calls_at_calls,omitempty"`
	// NotCounted: the function (a chain's innermost) was woven without a
	// frame (--frames auto) in either profile, where its calls were not
	// counted: its calls are not compared (Change.Calls is 0); of the
	// totals, that some function was, whose calls their sum leaves out.
	NotCounted bool `json:"calls_not_counted,omitempty"`
}

// CountsChanged reports whether a count other than time changed.
func (r *Row) CountsChanged() bool {
	c := r.Change
	c.TimeNS = 0
	return c != Counts{}
}

// Diff is the comparison of two profiles. Each table holds every key seen in
// either profile, sorted by the largest change of Sort.
type Diff struct {
	Depth int    `json:"depth"`
	Sort  string `json:"sort"`
	// Identical: every count but time is the same in both profiles.
	Identical bool `json:"identical"`
	HasTime   bool `json:"has_time"` // either profile has times
	Totals    Row  `json:"totals"`
	// Functions: what each function allocated itself (hidden allocations
	// by unwoven code included, charged to their woven caller), its calls
	// and its self time.
	Functions []Row `json:"functions"`
	// Chains: the same by calling context, cut to its innermost Depth
	// functions ("f <- caller <- ...").
	Chains []Row `json:"chains"`
	Sites  []Row `json:"sites"` // allocation call sites: "function file:line op"
	Types  []Row `json:"types"` // sizeof(T) types at the allocation sites
	// Inclusive are the counts of each function with its callees, each
	// allocation and ns counted once, and its own calls: the values of
	// budget rules.
	Inclusive map[string]*Row `json:"-"`
}

// Compare compares base with new; chains are cut to depth functions (0 or
// less: whole chains), tables sorted by the change of sort (a quantity;
// "" is bytes_allocated).
func Compare(base, new *profile.Profile, depth int, sort string) *Diff {
	if sort == "" {
		sort = profile.QuantityBytes
	}
	names := newNamer(base, new)
	d := &Diff{Depth: max(depth, 0), Sort: sort, Inclusive: map[string]*Row{}}
	tables := [4]map[string]*Row{{}, {}, {}, {}}
	frameless := map[string]bool{} // labels of functions woven without a frame in either profile
	for side, p := range []*profile.Profile{base, new} {
		d.HasTime = d.HasTime || p.HasTime()
		a := aggregate(p, names, d.Depth)
		for i, m := range []map[string]*Counts{a.funcs, a.chains, a.sites, a.types} {
			merge(tables[i], m, side, a.atCalls)
		}
		merge(d.Inclusive, a.incl, side, a.atCalls)
		d.Totals.AtCalls = d.Totals.AtCalls || len(a.atCalls) > 0
		d.Totals.NotCounted = d.Totals.NotCounted || len(a.frameless) > 0
		maps.Copy(frameless, a.frameless)
		if side == 0 {
			d.Totals.Base = a.total
		} else {
			d.Totals.New = a.total
		}
	}
	for _, m := range []map[string]*Row{tables[0], tables[1], d.Inclusive} {
		for k, r := range m {
			if frameless[innermost(k)] {
				r.NotCounted, r.Change.Calls = true, 0
			}
		}
	}
	d.Totals.Change = d.Totals.New.Sub(d.Totals.Base)
	d.Identical = !d.Totals.CountsChanged()
	for i, rows := range []*[]Row{&d.Functions, &d.Chains, &d.Sites, &d.Types} {
		*rows = sorted(tables[i], sort)
		for j := range *rows {
			if (*rows)[j].CountsChanged() {
				d.Identical = false
			}
		}
	}
	return d
}

// merge adds one side's counts to the rows; atCalls marks the function
// and chain keys whose calls are those of a function framed at its calls.
func merge(into map[string]*Row, m map[string]*Counts, side int, atCalls map[string]bool) {
	for k, c := range m {
		r := into[k]
		if r == nil {
			r = &Row{Key: k}
			into[k] = r
		}
		if side == 0 {
			r.Base = *c
		} else {
			r.New = *c
		}
		r.Change = r.New.Sub(r.Base)
		r.AtCalls = r.AtCalls || atCalls[k]
	}
}

// innermost returns the label of a function or chain key's innermost
// function.
func innermost(key string) string {
	if _, rest, ok := strings.Cut(key, " (hidden) <- "); ok {
		key = rest
	}
	label, _, _ := strings.Cut(key, " <- ")
	return label
}

// sorted returns the rows by decreasing magnitude of change of the sort
// quantity, then of the others, then by key.
func sorted(m map[string]*Row, sort string) []Row {
	rows := make([]Row, 0, len(m))
	for _, r := range m {
		rows = append(rows, *r)
	}
	abs := func(v int64) int64 {
		if v < 0 {
			return -v
		}
		return v
	}
	slices.SortFunc(rows, func(a, b Row) int {
		if c := cmp.Compare(abs(b.Change.Get(sort)), abs(a.Change.Get(sort))); c != 0 {
			return c
		}
		for _, q := range profile.Quantities {
			if c := cmp.Compare(abs(b.Change.Get(q)), abs(a.Change.Get(q))); c != 0 {
				return c
			}
		}
		return strings.Compare(a.Key, b.Key)
	})
	return rows
}

// namer names functions the same way for both profiles: by name, with the
// file when two functions of that name exist in either.
type namer struct{ ambiguous map[string]bool }

func newNamer(ps ...*profile.Profile) *namer {
	files := map[string]map[string]bool{}
	for _, p := range ps {
		for _, f := range p.Funcs {
			id := f.Key()
			if files[id.Name] == nil {
				files[id.Name] = map[string]bool{}
			}
			files[id.Name][id.File] = true
		}
	}
	n := &namer{ambiguous: map[string]bool{}}
	for name, fs := range files {
		n.ambiguous[name] = len(fs) > 1
	}
	return n
}

func (n *namer) name(f *profile.Func) string {
	if f == nil {
		return "(unwoven)"
	}
	if id := f.Key(); n.ambiguous[id.Name] {
		return id.Name + " (" + id.File + ")"
	}
	return f.Name
}

// aggregated are one profile's counts by key.
type aggregated struct {
	total                             Counts
	funcs, chains, sites, types, incl map[string]*Counts
	// atCalls: the function labels and chain keys whose innermost function
	// is framed at its calls.
	atCalls map[string]bool
	// frameless: the labels of the functions woven without a frame.
	frameless map[string]bool
}

// OutsideName names the time spent outside woven functions.
const OutsideName = "(outside woven functions)"

func aggregate(p *profile.Profile, names *namer, depth int) *aggregated {
	a := &aggregated{funcs: map[string]*Counts{}, chains: map[string]*Counts{}, sites: map[string]*Counts{},
		types: map[string]*Counts{}, incl: map[string]*Counts{}, atCalls: map[string]bool{}, frameless: map[string]bool{}}
	for _, f := range p.Funcs {
		if f.Frameless {
			a.frameless[names.name(f)] = true
		}
	}
	add := func(m map[string]*Counts, k string, c *Counts) {
		if m[k] == nil {
			m[k] = &Counts{}
		}
		m[k].Add(c)
	}
	var labels []string // innermost first
	seen := map[string]bool{}
	p.WalkStacks(func(s *profile.Stack) {
		n := s.Node
		c := Counts{Calls: int64(n.Calls), TimeNS: int64(n.Time)}
		if n.Kind == profile.KindAlloc {
			h := &n.Heap
			c = Counts{Allocs: int64(h.TotalAllocs()), Bytes: int64(h.TotalBytes()),
				InUse: int64(h.TotalBytes()) - int64(h.TotalFreedBytes())}
		}
		a.total.Add(&c)
		labels = labels[:0]
		var hidden *profile.Site
		atCalls := false // the innermost woven function is framed at its calls
		for i := len(s.Frames) - 1; i >= 0; i-- {
			switch f := s.Frames[i]; {
			case f.Outside:
				labels = append(labels, OutsideName)
			case f.Hidden != nil:
				hidden = f.Hidden
			default:
				atCalls = atCalls || len(labels) == 0 && f.Func.CallFramed
				labels = append(labels, names.name(f.Func))
			}
		}
		if len(labels) == 0 {
			labels = append(labels, names.name(nil))
		}
		add(a.funcs, labels[0], &c)
		chain := labels
		if depth > 0 && len(chain) > depth {
			chain = chain[:depth]
		}
		key := strings.Join(chain, " <- ")
		if hidden != nil {
			key = hidden.Op + " (hidden) <- " + key
		}
		add(a.chains, key, &c)
		if atCalls {
			a.atCalls[labels[0]], a.atCalls[key] = true, true
		}
		clear(seen)
		under := c
		under.Calls = 0 // a function's calls are its own, not its callees'
		for _, l := range labels {
			if !seen[l] {
				seen[l] = true
				add(a.incl, l, &under)
			}
		}
		add(a.incl, labels[0], &Counts{Calls: c.Calls})
		if n.Kind != profile.KindAlloc {
			return
		}
		site, typ := n.Site, n.Site.Type
		if hidden != nil {
			add(a.sites, labels[0]+" "+site.Op+" (hidden)", &c)
			typ = "(hidden)"
		} else {
			add(a.sites, labels[0]+" "+filepath.Base(site.File)+":"+strconv.Itoa(site.Line)+" "+site.Op, &c)
		}
		if typ == "" {
			typ = "(no sizeof type)"
		}
		add(a.types, typ, &c)
	})
	return a
}
