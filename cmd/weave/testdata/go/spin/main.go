// Command spin spends CPU in spinA twice as long as in spinB, in turns,
// for os.Args[2] seconds at least, under the runtime's own CPU profile (1
// kHz, written to os.Args[1]): the oracle for weave's sampled time of the
// same run. It prints the rounds it made.
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

var notes []int

// note allocates: the functions that call it are framed (spinA and spinB,
// which are not inlined: an inlined function's time is its caller's).
func note(x int) { notes = append(notes, x) }

func spin(n int) uint64 {
	h := uint64(1)
	for i := 0; i < n; i++ {
		h = h*6364136223846793005 + 1442695040888963407
	}
	return h
}

//go:noinline
func spinA(n int) uint64 {
	note(n)
	return spin(2 * n)
}

//go:noinline
func spinB(n int) uint64 {
	note(n)
	return spin(n)
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	secs, _ := strconv.ParseFloat(os.Args[2], 64)
	runtime.SetCPUProfileRate(1000) // 1 kHz, not pprof's 100 Hz: the oracle's own sampling error small
	pprof.StartCPUProfile(f)
	var h uint64
	rounds := 0
	for start := time.Now(); time.Since(start).Seconds() < secs; rounds++ {
		h ^= spinA(100_000) ^ spinB(100_000)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println("rounds", rounds, h != 0)
}
