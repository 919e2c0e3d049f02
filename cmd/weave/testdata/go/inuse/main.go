// Command inuse keeps 1,000 items of 64 bytes in a global slice until
// exit, frees 9,000 others, grows slices, leaves one goroutine blocked for
// ever, has goroutines build and drop trees among allocations it does not
// weave (interface conversions, fmt's), and prints the Go runtime's own account of each line's blocks
// (allocated, in use after a collection), sampling every allocation: the
// oracle for weave's exact frees and in use.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

var _ = func() int { runtime.MemProfileRate = 1; return 0 }() // before the other variables

type item struct {
	id   int
	next *item
	pad  [6]int64
}

var keep []*item

var sink *item

func newItem(i int) *item { return &item{id: i} }

func fill(n int) {
	for i := 0; i < n; i++ {
		it := newItem(i)
		if i%10 == 0 {
			keep = append(keep, it)
		} else {
			sink = it
		}
	}
}

func buffers(n int) int {
	t := 0
	for i := 0; i < n; i++ {
		b := make([]byte, 100+i%50)
		t += len(b)
	}
	return t
}

func waiter(c chan int) {
	held := make([]int, 1000)
	c <- len(held)
	select {} // blocked for ever, holding held
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	fill(n)
	t := buffers(n / 10)
	c := make(chan int)
	go waiter(c)
	fmt.Println(len(keep), t, <-c, churn(4, 2000))
	oracle()
}

// oracle prints, for each line of this file, the runtime's count of blocks
// allocated there and still in use after a collection.
func oracle() {
	sink = nil
	// Two collections: the heap profile is as of the last but one (its
	// frees lag a cycle), and a block whose cleanup weave ran in the
	// first (churn's channel) was still in use in it.
	runtime.GC()
	runtime.GC()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			break
		}
	}
	type count struct{ allocs, inuse, inuseBytes int64 }
	lines := map[int]*count{}
	other := int64(0) // live blocks of no line of this file: allocations weave does not see
	for _, r := range recs[:n] {
		mine := false
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			rtFrame := strings.HasPrefix(f.Function, "runtime.") || strings.HasPrefix(f.Function, "internal/runtime/maps.")
			if rtFrame && !allocator(f.Function) {
				break // the runtime's own block (a collection's workers, a channel's waiter)
			}
			if !rtFrame {
				// weave's runtime's own blocks (its nodes, its cleanups'
				// arguments) are not the program's
				if filepath.Base(f.File) == "main.go" && !strings.Contains(f.Function, "goweave/rt.") {
					c := lines[f.Line]
					if c == nil {
						c = &count{}
						lines[f.Line] = c
					}
					c.allocs += r.AllocObjects
					c.inuse += r.InUseObjects()
					c.inuseBytes += r.InUseBytes()
					mine = true
				}
				break
			}
			if !more {
				break
			}
		}
		if !mine {
			other += r.InUseObjects()
		}
	}
	fmt.Fprintf(os.Stderr, "oracle other inuse %d\n", other)
	for l, c := range lines {
		fmt.Fprintf(os.Stderr, "oracle line %d allocs %d inuse %d bytes %d\n", l, c.allocs, c.inuse, c.inuseBytes)
	}
}

// allocator reports whether the runtime function fn is on the way from an
// allocation expression to the allocator.
func allocator(fn string) bool {
	for _, p := range []string{"mallocgc", "newobject", "newarray", "makeslice", "growslice", "makechan", "makemap",
		"convT", "rawstring", "concatstring", "rawbyteslice", "rawruneslice", "slicebyteto", "slicerunetostring", "stringto", "intstring", "mapassign"} {
		if strings.HasPrefix(fn, "runtime."+p) || strings.HasPrefix(fn, "internal/runtime/maps.") {
			return true
		}
	}
	return false
}

type tnode struct {
	l, r *tnode
	name string
}

type pair struct {
	t    *tnode
	j, k int
	l    int
}

var (
	kept      [][]*tnode
	lastBoxes [4][]any
	keptMu    = make(chan struct{}, 1)
	names     = map[string]int{}
)

// churn has g goroutines build and drop trees, each keeping one node in
// n/100 and taking unwoven blocks (any conversions, fmt's) of the trees'
// size class between; it returns the nodes kept.
func churn(g, n int) int {
	done := make(chan []*tnode)
	for i := 0; i < g; i++ {
		go func(i int) {
			var mine []*tnode
			var boxes []any
			for j := 0; j < n; j++ {
				t := build(4)
				if j%100 == 0 {
					mine = append(mine, t)
				}
				var b any = pair{t: t, j: j} // unwoven: a conversion to any, of the trees' size
				var s any = fmt.Sprint(j)
				boxes = append(boxes, b, s)
				if len(boxes) > 50 {
					boxes = boxes[:0]
				}
			}
			lastBoxes[i] = append([]any(nil), boxes...) // boxes does not escape: its first growth may be on the stack
			done <- mine
		}(i)
	}
	total := 0
	for i := 0; i < g; i++ {
		m := <-done
		kept = append(kept, m)
		total += len(m)
	}
	key := strconv.Itoa(total) + " nodes kept at exit" // a string (over 16 bytes: not tiny): estimated
	names[key] = total                                 // the map's growth: not woven
	return total
}

func build(d int) *tnode {
	if d == 0 {
		return &tnode{}
	}
	return &tnode{l: build(d - 1), r: build(d - 1)}
}
