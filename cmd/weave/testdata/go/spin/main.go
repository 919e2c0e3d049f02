// Command spin spends CPU in spinA twice as long as in spinB, in turns,
// under the runtime's own CPU profile (written to os.Args[1]): the oracle
// for weave's sampled time of the same run.
package main

import (
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
)

var notes []int

// note allocates: the functions that call it are framed.
func note(x int) { notes = append(notes, x) }

func spin(n int) uint64 {
	h := uint64(1)
	for i := 0; i < n; i++ {
		h = h*6364136223846793005 + 1442695040888963407
	}
	return h
}

func spinA(n int) uint64 {
	note(n)
	return spin(2 * n)
}

func spinB(n int) uint64 {
	note(n)
	return spin(n)
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	rounds, _ := strconv.Atoi(os.Args[2])
	pprof.StartCPUProfile(f)
	var h uint64
	for i := 0; i < rounds; i++ {
		h ^= spinA(2_000_000) ^ spinB(2_000_000)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println(h != 0)
}
