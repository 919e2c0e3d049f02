package report

import (
	"github.com/weave-profiler/weave/profile"
)

// Values are the self values of one calling context: an allocation leaf's
// heap counts, or a function node's calls and self time.
type Values = profile.Counts

// StackFrame is a frame of an exact stack: a woven function, the
// allocator called by unwoven code (Hidden), or the time spent outside
// woven functions (Outside).
type StackFrame struct {
	Func    Func
	Label   string // how reports name the function (Report.Label)
	Line    int    // the function's line; the allocation call's on an allocation stack's innermost frame
	Hidden  bool
	Outside bool
	Type    string // on an allocation stack's innermost frame: its site's type, in C, or ""
	// AtCalls: the function is framed at its calls (--frames auto): its
	// calls counted are those that may allocate, not all its calls.
	AtCalls bool
}

// OutsideLabel names the frame of the time a thread spent outside woven
// functions (before main, in unwoven code, after exit began).
const OutsideLabel = "(outside woven functions)"

// WalkStacks calls fn for every calling context of the profile that has
// values, with its exact stack, outermost frame first, labelled
// (profile.WalkStacks tells which stacks there are). A hidden
// allocation's allocator frame is labelled "malloc (hidden)", the time
// outside woven functions OutsideLabel. fn must not keep frames, which is
// reused.
func (r *Report) WalkStacks(fn func(thread int, frames []StackFrame, v *Values)) {
	var frames []StackFrame
	r.folded.WalkStacks(func(s *profile.Stack) {
		frames = frames[:0]
		for _, f := range s.Frames {
			var fr StackFrame
			switch {
			case f.Func != nil:
				fr.Func = Func{f.Func.Name, f.Func.File}
				fr.Label, fr.Line, fr.AtCalls = r.Label(fr.Func), f.Line, f.Func.CallFramed
			case f.Hidden != nil:
				fr = StackFrame{Func: Func{Name: f.Hidden.Op, File: f.Hidden.File}, Label: f.Hidden.Op + " (hidden)", Hidden: true}
			default:
				fr = StackFrame{Label: OutsideLabel, Outside: true}
			}
			frames = append(frames, fr)
		}
		n := s.Node
		v := Values{Calls: int64(n.Calls), TimeNS: int64(n.Time)}
		if n.Kind == profile.KindAlloc {
			v = profile.HeapCounts(&n.Heap)
			if n.Site != nil && len(frames) > 0 {
				frames[len(frames)-1].Type = n.Site.Type
			}
		}
		fn(s.Thread.ID, frames, &v)
	})
}
