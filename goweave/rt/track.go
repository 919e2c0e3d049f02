package rt

import (
	"os"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// Exact lifetimes by runtime cleanups (WEAVE_INUSE=cleanup): each block allocated at a site
// whose helper has its address (new, &T{}, slices, appends' growth,
// channels) gets a runtime cleanup, which counts the free when the
// collector frees the block; at exit the runtime collects once and waits
// for the cleanups queued, so what is in use at exit is what the
// collection kept: the blocks still reachable. Maps and strings have no
// address the advice can follow: their sites stay estimated (inuse.go).
// A cleanup costs about a microsecond an allocation (a special record in
// the block's span, kept in order of address): measured in BENCHMARKS.md.

// inuseMode is how frees and in use at exit are had (WEAVE_INUSE).
var inuseMode = func() int {
	switch os.Getenv("WEAVE_INUSE") {
	case "0":
		return inuseOff
	case "estimate":
		return inuseEstimate
	case "cleanup":
		return inuseCleanup
	}
	return inuseShadow // the default, or "exact"
}()

const (
	inuseShadow   = iota // each block in the heap's shadow, a heap dump at exit (shadow.go)
	inuseCleanup         // each block followed by a runtime cleanup (here)
	inuseEstimate        // the runtime's sampled heap profile, per line (inuse.go)
	inuseOff             // none: nothing counted freed
)

// follow follows the block at p, of size bytes, allocated at n's site.
func follow(p unsafe.Pointer, n *node, size uint64) {
	switch inuseMode {
	case inuseShadow:
		if size >= chanWord { // not a channel's: too large to follow
			size = 1 << 32
		}
		shadowPut(uintptr(p), n, size)
	case inuseCleanup:
		track(p, n, size)
	}
}

// freed is a tracked block's cleanup argument.
type freed struct {
	n    *node
	c    uint8 // size class
	size uint64
}

// track follows the block at p, allocated at n's site. A block the
// runtime cannot follow (not in the heap, which an allocation the escape
// analysis misplaced could be) leaves n estimated.
func track(p unsafe.Pointer, n *node, size uint64) {
	if n.site.Expr || p == nil {
		return
	}
	c := sizeClass(size)
	if size == 0 { // no block: freed at once
		n.tracked.Add(1)
		onFree(freed{n, uint8(c), 0})
		return
	}
	defer func() {
		if recover() != nil {
			n.tracked.Add(^uint64(0))
		}
	}()
	n.tracked.Add(1)
	if size <= 16 {
		n.tinyTracked.Add(1)
	}
	runtime.AddCleanup((*byte)(p), onFree, freed{n, uint8(c), size})
}

func onFree(f freed) {
	f.n.frees[f.c].Add(1)
	f.n.freedBytes[f.c].Add(f.size)
	b := binOf(f.size)
	binFrees[b].allocs.Add(1)
	binFrees[b].bytes.Add(f.size)
	pendingFrees.Add(1)
}

// binFrees are the bins' frees of the blocks followed.
var binFrees [len(bins)]struct{ allocs, bytes atomic.Uint64 }

// pendingFrees counts the cleanups run, for drain.
var pendingFrees atomic.Uint64

// drain collects and waits until the cleanups of what the collection
// freed have run: a sentinel block's cleanup, queued after them, has run
// and the count of frees has stopped moving.
func drain() {
	runtime.GC()
	for range 3 {
		done := make(chan struct{})
		s := new([4]uintptr)
		runtime.AddCleanup(s, func(c chan struct{}) { close(c) }, done)
		runtime.KeepAlive(s)
		s = nil
		runtime.GC()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
		}
		before := pendingFrees.Load()
		runtime.Gosched()
		time.Sleep(time.Millisecond)
		if pendingFrees.Load() == before {
			return
		}
	}
}

// exactIn reports whether every allocation of n was followed, and if so
// its blocks and bytes in use at exit (after drain).
func exactIn(n *node) (in inuse, ok bool) {
	var a, b, f, g uint64
	for c := range 4 {
		a += n.allocsIn(c)
		b += n.bytesIn(c)
		f += n.frees[c].Load()
		g += n.freedBytes[c].Load()
	}
	if inuseMode != inuseCleanup || a == 0 || n.tracked.Load() != a {
		return inuse{}, false
	}
	in = inuse{blocks: a - f, bytes: b - g, tiny: min(a-f, n.tinyTracked.Load())}
	for c := range 4 {
		in.byClass[c] = [2]uint64{n.allocsIn(c) - n.frees[c].Load(), n.bytesIn(c) - n.freedBytes[c].Load()}
	}
	return in, true
}
