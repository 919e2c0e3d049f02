package rt

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// encode writes st in the weave profile format (profile/format.go): the
// functions and sites reached, one thread (all goroutines share the tree:
// a goroutine started by a woven go statement grows under its spawner's
// context, one started elsewhere under the root), the nodes with their
// calls, heap counters and times, the bins.
func (st *state) encode(w io.Writer, end string) error {
	e := &encoder{w: bufio.NewWriter(w), strs: map[string]int{}, funcs: map[*Func]int{}, sites: map[*Site]int{}}
	fmt.Fprintf(e.w, "weave profile 1\n")
	t := st.totals()
	st.encodeMeta(e, t, end)

	// Strings, functions and sites, in first use by the nodes.
	var funcs []*Func
	var sites []*Site
	addFunc := func(f *Func) {
		if _, ok := e.funcs[f]; !ok {
			e.funcs[f] = len(funcs)
			funcs = append(funcs, f)
		}
	}
	for _, n := range st.nodes {
		if n.fn != nil {
			addFunc(n.fn)
		}
		if n.site != nil {
			addFunc(n.site.Func)
			if _, ok := e.sites[n.site]; !ok {
				e.sites[n.site] = len(sites)
				sites = append(sites, n.site)
			}
		}
	}
	for _, f := range funcs {
		e.intern(f.Name)
		e.intern(f.File)
	}
	for _, s := range sites {
		e.intern(s.File)
		e.intern(s.Op)
		if s.Type != "" {
			e.intern(s.Type)
		}
	}
	for i, s := range e.strList {
		s = strings.ReplaceAll(s, `\`, `\\`)
		e.record("S %d %s", i, strings.ReplaceAll(s, "\n", `\n`))
	}
	for i, f := range funcs {
		if f.Frameless {
			e.record("F %d %d %d %d 1", i, e.strs[f.Name], e.strs[f.File], f.Line)
		} else {
			e.record("F %d %d %d %d", i, e.strs[f.Name], e.strs[f.File], f.Line)
		}
	}
	for i, s := range sites {
		typ := -1
		if s.Type != "" {
			typ = e.strs[s.Type]
		}
		e.record("A %d %d %d %d %d %d %d %d", i, e.funcs[s.Func], e.strs[s.File], s.Line, s.Col, e.strs[s.Op], typ, s.Size)
	}
	e.record("T 0 %d", os.Getpid())
	for _, n := range st.nodes {
		switch {
		case n.parent == nil:
			e.record("N %d -1 0 R -1", n.id)
		case n.fn != nil:
			e.record("N %d %d 0 F %d", n.id, n.parent.id, e.funcs[n.fn])
		default:
			e.record("N %d %d 0 A %d", n.id, n.parent.id, e.sites[n.site])
		}
	}
	for _, n := range st.nodes {
		if c := n.totalCalls(); c != 0 {
			e.record("C %d %d", n.id, c)
		}
	}
	for _, n := range st.nodes {
		if n.site != nil {
			st.heapRecord(e, n)
		}
	}
	st.encodeBins(e, t)
	for _, n := range st.nodes {
		if t := n.selfNs.Load(); t > 0 && n.site == nil {
			e.record("D %d %d", n.id, t)
		}
	}
	fmt.Fprintf(e.w, "E %d\n", e.records)
	return e.w.Flush()
}

// heapRecord writes n's H record; frees are those the collector made
// (exact nodes) or the allocations minus the estimated share still in
// use, in n's size classes.
func (st *state) heapRecord(e *encoder, n *node) {
	var a, b, f, g [4]uint64
	var total, totalBytes uint64
	for c := range 4 {
		a[c], b[c] = n.allocsIn(c), n.bytesIn(c)
		total += a[c]
		totalBytes += b[c]
	}
	if total == 0 {
		return
	}
	u := st.inuse[n]
	if st.exactNodes[n] {
		for c := range 4 {
			f[c], g[c] = a[c]-min(a[c], u.byClass[c][0]), b[c]-min(b[c], u.byClass[c][1])
		}
	} else if st.rate > 0 {
		f, g = a, b
		// Charge the blocks in use to the size classes in order of their
		// share, largest class first (one class in the common case).
		liveA, liveB := u.blocks, u.bytes
		for c := 3; c >= 0 && (liveA > 0 || liveB > 0); c-- {
			da, db := min(liveA, f[c]), min(liveB, g[c])
			f[c] -= da
			g[c] -= db
			liveA -= da
			liveB -= db
		}
	}
	e.record("H %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", n.id,
		a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], f[0], f[1], f[2], f[3], g[0], g[1], g[2], g[3])
}

type encoder struct {
	w       *bufio.Writer
	records int
	strs    map[string]int
	strList []string
	funcs   map[*Func]int
	sites   map[*Site]int
}

func (e *encoder) record(format string, args ...any) {
	fmt.Fprintf(e.w, format, args...)
	e.w.WriteByte('\n')
	e.records++
}

func (e *encoder) meta(k, v string) { e.record("M %s %s", k, v) }

func (e *encoder) intern(s string) {
	if _, ok := e.strs[s]; !ok {
		e.strs[s] = len(e.strList)
		e.strList = append(e.strList, s)
	}
}

// inUseMeta is the profile's account of how frees and in use were had.
func (st *state) inUseMeta(t totals) string {
	var parts []string
	if t.exactNodes > 0 {
		how := "each block's address in a shadow of the heap, the live ones those of a heap dump after a collection at exit (a block freed whose place an unwoven allocation of its size took, live at exit, would count in use)"
		if inuseMode == inuseCleanup {
			how = "each block followed by a runtime cleanup, in use after the collection at exit"
		}
		s := fmt.Sprintf("exact for %d allocation contexts (%s; what is in use is reachable)", t.exactNodes, how)
		if t.tiny > 0 {
			s += fmt.Sprintf(", but for up to %d blocks under 16 bytes that may share a block with a live one", t.tiny)
		}
		parts = append(parts, s)
	}
	switch {
	case t.estNodes == 0:
	case st.rate > 0:
		s := fmt.Sprintf("estimated for %d allocation contexts from the runtime's heap profile after a GC at exit, per file:line, sampled every %d bytes (a context's in use may be off by up to its bytes allocated)", t.estNodes, st.rate)
		if noDump != "" {
			s += "; no heap dump: " + noDump
		}
		parts = append(parts, s)
	default:
		parts = append(parts, fmt.Sprintf("not known for %d allocation contexts (WEAVE_INUSE=0): nothing counted as freed", t.estNodes))
	}
	if len(parts) == 0 {
		return "exact (nothing allocated)"
	}
	return strings.Join(parts, "; ")
}

// encodeMeta writes the M records.
func (st *state) encodeMeta(e *encoder, t totals, end string) {
	e.meta("pid", fmt.Sprint(os.Getpid()))
	e.meta("ppid", fmt.Sprint(os.Getppid()))
	e.meta("argv", strings.ReplaceAll(strings.Join(argv, " "), "\n", " "))
	e.meta("start_ns", fmt.Sprint(startWall.UnixNano()))
	e.meta("end_ns", fmt.Sprint(time.Now().UnixNano()))
	e.meta("complete", "1")
	e.meta("runtime", "go1 "+runtime.Version())
	e.meta("end", end)
	e.meta("lang", "go")
	exprs := 0
	for _, n := range st.nodes {
		if n.site != nil && n.site.Expr {
			exprs++
		}
	}
	if exprs == 0 {
		e.meta("go_counts", "exact (the allocation expressions of woven code that the compiler's escape analysis puts on the heap; the calls of framed functions)")
	} else {
		e.meta("go_counts", fmt.Sprintf("exact (the allocation expressions of woven code that the compiler's escape analysis puts on the heap; %d contexts of sites woven without it count every evaluation; the calls of framed functions)", exprs))
	}
	e.meta("go_inuse", st.inUseMeta(t))
	if t.estNodes == 0 {
		e.meta("go_inuse_exact", "1")
	}
	for i, n := range st.goroutines {
		e.meta("go_goroutine_"+strconv.Itoa(i), chainOf(n))
	}
	switch {
	case timing:
		e.meta("time_mode", "exact")
		e.meta("time_clock", "monotonic")
	case sampling:
		e.meta("time_mode", "sampled")
		e.meta("time_clock", "goroutine_wall")
		e.meta("time_period_ns", strconv.FormatInt(int64(samplePeriod), 10))
		e.meta("time_samples", strconv.FormatUint(samples.Load(), 10))
	default: // no time, but the time tables' calls, as the C runtime's
		e.meta("time_mode", "off")
	}
}

// encodeBins writes the B records: the bins counted as allocations were
// recorded, and those of fixed-size sites from their nodes; their frees
// the collector's (every block followed); with the heap's shadow, exact
// for the blocks in it and, for the others (binUnfollowed: maps,
// strings), the share of the estimated contexts' allocations estimated
// freed; else that share of all allocations (before, one map made every
// bin's frees that share: 2 of 10 structs a global kept freed).
func (st *state) encodeBins(e *encoder, t totals) {
	ta, tb, la, lb := t.allocs, t.bytes, t.exactBlocks+t.estBlocks, t.exactB+t.estB
	fa, fb := 0.0, 0.0
	if (st.rate > 0 || t.estNodes == 0) && ta > 0 && tb > 0 {
		fa, fb = 1-float64(la)/float64(ta), 1-float64(lb)/float64(tb)
	}
	var binA, binB [len(bins)]uint64
	for size := range bins {
		binA[size], binB[size] = bins[size].allocs.Load(), bins[size].bytes.Load()
	}
	for _, n := range st.nodes {
		if n.site != nil && n.site.Fixed {
			for c := range 4 {
				binA[binOf(n.site.Size)] += n.allocsIn(c)
				binB[binOf(n.site.Size)] += n.bytesIn(c)
			}
		}
	}
	ea, eb := fa, fb // the estimated contexts' share freed
	if ena, enb := st.estAllocs(); st.rate > 0 && ena > 0 && enb > 0 {
		ea, eb = max(0, 1-float64(t.estBlocks)/float64(ena)), max(0, 1-float64(t.estB)/float64(enb))
	}
	for size := range bins {
		if a := binA[size]; a != 0 {
			b := binB[size]
			f, g := uint64(float64(a)*fa+0.5), uint64(float64(b)*fb+0.5)
			switch {
			case t.estNodes == 0: // every block followed: the bins' own frees
				f, g = binFrees[size].allocs.Load(), binFrees[size].bytes.Load()
				if st.binLive != nil {
					f, g = a-min(a, st.binLive[size].blocks), b-min(b, st.binLive[size].bytes)
				}
			case st.binLive != nil && !binMixed.Load(): // the shadow's, and a share of the others'
				ua, ub := min(a, binUnfollowed[size].allocs.Load()), min(b, binUnfollowed[size].bytes.Load())
				f = a - ua - min(a-ua, st.binLive[size].blocks) + uint64(float64(ua)*ea+0.5)
				g = b - ub - min(b-ub, st.binLive[size].bytes) + uint64(float64(ub)*eb+0.5)
			}
			e.record("B %d %d %d %d %d", size, a, f, b, g)
		}
	}
}

// estAllocs returns the allocations and bytes of the estimated contexts.
func (st *state) estAllocs() (a, b uint64) {
	for _, n := range st.nodes {
		if n.site != nil && !st.exactNodes[n] {
			for c := range 4 {
				a += n.allocsIn(c)
				b += n.bytesIn(c)
			}
		}
	}
	return
}
