package profile

import "slices"

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

// FoldDepth is how many activations of one function a stack or a tree of
// the reports shows on a path: a deeper activation is counted in the
// nearest of them, its callees under it. A sampled-mode profile comes
// folded from the second (pseudostack/cct.c); an exact-mode one has a node
// per depth, and a million-deep recursion would otherwise give a million
// stacks of up to a million frames (quadratic: reports that did not end).
const FoldDepth = 64

// Folded is the profile's calling contexts with deep recursion folded
// (FoldDepth): a trie of function frames that every function node maps
// to. Built once, it gives each node's folded path in time linear in its
// length.
type Folded struct {
	p    *Profile
	up   []int32 // an entry's parent entry, -1 at a root
	fn   []*Func
	node []int32 // node id -> its entry (function nodes), or -1
}

// Fold builds the profile's Folded paths.
func (p *Profile) Fold() *Folded {
	f := &Folded{p: p, node: make([]int32, len(p.Nodes))}
	for i := range f.node {
		f.node[i] = -1
	}
	type item struct {
		n  *Node
		at int32 // the entry of n's parent's path
	}
	for _, t := range p.Threads {
		if t.Root == nil {
			continue
		}
		todo := []item{{t.Root, -1}}
		for len(todo) > 0 {
			it := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			n, at := it.n, it.at
			if n.Kind == KindFunc {
				if at = f.fold(it.at, n.Func); at < 0 {
					f.up = append(f.up, it.at)
					f.fn = append(f.fn, n.Func)
					at = int32(len(f.up) - 1)
				}
				f.node[n.ID] = at
			}
			for i := len(n.Children) - 1; i >= 0; i-- {
				if c := n.Children[i]; c.Kind != KindAlloc {
					todo = append(todo, item{c, at})
				}
			}
		}
	}
	return f
}

// fold returns the nearest entry of fn on i's path if the path holds
// FoldDepth of them, or -1.
func (f *Folded) fold(i int32, fn *Func) int32 {
	near, k := int32(-1), 0
	for ; i >= 0; i = f.up[i] {
		if !sameFunc(f.fn[i], fn) {
			continue
		}
		if k++; near < 0 {
			near = i
		}
		if k == FoldDepth {
			return near
		}
	}
	return -1
}

// Path calls fn for the functions of n's folded path, innermost first,
// until fn returns false; n is a function node, or an allocation leaf or
// a root, whose path is its parent's (none for a root).
func (f *Folded) Path(n *Node, fn func(*Func) bool) {
	if n.Kind != KindFunc {
		if n = n.Parent; n == nil || n.Kind != KindFunc {
			return
		}
	}
	for i := f.node[n.ID]; i >= 0 && fn(f.fn[i]); i = f.up[i] {
	}
}

// Entry returns function node n's entry in the trie and its parent entry
// (-1 at a root): nodes of one folded path share an entry.
func (f *Folded) Entry(n *Node) (e, up int32) {
	e = f.node[n.ID]
	return e, f.up[e]
}

// WalkStacks is Folded.WalkStacks of the profile's Fold.
func (p *Profile) WalkStacks(fn func(s *Stack)) { p.Fold().WalkStacks(fn) }

// WalkStacks calls fn for every node with values, with its exact stack
// (the context tree is a set of stacks: no unwinding, nothing guessed).
// The innermost frame of an allocation stack is the allocating function at
// the allocation call's line, added when the runtime's depth cap dropped
// its node; a hidden allocation's stack ends with the allocator's
// pseudo-frame under the woven function it is charged to; a root's time
// is a stack of the Outside pseudo-frame alone. Deep recursion is folded
// (Folded), so that several nodes of an exact-mode profile may give one
// stack. fn must not keep the Stack, which is reused.
func (folded *Folded) WalkStacks(fn func(s *Stack)) {
	var s Stack
	for _, t := range folded.p.Threads {
		if t.Root == nil {
			continue
		}
		s.Thread = t
		for todo := []*Node{t.Root}; len(todo) > 0; {
			n := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			for i := len(n.Children) - 1; i >= 0; i-- {
				todo = append(todo, n.Children[i])
			}
			s.Node = n
			switch {
			case n.Kind == KindRoot && n.Time != 0:
				s.Frames = append(s.Frames[:0], StackFrame{Outside: true})
			case n.Kind == KindFunc && (n.Calls != 0 || n.Time != 0),
				n.Kind == KindAlloc && !n.Heap.IsZero():
				s.Frames = s.Frames[:0]
				folded.Path(n, func(f *Func) bool {
					s.Frames = append(s.Frames, StackFrame{Func: f, Line: f.Line})
					return true
				})
				slices.Reverse(s.Frames)
				if n.Kind == KindAlloc {
					allocStack(&s)
				}
			default:
				continue
			}
			fn(&s)
		}
	}
}

// allocStack ends s.Frames, the stack of an allocation leaf's parent, with
// the allocation's frame: the parent's frame at the allocation's line when
// the parent is the allocating function.
func allocStack(s *Stack) {
	site := s.Node.Site
	k := len(s.Frames) - 1
	if site.Func == nil {
		if site.Caller && k >= 0 && s.Frames[k].Func != nil {
			// Charged to the caller (a region's own, --exclude): the
			// parent's frame, at the allocation's line.
			s.Frames[k].Line = site.Line
			return
		}
		s.Frames = append(s.Frames, StackFrame{Hidden: site})
		return
	}
	leaf := StackFrame{Func: site.Func, Line: site.Line}
	if k >= 0 && sameFunc(s.Frames[k].Func, site.Func) {
		s.Frames[k] = leaf
		return
	}
	s.Frames = append(s.Frames, leaf) // the depth cap dropped the function's node
}

// sameFunc reports whether two F records are one function (a static
// inline function woven into several translation units has several).
func sameFunc(a, b *Func) bool {
	return a == b || a != nil && b != nil && a.Name == b.Name && a.File == b.File
}
