package profile

// StackFrame is a frame of an exact stack: a woven function, or one of two
// pseudo-frames: the allocator called by unwoven code (Hidden), and the
// time a thread spent outside woven functions (Outside).
type StackFrame struct {
	Func *Func // nil in a pseudo-frame
	// Line is Func.Line, or the allocation call's line in the innermost
	// frame of an allocation stack.
	Line    int
	Hidden  *Site // the hidden allocation site (its Op names the allocator)
	Outside bool
}

// Stack is a calling context with values of its own: Node's (an allocation
// leaf's Heap, a function node's Calls and Time, a root's Time, which is
// spent outside woven functions).
type Stack struct {
	Thread *Thread
	Node   *Node
	Frames []StackFrame // outermost first
}

// WalkStacks calls fn for every node with values, with its exact stack
// (the context tree is a set of stacks: no unwinding, nothing guessed).
// The innermost frame of an allocation stack is the allocating function at
// the allocation call's line, added when the runtime's depth cap dropped
// its node; a hidden allocation's stack ends with the allocator's
// pseudo-frame under the woven function it is charged to; a root's time
// is a stack of the Outside pseudo-frame alone. fn must not keep the
// Stack, which is reused.
func (p *Profile) WalkStacks(fn func(s *Stack)) {
	var s Stack
	type item struct {
		n     *Node
		depth int // frames above n
	}
	for _, t := range p.Threads {
		if t.Root == nil {
			continue
		}
		s.Thread = t
		todo := []item{{t.Root, 0}}
		for len(todo) > 0 {
			it := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			n := it.n
			s.Node = n
			s.Frames = s.Frames[:it.depth]
			depth := it.depth
			switch n.Kind {
			case KindRoot:
				if n.Time != 0 {
					s.Frames = append(s.Frames, StackFrame{Outside: true})
					fn(&s)
				}
			case KindFunc:
				s.Frames = append(s.Frames, StackFrame{Func: n.Func, Line: n.Func.Line})
				depth++
				if n.Calls != 0 || n.Time != 0 {
					fn(&s)
				}
			case KindAlloc:
				if !n.Heap.IsZero() {
					k, parent := allocStack(&s)
					fn(&s)
					if k >= 0 {
						s.Frames[k] = parent
					}
				}
				continue
			}
			for i := len(n.Children) - 1; i >= 0; i-- {
				todo = append(todo, item{n.Children[i], depth})
			}
		}
	}
}

// allocStack ends s.Frames, the stack of an allocation leaf's parent, with
// the allocation's frame. When the parent is the allocating function, its
// frame is replaced; allocStack then returns its index and the frame to put
// back (siblings share it), else -1.
func allocStack(s *Stack) (int, StackFrame) {
	site := s.Node.Site
	if site.Func == nil {
		if k := len(s.Frames) - 1; site.Caller && k >= 0 && s.Frames[k].Func != nil {
			// Charged to the caller (a region's own, --exclude): the
			// parent's frame, at the allocation's line.
			old := s.Frames[k]
			s.Frames[k].Line = site.Line
			return k, old
		}
		s.Frames = append(s.Frames, StackFrame{Hidden: site})
		return -1, StackFrame{}
	}
	leaf := StackFrame{Func: site.Func, Line: site.Line}
	if k := len(s.Frames) - 1; k >= 0 && sameFunc(s.Frames[k].Func, site.Func) {
		old := s.Frames[k]
		s.Frames[k] = leaf
		return k, old
	}
	s.Frames = append(s.Frames, leaf) // the depth cap dropped the function's node
	return -1, StackFrame{}
}

// sameFunc reports whether two F records are one function (a static
// inline function woven into several translation units has several).
func sameFunc(a, b *Func) bool {
	return a == b || a != nil && b != nil && a.Name == b.Name && a.File == b.File
}
