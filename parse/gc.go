package parse

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// The garbage collector's pace while parsing.
//
// cc/v4 builds a large, pointer-rich heap that lives until the end of the
// translation: for sqlite3.c, about 140 MB of AST and 50 MB of
// preprocessor tokens, and about three times as much garbage on the way.
// With the default GOGC=100 the collector runs a dozen times, the last few
// marking most of that heap again each time, and the heap ends at twice its
// live size. Instead the heap goal is kept near heapTarget: GOGC is high
// while the live heap is small, and comes down to minGCPercent as it
// approaches the target. A larger live heap gets GOGC=minGCPercent.
// For sqlite3.c (2 CPUs) that is four collections instead of twelve, 0.05 s
// less time and 20 MB less peak RSS than GOGC=100; a lower minGCPercent
// saves more memory but costs more time (25: 25 MB and 0.1 s more).
//
// An explicit GOGC or GOMEMLIMIT in the environment turns this off.
const (
	heapTarget   = 200 << 20
	minGCPercent = 50
	maxGCPercent = 5000 // the heap goal is at least 4 MB * GOGC/100
)

var paceOnce sync.Once

// PaceGC starts pacing the collector now rather than at the first parse:
// weave cc calls it at its start, so that the heap of the -E step's text
// and the caches' reads, which passed Go's first goal (4 MB) before the
// parse began, is not collected (a small program's compile: 2-3
// collections, 1.3 ms of CPU, for a heap that ends under 10 MB).
func PaceGC() { paceGC() }

// paceGC starts pacing the collector, once per process; Preprocess and
// the parse's watchdog call it.
func paceGC() {
	paceOnce.Do(func() {
		if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
			return
		}
		paced.Store(true)
		repaceGC()
	})
}

// hugeHeapMin is how many bytes of a unit's text outside system headers
// make its parse worth huge pages (hugepages_linux.go). A smaller parse
// touches few of them, each zeroed whole by the kernel on its first
// fault: with huge pages, weave -o of a small program (three headers,
// pruned) took 26-33 ms of CPU, without 22 ms; of Lua's lapi.c (74 KB of
// its own) 44 ms with, 52 ms without (8,200 faults instead of 3,100),
// lvm.c (139 KB) 95 and 111 ms. Below 64 KB the advice (its 256 MB
// block, a collection, 2 MiB zeroed at each fault) costs more than the
// faults it saves: Lua's lzio.c (34 KB of its own in a text without
// comments) 20.2 ms with, 16.8 ms without; the weave processes of Lua's
// 34 units 1,327 ms at 32 KB, 1,224 ms at 64 KB (sums, 3 rounds).
const hugeHeapMin = 64 << 10

var (
	hugeOnce sync.Once
	hugeDone atomic.Bool
)

// useHugeHeap gives the heap huge pages, once per process; ahead: and
// faults them in ahead of the heap's growth (a speculative parse's:
// hugepages_linux.go, populateAhead).
func useHugeHeap(ahead bool) {
	hugeOnce.Do(func() {
		adviseHugeHeap(ahead)
		hugeDone.Store(true)
	})
}

// hugeHeapFor gives the heap huge pages if the parse of text is large
// (hugeHeapMin).
func hugeHeapFor(text []byte) {
	if hugeDone.Load() || len(text) < hugeHeapMin || float64(len(text))*(1-systemShare(text)) < hugeHeapMin {
		return
	}
	useHugeHeap(false)
}

// gcCycle is allocated for its finalizer, which runs after a collection.
type gcCycle struct{ _ *int }

// repaceGC sets GOGC for the next collection from the heap live after the
// last one, and arranges to be called again after the next one.
func repaceGC() {
	setPace()
	runtime.SetFinalizer(&gcCycle{}, func(*gcCycle) { repaceGC() })
}

// paced: the pacer runs (paceGC).
var paced atomic.Bool

// restoreGC undoes debug.SetGCPercent(-1), which returned old: the pace
// for the heap live now if the pacer runs (old is the pace of an earlier
// heap), else old.
func restoreGC(old int) {
	if paced.Load() {
		setPace()
	} else {
		debug.SetGCPercent(old)
	}
}

// setPace sets GOGC for the next collection from the heap live after the
// last one.
func setPace() {
	s := []metrics.Sample{
		{Name: "/gc/heap/live:bytes"},
		{Name: "/gc/scan/globals:bytes"},
		{Name: "/gc/scan/stack:bytes"},
	}
	metrics.Read(s)
	live := s[0].Value.Uint64()
	// The heap goal is live + (live + globals + stacks) * GOGC/100.
	scan := live + s[1].Value.Uint64() + s[2].Value.Uint64()
	pct := minGCPercent
	if live < heapTarget && scan > 0 {
		pct = int(min(uint64(maxGCPercent), max(uint64(minGCPercent), (heapTarget-live)*100/scan)))
	}
	debug.SetGCPercent(pct)
}
