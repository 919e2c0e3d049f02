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

import __wrt "github.com/weave-profiler/weave/goweave/rt"

// point is a pair.
type point struct{ x, y int }

// Grid holds points.
type Grid struct {
	pts  []*point
	name string
}

// add appends a new point (the append may grow the slice).
func (g *Grid) add(x, y int) {
	p := __wrt.New(&__ws0[0], &point{x, y}) // escapes into g.pts
	g.pts = __wrt.Append(&__ws0[1], false, cap(g.pts), append(g.pts, p))
}

// Name is a value method.
func (g Grid) Name() string {
	return __wrt.Concat(&__ws0[2], []int{len("grid "), len(g.name)}, "grid "+g.name)
}

func sum[T int | float64](xs []T) T {
	var s T
	for _, x := range xs {
		s += x
	}
	return s
}

func main() {
	defer __wrt.Finish()
	defer __wrt.Enter(&__wf0[3]).Exit()
	g := new(Grid) // escapes through the method value below
	add := g.add
	for i := range 4 {
		add(i, i*i)
	}
	lines := __wrt.Slice(&__ws0[3], true, make([]string, 0, len(g.pts)))
	for _, p := range g.pts {
		lines = __wrt.Append(&__ws0[4], true, cap(lines), append(lines, fmt.Sprintf("%d,%d", p.x, p.y)))
	}
	counts := __wrt.Map(&__ws0[5], map[string]int{})
	done := __wrt.Chan(&__ws0[6], make(chan bool))
	ro := __wrt.ChanRecv(&__ws0[7], make(<-chan int, 2)) // a directional channel
	{
		__wg1, __wg2, __wgc3 := func(n int) {
			defer __wrt.Enter(&__wf0[4]).Exit()
			counts["go"] = n // the goroutine runs under main's context
			done <- true
		}, len(lines), __wrt.Spawn()
		go func() {
			defer __wrt.Start(__wgc3).Exit()
			__wg1(__wg2)
		}()
	}
	<-done
	b := []byte(strings.Join(lines, " "))
	fmt.Println(g.Name(), __wrt.FromBytes(&__ws0[8], string(b)), counts, sum([]int{1, 2, 3}), cap(ro))
	if len(lines) != 4 {
		__wrt.Exit(1)
	}
}

var __wf0 = [5]__wrt.Func{
	{Name: "main.(*Grid).add", File: "golden.go", Line: 24, Frameless: true},
	{Name: "main.Grid.Name", File: "golden.go", Line: 30, Frameless: true},
	{Name: "main.sum", File: "golden.go", Line: 32, Frameless: true},
	{Name: "main.main", File: "golden.go", Line: 40},
	{Name: "main.main.func1", File: "golden.go", Line: 53},
}

var __ws0 = [9]__wrt.Site{
	{Func: &__wf0[0], File: "golden.go", Line: 25, Col: 7, Op: "composite", Type: "point", Size: 16, Fixed: true},
	{Func: &__wf0[0], File: "golden.go", Line: 26, Col: 10, Op: "append", Type: "[]*point"},
	{Func: &__wf0[1], File: "golden.go", Line: 30, Col: 46, Op: "concat", Type: "string"},
	{Func: &__wf0[3], File: "golden.go", Line: 46, Col: 11, Op: "make", Type: "[]string"},
	{Func: &__wf0[3], File: "golden.go", Line: 48, Col: 11, Op: "append", Type: "[]string"},
	{Func: &__wf0[3], File: "golden.go", Line: 50, Col: 26, Op: "composite", Type: "map[string]int"},
	{Func: &__wf0[3], File: "golden.go", Line: 51, Col: 10, Op: "make", Type: "chan bool"},
	{Func: &__wf0[3], File: "golden.go", Line: 52, Col: 8, Op: "make", Type: "<-chan int"},
	{Func: &__wf0[3], File: "golden.go", Line: 59, Col: 24, Op: "convert", Type: "string"},
}

var _ = os.Exit
