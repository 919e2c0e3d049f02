// Package rt is the runtime that code woven by github.com/weave-profiler/weave/goweave calls: it keeps a
// pseudo-stack per goroutine, a calling-context tree of calls and allocation
// sites, and writes a weave profile at exit.
package rt

import (
	"os"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Func is the static record of a woven function (an F record).
type Func struct {
	Name string
	File string
	Line int
	// Frameless marks a function woven without a frame (--frames auto):
	// in the tree through its allocation sites only, its calls not counted.
	Frameless bool
}

// Site is the static record of an allocation site (an A record). Size is
// the element size for slices, channels and strings; for the others the
// runtime takes the allocated size from the value.
type Site struct {
	Func *Func
	File string
	Line int
	Col  int
	Op   string // new, make, composite, append, concat, convert
	Type string
	Size uint64 // sizeof(Type) where Type is the whole block (new, &T{}), else 0
	// Expr marks a site woven without the compiler's escape analysis: it
	// counts every evaluation, on the stack or not.
	Expr bool
	// Fixed marks a site whose every block is Size bytes (new, &T{} of a
	// known type): its bin is counted from its nodes at exit.
	Fixed bool
	// typ is the type of the site's blocks (of their elements for a
	// slice's), set at its first allocation: its pointer layout tells a
	// woven block from another in the heap's shadow (shadow.go).
	typ atomic.Pointer[blockType]
}

// node is a calling-context-tree node: a function in a context, or an
// allocation site in a function's context. Children are found through
// links, an immutable list published atomically, so lookups take no lock.
type node struct {
	parent *node
	fn     *Func
	site   *Site
	links  atomic.Pointer[link]
	id     int32
	calls  atomic.Uint64 // calls made by goroutines other than owner
	// owner is the goroutine (its key) that made the node, ownCalls the
	// calls it made: counted without an atomic instruction, which is most
	// of a call's cost otherwise, as a node is mostly entered by the
	// goroutine that made it. Read at exit without synchronisation, as
	// the other goroutines may still run: a count a few calls short.
	owner     uintptr
	ownCalls  uint64
	ownAllocs [4]uint64 // the owner's allocations, as ownCalls
	ownBytes  [4]uint64
	selfNs    atomic.Int64
	allocs    [4]atomic.Uint64 // by mprof size class
	bytes     [4]atomic.Uint64
	// unfollowed: some of the node's blocks are not in the heap's shadow
	// (shadow.go), its in use estimated.
	unfollowed atomic.Bool
	// With WEAVE_INUSE=cleanup (track.go): the allocations whose lifetime
	// is followed, and those the collector has freed.
	tracked     atomic.Uint64
	frees       [4]atomic.Uint64
	freedBytes  [4]atomic.Uint64
	tinyTracked atomic.Uint64 // tracked blocks of 16 bytes or less
}

// link maps a function or site to the child node entered for it; for a
// folded recursion, to an ancestor.
type link struct {
	key  unsafe.Pointer // *Func or *Site
	to   *node
	next *link
}

var (
	root    = &node{}
	treeMu  sync.Mutex
	nodes   = []*node{root} // every node, by id; appended under treeMu
	timing  = os.Getenv("WEAVE_TIME") == "exact"
	bins    [1026]struct{ allocs, bytes atomic.Uint64 }
	started = nanotime()
)

// child returns the node for key under n, making it on first use.
func (n *node) child(key unsafe.Pointer, fn *Func, site *Site) *node {
	for l := n.links.Load(); l != nil; l = l.next {
		if l.key == key {
			return l.to
		}
	}
	return n.addChild(key, fn, site, 0)
}

// addChild makes the node for key under n, owned by the goroutine owner.
func (n *node) addChild(key unsafe.Pointer, fn *Func, site *Site, owner uintptr) *node {
	treeMu.Lock()
	defer treeMu.Unlock()
	head := n.links.Load()
	for l := head; l != nil; l = l.next {
		if l.key == key {
			return l.to
		}
	}
	to := fold(n, fn)
	if to == nil {
		to = &node{parent: n, fn: fn, site: site, id: int32(len(nodes)), owner: owner}
		shadowForget(unsafe.Pointer(to))
		nodes = append(nodes, to)
		shadowForget(unsafe.Pointer(unsafe.SliceData(nodes)))
	}
	l := &link{key: key, to: to, next: head}
	shadowForget(unsafe.Pointer(l))
	n.links.Store(l)
	return to
}

// fold returns the ancestor to re-enter when fn is already twice on the
// path to n (recursion is folded as in the C runtime: a function at most
// twice on a path), else nil.
func fold(n *node, fn *Func) *node {
	if fn == nil {
		return nil
	}
	var nearest *node
	for a := n; a != nil; a = a.parent {
		if a.fn == fn {
			if nearest != nil {
				return nearest
			}
			nearest = a
		}
	}
	return nil
}

// count counts a call of n by the goroutine key.
func (n *node) count(key uintptr) {
	if n.owner == key && !raceEnabled {
		n.ownCalls++
	} else {
		n.calls.Add(1)
	}
}

// totalCalls is n's count of calls.
func (n *node) totalCalls() uint64 { return n.calls.Load() + n.ownCalls }

// allocsIn and bytesIn are n's allocations and bytes in size class c.
func (n *node) allocsIn(c int) uint64 { return n.allocs[c].Load() + n.ownAllocs[c] }
func (n *node) bytesIn(c int) uint64  { return n.bytes[c].Load() + n.ownBytes[c] }
