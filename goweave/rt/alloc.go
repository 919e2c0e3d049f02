package rt

import (
	"reflect"
	"sync/atomic"
	"unsafe"
)

// The allocation advice: each helper returns its argument, the value of
// the allocation expression it wraps, after recording the allocation at
// site in the calling goroutine's context. They are generic so that the
// woven expression keeps its type, and small so that they inline.

// mapHeader and chanHeader are the sizes charged for a map or channel
// allocation besides its elements: the runtime's hmap (a swiss map's
// header) and hchan, on 64-bit platforms.
const (
	mapHeader  = 48
	chanHeader = 96
)

// New records new(T) or &T{...}.
func New[T any](site *Site, p *T) *T {
	if unsafe.Sizeof(*p) == 0 {
		return p // the runtime's zero-size base: nothing allocated
	}
	// A copy of the function inlined where the block does not escape has
	// it on the stack: no allocation (and p must not escape here, or
	// weaving would move every such copy's block to the heap).
	if stackKnown && onStack(noescape(unsafe.Pointer(p)), 0) {
		return p
	}
	if site.typ.Load() == nil {
		site.setType(reflect.TypeFor[T](), false)
	}
	n := record(site, uint64(unsafe.Sizeof(*p)))
	follow(noescape(unsafe.Pointer(p)), n, uint64(unsafe.Sizeof(*p)))
	return p
}

// stackBuf is the size up to which the compiler may back a make of
// run-time size or an append growth that does not escape with a buffer on
// the stack (where onStack cannot tell).
const stackBuf = 32

// Slice records make([]E, n, c), []E{...} or a conversion to []byte or
// []rune; small: the compiler found that it does not escape, so it is on
// the heap only when not in a buffer on the stack (onStack). An empty one
// allocates nothing (the runtime's zero-size base).
func Slice[S ~[]E, E any](site *Site, small bool, s S) S {
	var e E
	if n := uint64(cap(s)) * uint64(unsafe.Sizeof(e)); n > 0 && (!small || !onStack(unsafe.Pointer(unsafe.SliceData(s)), n)) {
		if site.typ.Load() == nil {
			site.setType(reflect.TypeFor[E](), true)
		}
		follow(noescape(unsafe.Pointer(unsafe.SliceData(s))), record(site, n), n)
	}
	return s
}

// noescape hides p from the escape analysis (as the Go runtime's noescape
// does, in a form go vet accepts): following a block must not move it to the heap. A small slice the
// compiler keeps on the stack stays there (Slice and Append follow only
// blocks that are not on the stack, whose place is the heap already).
//
//go:nosplit
func noescape(p unsafe.Pointer) unsafe.Pointer {
	x := uintptr(p)
	return *(*unsafe.Pointer)(unsafe.Pointer(&x))
}

// Append records the growth of an append: oldCap is the capacity before;
// small as for Slice.
func Append[S ~[]E, E any](site *Site, small bool, oldCap int, s S) S {
	if cap(s) != oldCap {
		var e E
		if n := uint64(cap(s)) * uint64(unsafe.Sizeof(e)); n > 0 && (!small || !onStack(unsafe.Pointer(unsafe.SliceData(s)), n)) {
			if site.typ.Load() == nil {
				site.setType(reflect.TypeFor[E](), true)
			}
			follow(noescape(unsafe.Pointer(unsafe.SliceData(s))), record(site, n), n)
		}
	}
	return s
}

// Map records make(map[K]V) or a map literal (its header only).
func Map[M any](site *Site, m M) M {
	unfollowedBlock(record(site, mapHeader), mapHeader)
	return m
}

// Chan records make(chan E, n); ChanRecv and ChanSend, make(<-chan E, n)
// and make(chan<- E, n).
func Chan[C ~chan E, E any](site *Site, c C) C {
	var e E
	chanRecord(site, *(*unsafe.Pointer)(unsafe.Pointer(&c)), chanHeader+uint64(cap(c))*uint64(unsafe.Sizeof(e)))
	return c
}

func ChanRecv[C ~<-chan E, E any](site *Site, c C) C {
	var e E
	chanRecord(site, *(*unsafe.Pointer)(unsafe.Pointer(&c)), chanHeader+uint64(cap(c))*uint64(unsafe.Sizeof(e)))
	return c
}

func ChanSend[C ~chan<- E, E any](site *Site, c C) C {
	var e E
	chanRecord(site, *(*unsafe.Pointer)(unsafe.Pointer(&c)), chanHeader+uint64(cap(c))*uint64(unsafe.Sizeof(e)))
	return c
}

