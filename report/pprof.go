package report

import (
	"compress/gzip"
	"encoding/binary"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
)

func init() { Register("pprof", pprofRenderer{}) }

// pprofRenderer writes the profile as a gzipped profile.proto, for go tool
// pprof and the tools that read its format. Its samples are the exact
// stacks of WalkStacks; the sample types carry pprof's heap names, so
// -sample_index works as with Go's heap profiles:
//
//	alloc_objects, alloc_space    allocations and bytes allocated
//	inuse_objects, inuse_space    blocks and bytes not freed at exit
//	calls                         calls of the innermost function
//	                              (those of a function framed at its
//	                              calls: labelled calls_at_calls, named
//	                              in a comment -top shows)
//	cpu (nanoseconds)             self time, when the profile has times
//
// Each location is a function at a line: the allocation call's in the
// innermost frame of an allocation stack, else the function's own first
// line (weave records which function called, not from which line).
//
// The encoding is written here (pprofWriter), not with
// github.com/google/pprof/profile, whose package init compiles some
// twenty regular expressions: 0.3 ms of every weave start, weave cc's
// too. The tests read the output back with that package and go tool
// pprof.
type pprofRenderer struct{}

func (pprofRenderer) Render(w io.Writer, r *Report) error {
	var pw pprofWriter
	pw.strings = map[string]int64{"": 0}
	pw.table = []string{""}
	types := []string{"alloc_objects", "count", "alloc_space", "bytes", "inuse_objects", "count",
		"inuse_space", "bytes", "calls", "count"}
	hasTime := HasTime(r.prof)
	if hasTime {
		types = append(types, "cpu", "nanoseconds")
	}
	for i := 0; i < len(types); i += 2 {
		pw.profile.message(1, pw.valueType(types[i], types[i+1]))
	}
	// One mapping that says the locations are symbolized already, so that
	// pprof does not look for a binary.
	var m pbuf
	m.uint(1, 1)
	m.int(5, pw.str(r.Program))
	m.uint(7, 1)  // has_functions
	m.uint(8, 1)  // has_filenames
	m.uint(9, 1)  // has_line_numbers
	var body pbuf // samples, mapping, locations, functions: after the sample types

	type locKey struct {
		f    Func
		line int
	}
	type function struct {
		id                        uint64
		name, system, file, start int64
	}
	funcs := map[Func]*function{}
	var funcList []*function
	locs := map[locKey]uint64{}
	var locBufs pbuf
	location := func(fr *StackFrame) uint64 {
		k := locKey{fr.Func, fr.Line}
		if fr.Outside {
			k.f.Name = OutsideLabel
		}
		if id := locs[k]; id != 0 {
			return id
		}
		fn := funcs[k.f]
		if fn == nil {
			fn = &function{id: uint64(len(funcList) + 1), name: pw.str(fr.Label), system: pw.str(k.f.Name), file: pw.str(k.f.File)}
			if !fr.Hidden && !fr.Outside {
				fn.start = int64(fr.Line)
			}
			funcs[k.f] = fn
			funcList = append(funcList, fn)
		}
		if fr.Line != 0 && (fn.start == 0 || int64(fr.Line) < fn.start) {
			fn.start = int64(fr.Line) // first seen at an allocation's line
		}
		id := uint64(len(locs) + 1)
		locs[k] = id
		var line, loc pbuf
		line.uint(1, fn.id)
		line.int(2, int64(fr.Line))
		loc.uint(1, id)
		loc.uint(2, 1) // the mapping
		loc.message(4, line)
		locBufs.message(4, loc)
		return id
	}
	samples, atCalls := pprofSamples(r, location, hasTime)
	for _, sm := range samples {
		body.message(2, sm.encode(&pw))
	}
	body.message(3, m)
	body = append(body, locBufs...)
	for _, fn := range funcList {
		var f pbuf
		f.uint(1, fn.id)
		f.int(2, fn.name)
		f.int(3, fn.system)
		f.int(4, fn.file)
		f.int(5, fn.start)
		body.message(5, f)
	}
	pw.profile = append(pw.profile, body...)

	pw.trailer(r, atCallsComment(slices.Sorted(maps.Keys(atCalls))))
	zw := gzip.NewWriter(w)
	if _, err := zw.Write(pw.profile); err != nil {
		return err
	}
	return zw.Close()
}

// pprofSample is a sample of the pprof export: a stack (location ids,
// innermost first), its values and its labels.
type pprofSample struct {
	ids     []uint64
	vals    []uint64
	typ     string // what the allocation site's size expression names
	atCalls bool   // calls of a function framed at its calls
	thread  int    // -1: one thread
}

