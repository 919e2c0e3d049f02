package rt

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
)

// The goroutine-state options, measured per call of a small function
// (go test -bench Call ./goweave/rt; the g-field one needs the runtime
// patched: go run ./goweave/gobench -gls). Each woven variant does what
// Enter and Exit do; only the way to the goroutine's state differs.

var fBench = &Func{Name: "leaf", File: "b.go", Line: 1}

var sink int

//go:noinline
func leafPlain(i int) { sink += i }

//go:noinline
func leafTable(i int) {
	defer Enter(fBench).Exit()
	sink += i
}

//go:noinline
func leafExplicitPop(i int) {
	f := Enter(fBench)
	sink += i
	f.Exit() // not run when the function panics: incorrect, measured only
}

// leafGoid finds the state by the goroutine id parsed from runtime.Stack.
//
//go:noinline
func leafGoid(i int) {
	var buf [64]byte
	runtime.Stack(buf[:], false)
	defer enterWith(lookup(getg()), fBench).Exit()
	sink += i
}

// leafPassed is handed its goroutine's state: the lower bound of any
// lookup (it would take changing every woven signature).
//
//go:noinline
func leafPassed(g *G, i int) {
	defer enterWith(g, fBench).Exit()
	sink += i
}

// enterWith is Enter with the state given.
func enterWith(g *G, fn *Func) Frame {
	prev := g.cur
	n := prev.child(unsafe.Pointer(fn), fn, nil)
	n.calls.Add(1)
	g.cur = n
	g.depth++
	return Frame{g: g, prev: prev}
}

func benchCall(b *testing.B, call func(int)) {
	defer Enter(fA).Exit() // the goroutine's state exists, as in woven code
	defer cpuPerOp(b)()
	for i := 0; b.Loop(); i++ {
		call(i)
	}
}

// cpuPerOp reports the thread's CPU time per op (cpu-ns/op), which the
// other loads of a shared machine disturb less than the wall-clock ns/op.
func cpuPerOp(b *testing.B) func() {
	runtime.LockOSThread()
	t0 := threadCPU()
	return func() {
		b.ReportMetric(float64(threadCPU()-t0)/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

func threadCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkCall(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchCall(b, leafPlain) })
	b.Run("getg-table", func(b *testing.B) { benchCall(b, leafTable) })
	b.Run("getg-table-explicit-pop", func(b *testing.B) { benchCall(b, leafExplicitPop) })
	b.Run("goid-table", func(b *testing.B) { benchCall(b, leafGoid) })
	b.Run("passed", func(b *testing.B) {
		defer Enter(fA).Exit()
		g := current()
		defer cpuPerOp(b)()
		for i := 0; b.Loop(); i++ {
			leafPassed(g, i)
		}
	})
	benchGField(b)
}
