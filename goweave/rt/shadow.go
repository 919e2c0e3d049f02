package rt

import (
	"bufio"
	"errors"
	"io"
	"math"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"strconv"
	"sync/atomic"
	"unsafe"
)

// Exact lifetimes, by default: each block a woven site allocates at an
// address the advice has (new, &T{}, slices, append growth, channels) is
// written in a shadow of the heap: at its address, its node's id and its
// size, one word per 8 bytes of heap (shadowArena a 64 MiB heap arena,
// mapped on first use; its pages are touched only where woven blocks
// are). A block allocated where another was overwrites it: the other was
// freed. At exit the runtime collects once and writes a heap dump
// (runtime/debug.WriteHeapDump, to an unlinked temporary file), whose
// objects are the blocks still live: a shadow word at a live object of
// its size class is a woven block in use at exit; every other woven block
// was freed. Cost: a store an allocation (BENCHMARKS.md, Go targets).
//
// What it cannot see: a woven block freed whose place a block of the same
// size class allocated by code that was not woven took, live at exit, is
// counted in use; blocks of less than 8 bytes (which may share a word)
// and Expr sites (on the stack or not) are not followed, their nodes
// estimated; blocks under 16 bytes without pointers may share a block
// with a live one (the summary says how many at most).

const (
	arenaShift  = 26 // the Go heap's arenas: 64 MiB on 64-bit platforms
	arenaWords  = 1 << (arenaShift - 3)
	shadowSlots = 1 << (48 - arenaShift) // 48-bit addresses
)

type shadowArena [arenaWords]uint64

// shadowL1 maps an arena's index to its shadow; both are mapped outside
// the Go heap (the collector never scans them).
var shadowL1 *[shadowSlots]atomic.Pointer[shadowArena]

func init() {
	if inuseMode == inuseShadow {
		p := mapShadow(int(unsafe.Sizeof(*shadowL1)))
		if p == nil {
			inuseMode = inuseEstimate
			return
		}
		shadowL1 = (*[shadowSlots]atomic.Pointer[shadowArena])(p)
	}
}

// chanWord marks a channel's word: its size is the weave's estimate of
// the runtime's channel header plus the buffer (alloc.go), not the block's.
const chanWord = 1 << 31

// shadowPut writes the block at p, of size bytes (or'ed with chanWord),
// allocated at n's site.
func shadowPut(p uintptr, n *node, size uint64) {
	if size&^chanWord < 8 || size >= 1<<32 || n.site.Expr {
		if size != 0 {
			unfollowedBlock(n, size&^chanWord)
		}
		return
	}
	a := shadowL1[(p>>arenaShift)&(shadowSlots-1)].Load()
	if a == nil {
		if a = newShadowArena(p); a == nil {
			unfollowedBlock(n, size&^chanWord) // no memory for the shadow: this block estimated
			return
		}
	}
	a[(p>>3)&(arenaWords-1)] = uint64(n.id)<<32 | size
}

// newShadowArena maps the shadow of p's heap arena; nil if it cannot.
func newShadowArena(p uintptr) *shadowArena {
	slot := &shadowL1[(p>>arenaShift)&(shadowSlots-1)]
	a := (*shadowArena)(mapShadow(int(unsafe.Sizeof(shadowArena{}))))
	if a == nil {
		return nil
	}
	if !slot.CompareAndSwap(nil, a) { // another goroutine's came first: this one stays mapped, untouched
		a = slot.Load()
	}
	return a
}

// shadowAt is the shadow word at p (0: none).
func shadowAt(p uint64) uint64 {
	if a := shadowL1[(p>>arenaShift)&(shadowSlots-1)].Load(); a != nil {
		return a[(p>>3)&(arenaWords-1)]
	}
	return 0
}

// live is what the shadow finds in use at exit: each node's blocks and
// bytes by size class, its blocks under 16 bytes, and the bins'.
type live struct {
	byNode  map[*node]*inuse
	bins    [len(bins)]struct{ blocks, bytes uint64 }
	nodes   []*node  // by id, when the dump was written
	classes []uint64 // the runtime's size classes
}

// blockType is a site's blocks' type, or their elements' (elems).
type blockType struct {
	t     reflect.Type
	elems bool
	mask  uint64 // the pointer words of t's first 64
}