// pprofSamples returns the report's stacks as samples, those with the
// same stack and labels summed into one (an exact-mode profile's folded
// recursion gives many), in the order first seen, and the labels of the
// functions framed at their calls.
func pprofSamples(r *Report, location func(*StackFrame) uint64, hasTime bool) ([]*pprofSample, map[string]bool) {
	threads := len(r.prof.Threads) > 1
	atCalls := map[string]bool{}
	var samples []*pprofSample
	byKey := map[string]*pprofSample{}
	var key []byte
	r.WalkStacks(func(thread int, frames []StackFrame, v *Values) {
		sm := &pprofSample{ids: make([]uint64, len(frames)), thread: -1}
		for i := range frames {
			sm.ids[len(frames)-1-i] = location(&frames[i]) // innermost first
		}
		if len(frames) > 0 {
			sm.typ = frames[len(frames)-1].Type
		}
		if inner := len(frames) - 1; inner >= 0 && v.Calls != 0 && frames[inner].AtCalls {
			atCalls[frames[inner].Label] = true
			sm.atCalls = true
		}
		if threads {
			sm.thread = thread
		}
		vals := []uint64{uint64(v.Allocs), uint64(v.Bytes), uint64(v.InUseBlocks), uint64(v.InUse), uint64(v.Calls)}
		if hasTime {
			vals = append(vals, uint64(int64(v.TimeNS)))
		}
		key = key[:0]
		for _, id := range sm.ids {
			key = binary.AppendUvarint(key, id)
		}
		key = append(append(key, 0), sm.typ...)
		key = strconv.AppendBool(strconv.AppendInt(append(key, 0), int64(sm.thread), 10), sm.atCalls)
		if old := byKey[string(key)]; old != nil {
			for i := range vals {
				old.vals[i] += vals[i]
			}
			return
		}
		sm.vals = vals
		byKey[string(key)] = sm
		samples = append(samples, sm)
	})
	return samples, atCalls
}

// encode returns the sample's message, its strings in pw's table.
func (sm *pprofSample) encode(pw *pprofWriter) pbuf {
	var s pbuf
	s.packed(1, sm.ids)
	s.packed(2, sm.vals)
	label := func(k string, str string, num int64) {
		var l pbuf
		l.int(1, pw.str(k))
		if str != "" {
			l.int(2, pw.str(str))
		} else {
			l.int(3, num)
		}
		s.message(3, l)
	}
	if sm.typ != "" {
		label("type", sm.typ, 0)
	}
	if sm.atCalls {
		label("calls_at_calls", "true", 0)
	}
	if sm.thread >= 0 {
		label("thread", "", int64(sm.thread))
	}
	return s
}

// pprofWriter builds a profile.proto message (github.com/google/pprof's
// proto/profile.proto) and its string table.
type pprofWriter struct {
	profile pbuf
	strings map[string]int64
	table   []string
}

// atCallsComment is the comment that names the functions framed at their
// calls, whose calls samples are not all their calls ("" if none).
func atCallsComment(names []string) string {
	if len(names) == 0 {
		return ""
	}
	return "calls of " + strings.Join(names, ", ") + ": framed at their calls (weave --frames auto), counts of those calls, " +
		"which may allocate (or of runs that made one), not of all their calls; samples labelled calls_at_calls"
}

// trailer writes the profile's fields after its body: the run's time and
// span, the period, the comments, the default sample type, and last the
// string table, which holds every string by then.
func (pw *pprofWriter) trailer(r *Report, comment string) {
	start, err1 := strconv.ParseInt(r.Metadata["start_ns"], 10, 64)
	end, err2 := strconv.ParseInt(r.Metadata["end_ns"], 10, 64)
	switch {
	case r.Runs > 0: // merged: the runs' times summed
		pw.profile.int(9, start)
		pw.profile.int(10, int64(r.RunNS))
	case err1 == nil && err2 == nil && end >= start:
		pw.profile.int(9, start)
		pw.profile.int(10, end-start)
	}
	pw.profile.message(11, pw.valueType("space", "bytes"))
	pw.profile.int(12, 1)
	if r.Program != "" {
		pw.profile.int(13, pw.str("weave profile of "+r.Program))
	}
	if comment != "" {
		pw.profile.int(13, pw.str(comment))
	}
	pw.profile.int(14, pw.str("alloc_space"))
	for _, t := range pw.table {
		pw.profile.bytes(6, []byte(t))
	}
}

// str returns the index of s in the string table, adding it.
func (pw *pprofWriter) str(s string) int64 {
	i, ok := pw.strings[s]
	if !ok {
		i = int64(len(pw.table))
		pw.strings[s] = i
		pw.table = append(pw.table, s)
	}
	return i
}

func (pw *pprofWriter) valueType(typ, unit string) pbuf {
	var v pbuf
	v.int(1, pw.str(typ))
	v.int(2, pw.str(unit))
	return v
}

// pbuf is an encoded protocol buffer message; its methods append a
// field (zero scalars left out, as proto3 does).
type pbuf []byte

func (b *pbuf) key(field, wire int) { *b = binary.AppendUvarint(*b, uint64(field)<<3|uint64(wire)) }

func (b *pbuf) uint(field int, v uint64) {
	if v != 0 {
		b.key(field, 0)
		*b = binary.AppendUvarint(*b, v)
	}
}

func (b *pbuf) int(field int, v int64) { b.uint(field, uint64(v)) }

func (b *pbuf) bytes(field int, v []byte) {
	b.key(field, 2)
	*b = binary.AppendUvarint(*b, uint64(len(v)))
	*b = append(*b, v...)
}

func (b *pbuf) message(field int, m pbuf) { b.bytes(field, m) }

func (b *pbuf) packed(field int, vs []uint64) {
	var p []byte
	for _, v := range vs {
		p = binary.AppendUvarint(p, v)
	}
	if len(vs) > 0 {
		b.bytes(field, p)
	}
}
