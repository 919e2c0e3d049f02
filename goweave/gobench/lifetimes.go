package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
)

// The ways a Go program can learn its blocks' lifetimes, each run on every
// block of Trees' tree (32,767 blocks of 16 bytes an op): what goweave/rt
// does (a word in a shadow of the heap), a runtime cleanup, a finalizer, a
// weak pointer, and the runtime's own heap profile with MemProfileRate set
// to 1 around each allocation only.
const lifetimes = `package work

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"
	"weak"
)

type node struct{ l, r *node }

var sink int

func tree(d int, hook func(*node)) *node {
	var n *node
	if d == 0 {
		n = &node{}
	} else {
		n = &node{tree(d-1, hook), tree(d-1, hook)}
	}
	hook(n)
	return n
}

func treeRate(d int) *node {
	var l, r *node
	if d > 0 {
		l, r = treeRate(d-1), treeRate(d-1)
	}
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	n := &node{l, r}
	runtime.MemProfileRate = old
	return n
}

func check(n *node) int {
	if n.l == nil {
		return 1
	}
	return 1 + check(n.l) + check(n.r)
}

func run(b *testing.B, f func() *node) {
	runtime.LockOSThread()
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	t0 := ru.Utime.Nano() + ru.Stime.Nano()
	for b.Loop() {
		sink = check(f())
	}
	syscall.Getrusage(1, &ru)
	b.ReportMetric(float64(ru.Utime.Nano()+ru.Stime.Nano()-t0)/float64(b.N), "cpu-ns/op")
}

var (
	shadow = make([]uint64, 1<<26)
	weaks  []weak.Pointer[node]
)

func BenchmarkPlain(b *testing.B) { run(b, func() *node { return tree(14, func(*node) {}) }) }
func BenchmarkShadowWord(b *testing.B) {
	run(b, func() *node {
		return tree(14, func(n *node) { shadow[(uintptr(unsafe.Pointer(n))>>3)&(1<<26-1)] = 1<<32 | 16 })
	})
}
func BenchmarkAddCleanup(b *testing.B) {
	run(b, func() *node { return tree(14, func(n *node) { runtime.AddCleanup(n, func(int) {}, 0) }) })
}
func BenchmarkSetFinalizer(b *testing.B) {
	run(b, func() *node { return tree(14, func(n *node) { runtime.SetFinalizer(n, func(*node) {}) }) })
}
func BenchmarkWeakPointer(b *testing.B) {
	run(b, func() *node {
		weaks = weaks[:0]
		return tree(14, func(n *node) { weaks = append(weaks, weak.Make(n)) })
	})
}
func BenchmarkMemProfileRateAround(b *testing.B) { run(b, func() *node { return treeRate(14) }) }
`

func runLifetimes(count int) error {
	tmp, err := os.MkdirTemp("", "weave-lifetimes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	os.WriteFile(filepath.Join(tmp, "go.mod"), []byte("module example.com/work\n\ngo 1.24\n"), 0o644)
	os.WriteFile(filepath.Join(tmp, "work_test.go"), []byte(lifetimes), 0o644)
	bin := filepath.Join(tmp, "work.test")
	cmd := exec.Command("go", "test", "-c", "-o", bin, ".")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%v\n%s", err, out)
	}
	runs := map[string][]float64{}
	var order []string
	for range count {
		out, err := exec.Command(bin, "-test.run", "^$", "-test.bench", ".", "-test.benchtime", "20x", "-test.cpu", "1").CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		for name, v := range parseBench(out) {
			if runs[name] == nil {
				order = append(order, name)
			}
			runs[name] = append(runs[name], v)
		}
	}
	sort.Slice(order, func(i, j int) bool { return median(runs[order[i]]) < median(runs[order[j]]) })
	fmt.Println("| way | Trees cpu-ns/op | x plain |")
	fmt.Println("|---|---:|---:|")
	for _, name := range order {
		fmt.Printf("| %s | %.0f | %.2f |\n", name, median(runs[name]), median(runs[name])/median(runs["Plain"]))
	}
	return nil
}

func median(vs []float64) float64 {
	vs = append([]float64(nil), vs...)
	sort.Float64s(vs)
	return vs[len(vs)/2]
}