func (s *Site) setType(t reflect.Type, elems bool) {
	var m uint64
	ptrWords(t, 0, &m)
	s.typ.Store(&blockType{t, elems, m})
}

// ptrWords sets in m the words of a value of type t at offset off that
// the collector scans as pointers, as the compiler's pointer maps do (an
// interface's second word only), up to the 64th.
func ptrWords(t reflect.Type, off uintptr, m *uint64) {
	if off/8 >= 64 {
		return
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.String, reflect.Slice:
		*m |= 1 << (off / 8)
	case reflect.Interface:
		if off/8+1 < 64 {
			*m |= 1 << (off/8 + 1)
		}
	case reflect.Array:
		for i := 0; i < t.Len() && off+uintptr(i)*t.Elem().Size() < 512; i++ {
			ptrWords(t.Elem(), off+uintptr(i)*t.Elem().Size(), m)
		}
	case reflect.Struct:
		for i := range t.NumField() {
			ptrWords(t.Field(i).Type, off+t.Field(i).Offset, m)
		}
	}
}

// mask is the pointer words of the first 64 of a block of size bytes of
// the site's type: the element's repeated for a slice's; ok false when
// the site's type is not known (a channel's).
func (bt *blockType) blockMask(size uint64) (m uint64, ok bool) {
	if bt == nil {
		return 0, false
	}
	es := uint64(bt.t.Size())
	if !bt.elems || es == 0 || es%8 != 0 && bt.mask != 0 {
		return bt.mask, true
	}
	for off := uint64(0); off < size && off/8 < 64; off += es {
		m |= bt.mask << (off / 8)
	}
	return m, true
}

// shadowLive collects, writes a heap dump and reads it: each woven block
// in use is a shadow word where a live object starts (after a type header:
// a block over 512 bytes with pointers) or, in a tiny block (two blocks
// under 16 bytes without pointers share one), 8 bytes in, whose size and
// pointer layout the object's are. nil if there is no dump. Called first
// at exit, so that nothing the exit allocates is in the dump.
func shadowLive() *live {
	if inuseMode != inuseShadow {
		return nil
	}
	fd := dumpFile()
	if fd < 0 {
		noDump = "no file for the heap dump"
		return nil
	}
	runtime.GC()
	runtime.ReadMemStats(&exitStats)
	if exitStats.HeapAlloc <= maxDump {
		debug.WriteHeapDump(uintptr(fd))
	}
	f := os.NewFile(uintptr(fd), "heap dump") // after the dump: not in it
	defer f.Close()
	if exitStats.HeapAlloc > maxDump {
		noDump = "the heap at exit over " + strconv.Itoa(maxDump>>30) + " GiB, too large to dump"
		return nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		noDump = "the heap dump unread: " + err.Error()
		return nil
	}
	treeMu.Lock()
	ns := append([]*node(nil), nodes...)
	treeMu.Unlock()
	l := &live{byNode: map[*node]*inuse{}, nodes: ns, classes: sizeClasses()}
	err := heapObjects(bufio.NewReaderSize(f, 1<<16), func(addr, size, mask uint64) {
		at := addr
		if mask != 0 && size > 512 && size <= maxSmall {
			at += 8
			mask >>= 1
		}
		l.add(shadowAt(at), size, mask)
		if size == 16 && mask == 0 {
			l.add(shadowAt(addr+8), size, 0)
		}
	})
	if err != nil {
		noDump = "the heap dump unread: " + err.Error()
		return nil
	}
	return l
}

// maxDump is the largest heap dumped at exit (writing and reading it takes
// about 10 ms a MiB); a larger one is estimated.
const maxDump = 2 << 30

var (
	exitStats runtime.MemStats // a global: read without allocating before the dump
	noDump    string           // why there was no dump, when there was none
)

