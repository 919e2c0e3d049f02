// Command known allocates a known number of structs through three layers
// of calls, on the main goroutine and on one it starts, and prints what
// the Go runtime counted (the oracle for weave's counts).
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
)

// Widget is 32 bytes on 64-bit platforms.
type Widget struct {
	ID   int
	Next *Widget
	Size uint64
	Tag  int32
}

var keep []*Widget

func makeWidget(i int) *Widget {
	return &Widget{ID: i, Size: uint64(i)}
}

// build and layer are not inlined, so that they have frames and are on
// the chains (a function the plain build inlines is skipped, as gprof
// and perf skip it).
//
//go:noinline
func build(i int) *Widget { return makeWidget(i) }

//go:noinline
func layer(n int) {
	for i := 0; i < n; i++ {
		keep[i] = build(i)
	}
}

func worker(n int, done chan<- uint64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.Mallocs
	layer(n)
	runtime.ReadMemStats(&ms)
	done <- ms.Mallocs - before
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	keep = make([]*Widget, n)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.Mallocs
	layer(n)
	runtime.ReadMemStats(&ms)
	fmt.Println("main mallocs", ms.Mallocs-before)

	done := make(chan uint64)
	go worker(n/2, done)
	fmt.Println("goroutine mallocs", <-done)
	if len(keep) != n {
		os.Exit(3)
	}
}