// chanRecord records a channel; p is its hchan (its buffer is in the same
// block, or none).
func chanRecord(site *Site, p unsafe.Pointer, size uint64) {
	n := record(site, size)
	if inuseMode == inuseShadow {
		if size >= chanWord {
			size = 1<<32 | chanWord // too large to follow
		}
		shadowPut(uintptr(p), n, size|chanWord)
	} else {
		follow(p, n, size)
	}
}

// String records a concatenation whose operands weave could not count
// (a call among them): a result of one byte or none had one non-empty
// operand at most, which is the result, allocating nothing.
func String[S ~string](site *Site, s S) S {
	if len(s) > 1 {
		unfollowedBlock(record(site, uint64(len(s))), uint64(len(s)))
	}
	return s
}

// Concat records the concatenation s of operands of lengths lens: the Go
// runtime returns the only non-empty one as it is, allocating nothing.
func Concat[S ~string](site *Site, lens []int, s S) S {
	nonEmpty := 0
	for _, l := range lens {
		if l != 0 {
			nonEmpty++
		}
	}
	if nonEmpty > 1 {
		unfollowedBlock(record(site, uint64(len(s))), uint64(len(s)))
	}
	return s
}

// FromBytes records string(b): one byte or none allocates nothing (a
// one-byte string is the runtime's static one).
func FromBytes[S ~string](site *Site, s S) S {
	if len(s) > 1 {
		unfollowedBlock(record(site, uint64(len(s))), uint64(len(s)))
	}
	return s
}

// FromRunes records string(runes): the runtime allocates 3 bytes more
// than the encoding, even for no runes.
func FromRunes[S ~string](site *Site, s S) S {
	unfollowedBlock(record(site, uint64(len(s))+3), uint64(len(s))+3)
	return s
}

// FromRune records string(r): 4 bytes, whatever r's encoding needs.
func FromRune[S ~string](site *Site, s S) S {
	unfollowedBlock(record(site, 4), 4)
	return s
}

// unfollowed marks n as having blocks whose lifetimes are not followed
// (a map's, a string's: no address): its in use is estimated.
func unfollowed(n *node) {
	if !n.unfollowed.Load() {
		n.unfollowed.Store(true)
	}
}

// unfollowedBlock marks n unfollowed for a block of size bytes that is
// not in the heap's shadow, counted in its bin's binUnfollowed (size 1<<32
// or more: a bin not known, binMixed).
func unfollowedBlock(n *node, size uint64) {
	unfollowed(n)
	if size >= 1<<32 {
		binMixed.Store(true)
		return
	}
	b := binOf(size)
	binUnfollowed[b].allocs.Add(1)
	binUnfollowed[b].bytes.Add(size)
}

// binUnfollowed are the bins' blocks not in the heap's shadow (maps,
// strings, what the shadow could not take): their frees are estimated,
// the others' exact (encodeBins). binMixed: one such block's bin is not
// known, so no bin's frees are split.
var (
	binUnfollowed [len(bins)]struct{ allocs, bytes atomic.Uint64 }
	binMixed      atomic.Bool
)

// record charges an allocation of size bytes at site to the calling
// goroutine's current context (its root when it is in no woven function),
// under the site's function, and returns the site's node.
func record(site *Site, size uint64) *node {
	key := getg()
	cur := root
	if g := lookup(key); g != nil {
		cur = g.cur
	}
	if cur.fn != site.Func {
		// A site of a frameless function (an allocation leaf, or a package
		// initialiser's): its function's node, uncounted, as a frame would
		// have made it.
		cur = cur.enterChild(site.Func, key)
	}
	n := cur.siteChild(site, key)
	c := sizeClass(size)
	if n.owner == key && !raceEnabled { // as count does for calls
		n.ownAllocs[c]++
		n.ownBytes[c] += size
	} else {
		n.allocs[c].Add(1)
		n.bytes[c].Add(size)
	}
	if !site.Fixed { // a fixed size's bin is its node's counts (encode)
		b := binOf(size)
		bins[b].allocs.Add(1)
		bins[b].bytes.Add(size)
	}
	return n
}

// siteChild is the child of n for site, made owned by key on first use.
func (n *node) siteChild(site *Site, key uintptr) *node {
	for l := n.links.Load(); l != nil; l = l.next {
		if l.key == unsafe.Pointer(site) {
			return l.to
		}
	}
	return n.addChild(unsafe.Pointer(site), nil, site, key)
}

// binOf is the bin of a block of size bytes: its size up to 1024, else
// the bin of the larger ones.
func binOf(size uint64) uint64 { return min(size, 1025) }

func sizeClass(n uint64) int {
	switch {
	case n <= 32:
		return 0
	case n <= 256:
		return 1
	case n <= 2048:
		return 2
	}
	return 3
}