// add counts the woven block of word w in use, if it is the block of the
// live object of size bytes and pointer words mask at its address.
func (l *live) add(w, obj, mask uint64) {
	id, size, ptrs := int(w>>32), w&(chanWord-1), mask != 0
	fits := blockSize(l.classes, size, ptrs) == obj
	if w&chanWord != 0 {
		fits = blockSize(l.classes, size, ptrs) <= obj && obj <= blockSize(l.classes, size+64, ptrs)
	}
	if w == 0 || id <= 0 || id >= len(l.nodes) || !fits {
		return // not the block this word was written for: an old word
	}
	m, ok := l.nodes[id].site.typ.Load().blockMask(size)
	if ptrs && obj > 512 && obj <= maxSmall {
		m &^= 1 << 63 // the dump's 64th word was the header
	}
	if ok && w&chanWord == 0 && m != mask {
		return // another type's block
	}
	u := l.byNode[l.nodes[id]]
	if u == nil {
		u = &inuse{}
		l.byNode[l.nodes[id]] = u
	}
	c := sizeClass(size)
	u.blocks++
	u.bytes += size
	u.byClass[c][0]++
	u.byClass[c][1] += size
	if size < 16 {
		u.tiny++
	}
	b := binOf(size)
	l.bins[b].blocks++
	l.bins[b].bytes += size
}

const maxSmall = 32768 // the largest small block; larger ones are whole pages

// blockSize is the size of the heap object a request of size bytes gets:
// tiny blocks are 16 bytes, a block over 512 bytes with pointers has a
// type header, the small ones are rounded up to a size class.
func blockSize(classes []uint64, size uint64, ptrs bool) uint64 {
	switch {
	case size < 16 && !ptrs:
		return 16
	case size > maxSmall || ptrs && size > maxSmall-8:
		return (size + 8191) &^ 8191
	case ptrs && size > 512:
		size += 8
	}
	i := sort.Search(len(classes), func(i int) bool { return classes[i] >= size })
	if i == len(classes) {
		return 0
	}
	return classes[i]
}

// sizeClasses are the runtime's size classes, from its histogram of
// allocations by size (whose bucket boundaries are each class plus 1).
func sizeClasses() []uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs-by-size:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	var out []uint64
	for _, b := range s[0].Value.Float64Histogram().Buckets {
		if b > 1 && !math.IsInf(b, 1) {
			out = append(out, uint64(b)-1)
		}
	}
	return out
}

// shadowForget clears the word at p: the runtime's own block, allocated
// there, tells that a woven block that was there was freed.
func shadowForget(p unsafe.Pointer) {
	if inuseMode == inuseShadow {
		if a := shadowL1[(uintptr(p)>>arenaShift)&(shadowSlots-1)].Load(); a != nil {
			a[(uintptr(p)>>3)&(arenaWords-1)] = 0
		}
	}
}

// heapObjects calls fn with the address and size of each object in a heap
// dump (the format of runtime/heapdump.go, "go1.7 heap dump"), and the
// pointer words of its first 64: the
// objects come after the parameters, types and itabs, before the rest.
func heapObjects(r *bufio.Reader, fn func(addr, size, mask uint64)) error {
	const header = "go1.7 heap dump\n"
	h := make([]byte, len(header))
	if _, err := io.ReadFull(r, h); err != nil || string(h) != header {
		return errors.New("not a go1.7 heap dump")
	}
	var err error
	u := func() uint64 {
		var v uint64
		for shift := uint(0); err == nil; shift += 7 {
			var b byte
			if b, err = r.ReadByte(); err != nil || shift > 63 {
				break
			}
			v |= uint64(b&0x7f) << shift
			if b < 0x80 {
				return v
			}
		}
		if err == nil {
			err = errors.New("bad varint")
		}
		return 0
	}
	skip := func(n uint64) {
		if err == nil {
			_, err = r.Discard(int(n))
		}
	}
	for err == nil {
		switch u() {
		case 1: // object: address, contents, pointer fields (kind, offset) to kind 0
			addr, size := u(), u()
			skip(size)
			var mask uint64
			for err == nil && u() != 0 {
				if off := u(); off/8 < 64 {
					mask |= 1 << (off / 8)
				}
			}
			if err == nil {
				fn(addr, size, mask)
			}
		case 3: // type: address, size, name, indirect
			u()
			u()
			skip(u())
			u()
		case 6: // parameters: endianness, pointer size, arena start and end, GOARCH, version, CPUs
			u()
			u()
			u()
			u()
			skip(u())
			skip(u())
			u()
		case 8: // itab: address, type
			u()
			u()
		default: // the goroutines and the rest: no more objects
			return err
		}
	}
	return err
}
