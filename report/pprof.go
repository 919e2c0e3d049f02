package report

import (
	"io"
	"strconv"

	pprof "github.com/google/pprof/profile"
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
//	cpu (nanoseconds)             self time, when the profile has times
//
// Each location is a function at a line: the allocation call's in the
// innermost frame of an allocation stack, else the function's own first
// line (weave records which function called, not from which line).
type pprofRenderer struct{}

func (pprofRenderer) Render(w io.Writer, r *Report) error {
	p := &pprof.Profile{
		SampleType: []*pprof.ValueType{
			{Type: "alloc_objects", Unit: "count"},
			{Type: "alloc_space", Unit: "bytes"},
			{Type: "inuse_objects", Unit: "count"},
			{Type: "inuse_space", Unit: "bytes"},
			{Type: "calls", Unit: "count"},
		},
		DefaultSampleType: "alloc_space",
		PeriodType:        &pprof.ValueType{Type: "space", Unit: "bytes"},
		Period:            1,
	}
	hasTime := HasTime(r.prof)
	if hasTime {
		p.SampleType = append(p.SampleType, &pprof.ValueType{Type: "cpu", Unit: "nanoseconds"})
	}
	if r.Program != "" {
		p.Comments = append(p.Comments, "weave profile of "+r.Program)
	}
	start, err1 := strconv.ParseInt(r.Metadata["start_ns"], 10, 64)
	end, err2 := strconv.ParseInt(r.Metadata["end_ns"], 10, 64)
	switch {
	case r.Runs > 0: // merged: the runs' times summed
		p.TimeNanos, p.DurationNanos = start, int64(r.RunNS)
	case err1 == nil && err2 == nil && end >= start:
		p.TimeNanos, p.DurationNanos = start, end-start
	}
	// One mapping that says the locations are symbolized already, so that
	// pprof does not look for a binary.
	m := &pprof.Mapping{ID: 1, File: r.Program, HasFunctions: true, HasFilenames: true, HasLineNumbers: true}
	p.Mapping = []*pprof.Mapping{m}

	type locKey struct {
		f    Func
		line int
	}
	funcs := map[Func]*pprof.Function{}
	locs := map[locKey]*pprof.Location{}
	location := func(fr *StackFrame) *pprof.Location {
		k := locKey{fr.Func, fr.Line}
		if fr.Outside {
			k.f.Name = OutsideLabel
		}
		if l := locs[k]; l != nil {
			return l
		}
		fn := funcs[k.f]
		if fn == nil {
			fn = &pprof.Function{ID: uint64(len(p.Function) + 1), Name: fr.Label, SystemName: k.f.Name, Filename: k.f.File}
			if !fr.Hidden && !fr.Outside {
				fn.StartLine = int64(fr.Line)
			}
			funcs[k.f] = fn
			p.Function = append(p.Function, fn)
		}
		if fr.Line != 0 && (fn.StartLine == 0 || int64(fr.Line) < fn.StartLine) {
			fn.StartLine = int64(fr.Line) // first seen at an allocation's line
		}
		l := &pprof.Location{ID: uint64(len(p.Location) + 1), Mapping: m, Line: []pprof.Line{{Function: fn, Line: int64(fr.Line)}}}
		locs[k] = l
		p.Location = append(p.Location, l)
		return l
	}
	threads := len(r.prof.Threads) > 1
	r.WalkStacks(func(thread int, frames []StackFrame, v *Values) {
		s := &pprof.Sample{
			Location: make([]*pprof.Location, len(frames)),
			Value:    []int64{int64(v.Allocs), int64(v.Bytes), int64(v.InUseBlocks), int64(v.InUse), int64(v.Calls)},
		}
		if hasTime {
			s.Value = append(s.Value, int64(v.TimeNS))
		}
		for i := range frames {
			s.Location[len(frames)-1-i] = location(&frames[i]) // innermost first
		}
		if threads {
			s.NumLabel = map[string][]int64{"thread": {int64(thread)}}
		}
		if len(frames) > 0 && frames[len(frames)-1].Type != "" {
			t := frames[len(frames)-1].Type
			s.Label = map[string][]string{"type": {t}} // what the site's size expression names
		}
		p.Sample = append(p.Sample, s)
	})
	if err := p.CheckValid(); err != nil {
		return err
	}
	return p.Write(w)
}
