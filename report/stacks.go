package report

import (
	"fmt"
	"strings"

	"weave/profile"
)

// Quantities a stack export (folded, the HTML flame graph) can show, for
// Options.Quantity and the --quantity flag.
const (
	QuantityBytes = "bytes_allocated"
	QuantityInUse = "bytes_in_use"
	QuantityAlloc = "allocs"
	QuantityTime  = "time"
	QuantityCalls = "calls"
)

// Quantities lists the quantities in the order the exports show them.
var Quantities = []string{QuantityBytes, QuantityInUse, QuantityAlloc, QuantityTime, QuantityCalls}

// Values are the self values of one calling context: an allocation leaf's
// heap counters, or a function node's calls and self time.
type Values struct {
	Allocs      uint64 // allocations
	Bytes       uint64 // bytes allocated
	InUseBlocks uint64 // blocks not freed
	InUse       uint64 // bytes not freed
	Calls       uint64
	TimeNS      uint64 // self time
}

// Get returns the value of a quantity (one of Quantities).
func (v *Values) Get(quantity string) uint64 {
	switch quantity {
	case QuantityBytes:
		return v.Bytes
	case QuantityInUse:
		return v.InUse
	case QuantityAlloc:
		return v.Allocs
	case QuantityTime:
		return v.TimeNS
	case QuantityCalls:
		return v.Calls
	}
	return 0
}

// Add adds o to v.
func (v *Values) Add(o *Values) {
	v.Allocs += o.Allocs
	v.Bytes += o.Bytes
	v.InUseBlocks += o.InUseBlocks
	v.InUse += o.InUse
	v.Calls += o.Calls
	v.TimeNS += o.TimeNS
}

// IsZero reports whether all values are 0.
func (v *Values) IsZero() bool { return *v == Values{} }

func heapValues(h *profile.Heap) Values {
	a, f := h.TotalAllocs(), h.TotalFrees()
	b, fb := h.TotalBytes(), h.TotalFreedBytes()
	return Values{Allocs: a, Bytes: b, InUseBlocks: sub0(a, f), InUse: sub0(b, fb)}
}

// StackFrame is a frame of an exact stack: a woven function, the
// allocator called by unwoven code (Hidden), or the time spent outside
// woven functions (Outside).
type StackFrame struct {
	Func    Func
	Label   string // how reports name the function (Report.Label)
	Line    int    // the function's line; the allocation call's on an allocation stack's innermost frame
	Hidden  bool
	Outside bool
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
	r.prof.WalkStacks(func(s *profile.Stack) {
		frames = frames[:0]
		for _, f := range s.Frames {
			var fr StackFrame
			switch {
			case f.Func != nil:
				fr.Func = Func{f.Func.Name, f.Func.File}
				fr.Label, fr.Line = r.Label(fr.Func), f.Line
			case f.Hidden != nil:
				fr = StackFrame{Func: Func{Name: f.Hidden.Op, File: f.Hidden.File}, Label: f.Hidden.Op + " (hidden)", Hidden: true}
			default:
				fr = StackFrame{Label: OutsideLabel, Outside: true}
			}
			frames = append(frames, fr)
		}
		n := s.Node
		v := Values{Calls: n.Calls, TimeNS: n.Time}
		if n.Kind == profile.KindAlloc {
			v = heapValues(&n.Heap)
		}
		fn(s.Thread.ID, frames, &v)
	})
}

// ParseQuantity checks a quantity name.
func ParseQuantity(s string) (string, error) {
	for _, q := range Quantities {
		if s == q {
			return q, nil
		}
	}
	return "", fmt.Errorf("unknown quantity %q (want %s)", s, strings.Join(Quantities, ", "))
}
