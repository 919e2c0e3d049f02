package parse

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"
	"unsafe"
)

// The parse heap in transparent huge pages, where the kernel gives them on
// request (THP "madvise", the common default).
//
// A translation unit's parse grows the heap from nothing to tens of
// megabytes (Lua's units 30-75 MB, sqlite3.c 280 MB) in well under a
// second, one page fault per 4 KiB: on a virtual machine, where a fault
// costs several microseconds, those faults were half of weave's time on a
// Lua unit (lapi.c: 8,500 faults, 0.18 s of CPU; with huge pages 2,900
// faults, 0.11 s). Go does not ask for huge pages itself since 1.21.1.
// So before a large parse (hugeHeapMin), a large block is allocated
// (fresh memory: Go does not touch it), its range and the heap below it
// are advised MADV_HUGEPAGE, and the block is dropped: the parse's
// allocations then land in advised memory and fault 2 MiB at a time. Peak RSS grows by at
// most the last huge page of each region in use.

const hugeHeap = 256 << 20 // the advised heap: sqlite3.c's parse fits

// adviseHugeHeap advises the heap huge pages and returns the range it
// advised; ahead: the parse's pages are faulted in ahead of it
// (populateAhead).
func adviseHugeHeap(ahead bool) (lo, hi uintptr) {
	const hugePage = 2 << 20
	// No collection for the block's allocation: it would start one (the
	// heap goal is below it), which runtime.GC below waits for before
	// running its own, the parse waiting for both (sqlite3.c's weave: the
	// advice took 7.8-16.5 ms, median 10.5, and 4.3-8.1 ms, median 4.9,
	// without that collection).
	gcPercent := debug.SetGCPercent(-1)
	small := new([64]byte)
	b := make([]byte, hugeHeap)
	p, s := uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(small))
	lo = min(p, s) &^ (64<<20 - 1) // the start of the first heap arena (64 MiB on linux/amd64 and arm64)
	hi = (p + hugeHeap) &^ (hugePage - 1)
	// Holes in [lo, hi) make madvise fail with ENOMEM after advising
	// the mappings in it: nothing to do about it, nor about any other
	// failure (no THP in the kernel: the heap stays as it was).
	syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, 14 /* MADV_HUGEPAGE */)
	runtime.KeepAlive(small)
	b = nil
	// The block's pages back to the heap, for the parse, with one P:
	// runtime.GC finishes the sweep one span at a time, yielding after
	// each, and with another P idle each yield woke it (a futex call).
	// That spin was 2.5-4 ms of CPU of a weave of Lua's lapi.c, 1 ms with
	// one P (perf samples in runtime.goschedImpl).
	procs := runtime.GOMAXPROCS(1)
	runtime.GC()
	runtime.GOMAXPROCS(procs)
	restoreGC(gcPercent)
	if ahead {
		go populateAhead(p, hi, aheadBytes, heapInUse, aheadIdle)
	}
	return lo, hi
}

// Faulting the parse's heap in ahead of it.
//
// Each huge page the parse touches first is a page fault in the parse,
// 2 MiB zeroed by the kernel (and, on a virtual machine, backed by the
// host): for sqlite3.c about 140 of them, 0.1 s of the parse's thread
// (memclrNoHeapPointers' samples, where Go zeroes the objects it hands
// out). With the second CPU idle after the -E step but for the
// collector, a goroutine faults the pages in there, as the heap grows,
// aheadBytes ahead of it (MADV_POPULATE_WRITE, Linux 5.14: it writes
// nothing, a page in place stays as it is); it stops at the end of the
// advised block or once the heap has not grown for aheadIdle. At most
// aheadBytes of RSS the parse would not have touched.
const (
	aheadBytes = 16 << 20
	aheadIdle  = 50 * time.Millisecond
)

// populateAhead faults in the pages of [from, to) in 2 MiB steps, up to
// aheadBytes beyond from + what inUse has grown since the start, until
// to, an error (a kernel without MADV_POPULATE_WRITE), or idle without
// growth.
func populateAhead(from, to, ahead uintptr, inUse func() uint64, idle time.Duration) {
	const step = 2 << 20
	base := inUse()
	next := from
	last := time.Now()
	for next < to {
		grown := uintptr(max(inUse(), base) - base)
		if next >= from+grown+ahead {
			if time.Since(last) > idle {
				return
			}
			time.Sleep(idle / 200)
			continue
		}
		last = time.Now()
		n := min(step, to-next)
		if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, next, n, 23 /* MADV_POPULATE_WRITE */); e != 0 {
			return
		}
		next += n
	}
}

// heapInUse is the bytes of the heap's spans in use.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}
