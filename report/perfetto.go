package report

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/tracepoints"
)

func init() { Register("perfetto", perfettoRenderer{}) }

// perfettoRenderer writes Chrome's Trace Event Format (JSON), which
// ui.perfetto.dev and chrome://tracing open: a track per thread with the
// traced functions' slices (B/E) and instant events for the traced
// allocation sites' allocations and frees (size, address, site, type in
// args), a counter track of the heap in use from the heap timeline, the
// marks as global instant events and the regions' spans on tracks of
// their own.
// Events stream from the trace file one block at a time, so a large trace
// is exported in a fixed amount of memory. The shape is uftrace's
// `dump --chrome`.
type perfettoRenderer struct{}

// traceWriter writes one JSON event per line into the traceEvents array.
type traceWriter struct {
	w     *bufio.Writer
	first bool
	err   error
}

func (t *traceWriter) event(v any) {
	if t.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.err = err
		return
	}
	t.raw(b)
}

// raw writes one event already encoded.
func (t *traceWriter) raw(b []byte) {
	if t.err != nil {
		return
	}
	if !t.first {
		t.w.WriteString(",\n")
	}
	t.first = false
	_, t.err = t.w.Write(b)
}

// us converts ns to the format's microseconds.
func us(ns uint64) float64 { return float64(ns) / 1000 }

