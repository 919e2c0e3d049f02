// A program built with the flags that change the standard library's
// compile (-trimpath, -gcflags=all=...): its woven build links, and runs
// as the plain one; nocgo.go has cgo in its name, and no cgo.
package main

import (
	"fmt"
	"runtime"
)

type item struct{ n int }

func where() string {
	_, file, line, _ := runtime.Caller(1)
	return fmt.Sprintf("%s:%d", file, line)
}

func main() {
	var items []*item
	for i := 0; i < 100; i++ {
		items = append(items, newItem(i))
	}
	fmt.Println(len(items), where())
}
