// Command frames exercises the Go frame policy: pure helpers, allocation
// leaves, recursion, calls through interfaces and func values, standard
// library calls with and without callbacks, closures and goroutines. Its
// allocation chains must be the same with --frames auto and all.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
)

type item struct {
	name string
	n    int
}

var keep []*item

// square is a pure helper: frameless, inlined.
func square(x int) int { return x * x }

// fib calls only itself and allocates nothing: frameless.
func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// newItem is an allocation leaf: frameless, its node made by its site.
func newItem(i int) *item { return &item{name: "i" + strconv.Itoa(i), n: square(i)} }

// wrap calls an allocation leaf, and the plain build inlines it:
// frameless, skipped by the chains.
func wrap(i int) *item { return newItem(i) }

// shape is called through an interface.
type shape interface{ area() int }

type sq struct{ s int }

func (q sq) area() int { return square(q.s) }

type blob struct{ buf []byte }

func (b *blob) area() int {
	b.buf = make([]byte, 64+len(b.buf))
	return len(b.buf)
}

// total calls through an interface, and the plain build inlines it:
// frameless.
func total(ss []shape) int {
	t := 0
	for _, s := range ss {
		t += s.area()
	}
	return t
}

// tree recurses and allocates.
type node struct{ l, r *node }

func tree(d int) *node {
	if d == 0 {
		return &node{}
	}
	return &node{tree(d - 1), tree(d - 1)}
}

func count(n *node) int {
	if n.l == nil {
		return 1
	}
	return 1 + count(n.l) + count(n.r)
}

// sorted sorts with a callback that allocates: framed (sort.Slice is
// given a func).
func sorted(xs []int) []string {
	var log []string
	sort.Slice(xs, func(i, j int) bool {
		if len(log) < 3 {
			log = append(log, fmt.Sprint(i, j))
		}
		return xs[i] < xs[j]
	})
	return log
}

// shout calls the standard library without callbacks: frameless.
func shout(s string) string { return strings.ToUpper(s) + strings.Repeat("!", 2) }

// apply calls a func value, and is not inlined: framed.
//
//go:noinline
func apply(f func(int) *item, i int) *item { return f(i) }

func main() {
	for i := 0; i < 50; i++ {
		keep = append(keep, wrap(i))
	}
	keep = append(keep, apply(newItem, 7), apply(func(i int) *item { return &item{n: i} }, 8))
	ss := []shape{sq{3}, &blob{}, sq{4}, &blob{}}
	done := make(chan int)
	go func() { done <- count(tree(6)) }()
	fmt.Println(fib(20), total(ss), <-done, count(tree(5)), len(sorted([]int{5, 3, 9, 1})), shout("hi"), len(keep))
	if len(keep) != 52 {
		os.Exit(1)
	}
}
