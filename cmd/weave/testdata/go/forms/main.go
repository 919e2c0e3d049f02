// Command forms runs each allocation form of Go n times and prints, for
// each, its index in forms and the number of heap allocations the Go
// runtime counted (the oracle for weave's counts: an
// empty slice, a one-byte string or a concatenation with one non-empty
// operand allocates nothing).
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
)

type pair struct{ a, b int }

var (
	sinkAny   []any
	sinkBytes []byte
	sinkRunes []rune
	sinkInts  []int
	sinkEmpty []struct{}
	sinkStr   string
	sinkPair  *pair
	sinkNone  *struct{}
	sinkMap   map[int]int
	sinkChan  chan int
	total     int
)

// Inputs come from the command line so that nothing is constant.
var (
	zero, one, small, big int
	two, one1             []byte
	word, empty           string
	runes                 []rune
	r                     rune
)

//go:noinline
func use(b []byte) { total += len(b) }

// forms are the allocation forms, one a line.
var forms = []func(i int){
	func(i int) { sinkAny = []any{} },
	func(i int) { sinkAny = make([]any, zero) },
	func(i int) { sinkAny = make([]any, one) },
	func(i int) { sinkEmpty = make([]struct{}, big) },
	func(i int) { sinkStr = string(two) },
	func(i int) { sinkStr = string(one1) },
	func(i int) { sinkStr = string([]byte{byte(i)}) },
	func(i int) { sinkStr = string(runes) },
	func(i int) { sinkStr = string(runes[:zero]) },
	func(i int) { sinkStr = string(r) },
	func(i int) { sinkStr = word + empty },
	func(i int) { sinkStr = empty + word + empty },
	func(i int) { sinkStr = word + word },
	func(i int) { sinkStr = "<" + word + ">" + empty + word + word },
	func(i int) { s := empty; s += word; sinkStr = s },
	func(i int) { s := word; s += word; sinkStr = s },
	func(i int) { s := word; s += empty + word; sinkStr = s },
	func(i int) { s := word; s += word + word; sinkStr = s },
	func(i int) { s := word; s += (word + "<") + id(word); sinkStr = s },
	func(i int) { sinkStr = (word + "<") + (empty + word) },
	func(i int) { sinkStr = word[:one] + word[one:] },
	func(i int) { sinkStr = id(word[:one]) + empty },
	func(i int) { sinkBytes = []byte(word) },
	func(i int) { sinkBytes = []byte(empty) },
	func(i int) { sinkRunes = []rune(word) },
	func(i int) { sinkPair = &pair{i, i} },
	func(i int) { sinkPair = new(pair) },
	func(i int) { sinkNone = &struct{}{} },
	func(i int) { sinkInts = append(sinkInts[:0:0], i) },
	func(i int) { sinkEmpty = append(sinkEmpty[:0:0], struct{}{}) },
	func(i int) { b := make([]byte, small); use(b) },
	func(i int) { b := make([]byte, big); use(b) },
	func(i int) { sinkChan = make(chan int, one) },
}

//go:noinline
func id(s string) string { return s }

// caller is its caller's line.
//
//go:noinline
func caller() int {
	_, _, l, _ := runtime.Caller(1)
	return l
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	zero, _ = strconv.Atoi(os.Args[2])
	one, small, big = zero+1, zero+16, zero+100
	word, empty = os.Args[3], os.Args[2][:zero]
	two, one1, runes, r = []byte(word[:2]), []byte(word[:1]), []rune(word), rune(word[0])
	var before, after runtime.MemStats
	for k, f := range forms {
		f(0) // the first run may make what later runs reuse
		// The fewest of three rounds: the Go runtime's own allocations
		// (a collection's, under load) fall in a round now and then.
		least := ^uint64(0)
		for range 3 {
			runtime.ReadMemStats(&before)
			for i := range n {
				f(i)
			}
			runtime.ReadMemStats(&after)
			least = min(least, after.Mallocs-before.Mallocs)
		}
		fmt.Printf("%d %d\n", k, least)
	}
	// A one-line body that weaving makes long keeps its lines (in panics,
	// in the profile).
	where := func() int { sinkInts = append(sinkInts[:0:0], one, one); return caller() }
	fmt.Printf("line %d\n", where())
	fmt.Fprintln(os.Stderr, total)
}
