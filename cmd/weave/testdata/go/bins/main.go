// Command bins keeps 200 blocks of 40 bytes in a global, drops 100 of 72
// bytes and makes a map (a context whose in use is estimated): the
// profile's bins must say 0 of the kept ones freed.
package main

import "fmt"

type kept struct{ a [5]int64 }    // 40 bytes
type dropped struct{ a [9]int64 } // 72 bytes

var (
	keep  []*kept
	index = map[string]int{}
	sink  *dropped
)

//go:noinline
func drop(i int) {
	sink = &dropped{a: [9]int64{int64(i)}}
}

func main() {
	keep = make([]*kept, 0, 200)
	for i := range 200 {
		keep = append(keep, &kept{a: [5]int64{int64(i)}})
		index[fmt.Sprint(i%3)] = i
	}
	for i := range 100 {
		drop(i)
	}
	sink = nil
	fmt.Println(len(keep), len(index))
}
