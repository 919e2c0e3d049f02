package report

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"weave/profile"
	"weave/tracepoints"
)

func init() { Register("perfetto", perfettoRenderer{}) }

// perfettoRenderer writes Chrome's Trace Event Format (JSON), which
// ui.perfetto.dev and chrome://tracing open: a track per thread with the
// traced functions' slices (B/E) and instant events for the traced
// allocation sites' allocations and frees (size, address, site, type in
// args), and a counter track of the heap in use from the heap timeline.
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

// traceEvents streams the events of the trace file into tw.
func traceEvents(tw *traceWriter, p *profile.Profile, pid int, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	type m = map[string]any
	return tracepoints.Read(f, func(e tracepoints.Event) error {
		n := p.TraceNodes[e.Node]
		if n == nil {
			return fmt.Errorf("%s: event of node %d, which the profile does not map (Q records): a trace of another run?", path, e.Node)
		}
		ts := us(e.NS)
		tid := int(e.Tid)
		switch e.Kind {
		case tracepoints.Enter, tracepoints.Exit:
			ph := "B"
			if e.Kind == tracepoints.Exit {
				ph = "E"
			}
			name := "?"
			if n.Func != nil {
				name = n.Func.Name
			}
			tw.event(m{"ph": ph, "name": name, "cat": "function", "pid": pid, "tid": tid, "ts": ts})
		case tracepoints.Alloc, tracepoints.Free:
			args := m{"size": e.Size, "addr": fmt.Sprintf("%#x", e.Addr)}
			name := e.Kind.String()
			if s := n.Site; s != nil {
				args["site"] = fmt.Sprintf("%s:%d:%d", s.File, s.Line, s.Col)
				args["op"] = s.Op
				if s.Type != "" {
					args["type"] = s.Type
				}
				name += " " + s.Op
			}
			tw.event(m{"ph": "i", "s": "t", "name": name, "cat": "memory", "pid": pid, "tid": tid, "ts": ts, "args": args})
		}
		return tw.err
	})
}
