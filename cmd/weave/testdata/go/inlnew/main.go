// newD is inlined into sum, where &D{} does not escape: the plain build
// allocates nothing there, and no heap allocation may be counted.
package main

import (
	"fmt"
	"runtime"
)

type D struct{ a, b, c int }

func newD(i int) *D { return &D{i, i, i} }

var keep []*D

func sum(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		d := newD(i)
		s += d.a + d.b
	}
	return s
}

func main() {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	s := sum(1000)
	runtime.ReadMemStats(&m1)
	keep = append(keep, newD(1), newD(2))
	fmt.Println(s, "mallocs in sum:", m1.Mallocs-m0.Mallocs)
}
