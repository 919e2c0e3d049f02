// Command inuse keeps 1,000 items of 64 bytes in a global slice until
// exit, frees 9,000 others, grows slices, leaves one goroutine blocked for
// ever, and prints the Go runtime's own account of each line's blocks
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

func init() { runtime.MemProfileRate = 1 }

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
	fmt.Println(len(keep), t, <-c)
	oracle()
}

// oracle prints, for each line of this file, the runtime's count of blocks
// allocated there and still in use after a collection.
func oracle() {
	sink = nil
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
	for _, r := range recs[:n] {
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if !strings.HasPrefix(f.Function, "runtime.") {
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
				}
				break
			}
			if !more {
				break
			}
		}
	}
	for l, c := range lines {
		fmt.Fprintf(os.Stderr, "oracle line %d allocs %d inuse %d bytes %d\n", l, c.allocs, c.inuse, c.inuseBytes)
	}
}