func (perfettoRenderer) Render(w io.Writer, r *Report) error {
	p := r.prof
	pid, _ := strconv.Atoi(r.Metadata["pid"])
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n")
	tw := &traceWriter{w: bw, first: true}
	type m = map[string]any
	tw.event(m{"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": m{"name": r.Program}})
	tids := map[uint32]int{}
	for _, th := range p.Threads {
		tids[uint32(th.ID)] = int(th.TID)
		tw.event(m{"ph": "M", "name": "thread_name", "pid": pid, "tid": int(th.TID), "args": m{"name": fmt.Sprintf("thread %d", th.ID)}})
	}
	for _, pt := range p.Timeline {
		tw.event(m{"ph": "C", "name": "heap in use", "pid": pid, "tid": 0, "ts": us(pt.NS),
			"args": m{"bytes": pt.Bytes, "blocks": pt.Blocks}})
	}
	marksEvents(tw, p, pid, tids)
	if r.trace != "" {
		if err := traceEvents(tw, p, pid, r.trace); err != nil {
			return err
		}
	}
	if tw.err != nil {
		return tw.err
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// regionTrack is the offset of the tracks of the regions' spans: thread
// N's regions are drawn on track regionTrack+N, beside its own, so that
// their merged spans never cut across the thread's function slices.
const regionTrack = 1 << 30

// marksEvents writes the marks (WEAVE_MARK, weave mark) as global instant
// events, and the regions' spans as complete events on a track of their
// own per thread.
func marksEvents(tw *traceWriter, p *profile.Profile, pid int, tids map[uint32]int) {
	type m = map[string]any
	for _, mk := range p.Marks {
		tid := 0
		if mk.Thread != nil {
			tid = tids[uint32(mk.Thread.ID)]
		}
		tw.event(m{"ph": "i", "s": "g", "name": "mark " + mk.Label, "cat": "mark", "pid": pid, "tid": tid, "ts": us(mk.NS),
			"args": m{"mark": mk.Gen, "label": mk.Label, "bytes": mk.Bytes, "blocks": mk.Blocks, "allocs": mk.Allocs, "frees": mk.Frees}})
	}
	named := map[int]bool{}
	for _, s := range p.Regions {
		tid := regionTrack + s.Thread.ID
		if !named[tid] {
			named[tid] = true
			tw.event(m{"ph": "M", "name": "thread_name", "pid": pid, "tid": tid, "args": m{"name": fmt.Sprintf("regions of thread %d", s.Thread.ID)}})
		}
		tw.event(m{"ph": "X", "name": s.Label, "cat": "region", "pid": pid, "tid": tid, "ts": us(s.T0), "dur": us(s.T1 - s.T0),
			"args": m{"runs": s.Count}})
	}
}

// traceEvents streams the events of the trace file into tw. Each event is
// formatted by appending to one buffer, with the JSON of its node's name
// and site encoded once per node: millions of events per second, where
// json.Marshal of a map per event managed about 200,000.
func traceEvents(tw *traceWriter, p *profile.Profile, pid int, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	frags := map[uint32]*eventFrag{}
	var b []byte
	each := func(e tracepoints.Event) error {
		fr := frags[e.Node]
		if fr == nil {
			n := p.TraceNodes[e.Node]
			if n == nil {
				return fmt.Errorf("%s: event of node %d, which the profile does not map (Q records): a trace of another run?", path, e.Node)
			}
			fr = newEventFrag(n)
			frags[e.Node] = fr
		}
		b = b[:0]
		switch e.Kind {
		case tracepoints.Enter, tracepoints.Exit:
			ph := `{"ph":"B","name":`
			if e.Kind == tracepoints.Exit {
				ph = `{"ph":"E","name":`
			}
			b = append(b, ph...)
			b = append(b, fr.funcName...)
			b = append(b, `,"cat":"function"`...)
			b = eventWhere(b, pid, e)
			b = append(b, '}')
		case tracepoints.Alloc, tracepoints.Free:
			b = append(b, `{"ph":"i","s":"t","name":`...)
			if e.Kind == tracepoints.Alloc {
				b = append(b, fr.allocName...)
			} else {
				b = append(b, fr.freeName...)
			}
			b = append(b, `,"cat":"memory"`...)
			b = eventWhere(b, pid, e)
			b = append(b, `,"args":{"size":`...)
			b = strconv.AppendUint(b, e.Size, 10)
			b = append(b, `,"addr":"0x`...)
			b = strconv.AppendUint(b, e.Addr, 16)
			b = append(b, '"')
			b = append(b, fr.siteArgs...)
			b = append(b, "}}"...)
		default:
			return nil
		}
		tw.raw(b)
		return tw.err
	}
	var stop error // each's error: named already, or the output's
	err = tracepoints.Read(f, func(e tracepoints.Event) error { stop = each(e); return stop })
	if err != nil && (stop == nil || !errors.Is(err, stop)) {
		return fmt.Errorf("%s: %w", path, err) // the trace file's own damage
	}
	return err
}

// eventWhere appends an event's pid, tid and timestamp fields.
func eventWhere(b []byte, pid int, e tracepoints.Event) []byte {
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	b = append(b, `,"tid":`...)
	b = strconv.AppendInt(b, int64(e.Tid), 10)
	b = append(b, `,"ts":`...)
	return strconv.AppendFloat(b, us(e.NS), 'f', -1, 64)
}

// eventFrag holds the JSON fragments of one node's events.
type eventFrag struct {
	funcName            []byte // "name" of its function slices
	allocName, freeName []byte // "name" of its allocation and free instants
	siteArgs            []byte // ,"site":…,"op":…[,"type":…] for their args
}

func newEventFrag(n *profile.Node) *eventFrag {
	q := func(s string) []byte { b, _ := json.Marshal(s); return b }
	fr := &eventFrag{funcName: q("?"), allocName: q("alloc"), freeName: q("free")}
	if n.Func != nil {
		fr.funcName = q(n.Func.Name)
	}
	if s := n.Site; s != nil {
		fr.allocName, fr.freeName = q("alloc "+s.Op), q("free "+s.Op)
		fr.siteArgs = fmt.Appendf(nil, `,"site":%s,"op":%s`, q(fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)), q(s.Op))
		if s.Type != "" {
			fr.siteArgs = fmt.Appendf(fr.siteArgs, `,"type":%s`, q(s.Type))
		}
	}
	return fr
}
