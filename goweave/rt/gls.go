package rt

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Goroutine-local state: a table keyed by the address of the runtime's g
// (read by getg in assembly), open addressing with linear probing. A state
// lives while its goroutine is inside woven code: it is made at the first
// woven entry and dropped when the pseudo-stack empties, so a goroutine
// that exits (its defers, and so the pops, have run) leaves nothing behind
// for the next goroutine that gets the same g. Lookups take no lock;
// inserts and removals take insertMu. Measured against the alternatives in
// BENCHMARKS.md (section Go targets).

// G is one goroutine's pseudo-stack.
type G struct {
	cur     *node
	depth   int
	childNs int64 // exact timing: time of the finished callees of the current frame
	key     uintptr
}

const (
	tableBits = 14
	tableSize = 1 << tableBits
	maxProbe  = 64
	tombstone = 1
)

var (
	table [tableSize]struct {
		key atomic.Uintptr
		g   atomic.Pointer[G]
	}
	insertMu sync.Mutex
	overflow sync.Map // key -> *G, when maxProbe slots are taken
	overN    atomic.Int32
)

func slot(key uintptr) uintptr {
	return (key * 0x9E3779B97F4A7C15 >> (64 - tableBits)) & (tableSize - 1)
}

// current returns the calling goroutine's state, or nil.
func current() *G { return lookup(getg()) }

// lookup returns the state of the goroutine whose key is key, or nil.
func lookup(key uintptr) *G {
	for i, s := uintptr(0), slot(key); i < maxProbe; i, s = i+1, (s+1)&(tableSize-1) {
		switch table[s].key.Load() {
		case key:
			return table[s].g.Load()
		case 0:
			return lookupOverflow(key)
		}
	}
	return lookupOverflow(key)
}

func lookupOverflow(key uintptr) *G {
	if overN.Load() == 0 {
		return nil
	}
	if g, ok := overflow.Load(key); ok {
		return g.(*G)
	}
	return nil
}

// attach makes the calling goroutine's state, with its stack starting at ctx.
func attach(ctx *node) *G {
	key := getg()
	g := &G{cur: ctx, key: key}
	shadowForget(unsafe.Pointer(g))
	insertMu.Lock()
	defer insertMu.Unlock()
	for i, s := uintptr(0), slot(key); i < maxProbe; i, s = i+1, (s+1)&(tableSize-1) {
		if k := table[s].key.Load(); k == 0 || k == tombstone {
			table[s].g.Store(g)
			table[s].key.Store(key)
			return g
		}
	}
	overflow.Store(key, g)
	overN.Add(1)
	return g
}

// detach drops the state of a goroutine whose pseudo-stack is empty.
func (g *G) detach() {
	insertMu.Lock()
	defer insertMu.Unlock()
	for i, s := uintptr(0), slot(g.key); i < maxProbe; i, s = i+1, (s+1)&(tableSize-1) {
		switch table[s].key.Load() {
		case g.key:
			table[s].key.Store(tombstone)
			table[s].g.Store(nil)
			return
		case 0:
			i = maxProbe
		}
	}
	if _, ok := overflow.LoadAndDelete(g.key); ok {
		overN.Add(-1)
	}
}
