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
// values, with its exact stack, outermost frame first (the context tree is
// a set of stacks: no unwinding, nothing guessed). An allocation stack's
// innermost frame is the allocating function at the line of the
// allocation call; a hidden allocation adds a frame for the allocator
// ("malloc (hidden)") under the woven function it is charged to. fn must
// not keep frames, which is reused.
func (r *Report) WalkStacks(fn func(thread int, frames []StackFrame, v *Values)) {
	p := r.prof
	var frames []StackFrame
	for _, t := range p.Threads {
		if t.Root == nil {
			continue
		}
		type item struct {
			n     *profile.Node
			depth int // frames above n
		}
		stack := []item{{t.Root, 0}}
		for len(stack) > 0 {
			it := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			n := it.n
			frames = frames[:it.depth]
			depth := it.depth
			switch n.Kind {
			case profile.KindRoot:
				if n.Time != 0 {
					fn(t.ID, append(frames, StackFrame{Label: OutsideLabel, Outside: true}), &Values{TimeNS: n.Time})
				}
			case profile.KindFunc:
				frames = append(frames, r.funcFrame(n.Func))
				depth++
				if n.Calls != 0 || n.Time != 0 {
					fn(t.ID, frames, &Values{Calls: n.Calls, TimeNS: n.Time})
				}
			case profile.KindAlloc:
				if n.Heap.IsZero() {
					continue
				}
				s := n.Site
				v := heapValues(&n.Heap)
				if s.Func == nil {
					fn(t.ID, append(frames, StackFrame{Func: Func{Name: s.Op, File: s.File},
						Label: s.Op + " (hidden)", Hidden: true}), &v)
					continue
				}
				f := r.funcFrame(s.Func)
				f.Line = s.Line
				if k := len(frames) - 1; k >= 0 && frames[k].Func == f.Func {
					// The parent is the allocating function: its frame at
					// the allocation's line, put back after (siblings share it).
					parent := frames[k]
					frames[k] = f
					fn(t.ID, frames, &v)
					frames[k] = parent
					continue
				}
				fn(t.ID, append(frames, f), &v) // the runtime's depth cap dropped its node
				continue
			}
			for i := len(n.Children) - 1; i >= 0; i-- {
				stack = append(stack, item{n.Children[i], depth})
			}
		}
	}
}

func (r *Report) funcFrame(f *profile.Func) StackFrame {
	k := Func{f.Name, f.File}
	return StackFrame{Func: k, Label: r.Label(k), Line: f.Line}
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
