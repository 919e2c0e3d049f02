// Command golden shows what weaving does to a Go file: a function that can
// be on an allocation chain below its own allocations gets an entry advice
// (main here, which calls add through a func value), every heap allocation
// expression an allocation advice, and comments and formatting stay as
// they were.
package main

import (
	"fmt"
	"os"
	"strings"
)

// point is a pair.
type point struct{ x, y int }

// Grid holds points.
type Grid struct {
	pts  []*point
	name string
}

// add appends a new point (the append may grow the slice).
func (g *Grid) add(x, y int) {
	p := &point{x, y} // escapes into g.pts
	g.pts = append(g.pts, p)
}

// Name is a value method.
func (g Grid) Name() string { return "grid " + g.name }

func sum[T int | float64](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

func main() {
	g := new(Grid) // escapes through the method value below
	add := g.add
	for i := range 4 {
		add(i, i*i)
	}
	lines := make([]string, 0, len(g.pts))
	for _, p := range g.pts {
		lines = append(lines, fmt.Sprintf("%d,%d", p.x, p.y))
	}
	counts := map[string]int{}
	done := make(chan bool)
	ro := make(<-chan int, 2) // a directional channel
	go func(n int) {
		counts["go"] = n // the goroutine runs under main's context
		done <- true
	}(len(lines))
	<-done
	b := []byte(strings.Join(lines, " "))
	fmt.Println(g.Name(), string(b), counts, sum([]int{1, 2, 3}), cap(ro))
	if len(lines) != 4 {
		os.Exit(1)
	}
}
