// Framed functions whose first statement has comments above it: the
// woven build's lines (runtime.Caller, panics, the heap profile) are the
// source's. The entry's line directive went before the comments with the
// statement's line, and every line after was one or more too far.
package main

import (
	"fmt"
	"runtime"
)

func at() int {
	_, _, line, _ := runtime.Caller(1)
	return line
}

var out []string

func one(f func() string) {
	// one comment
	out = append(out, fmt.Sprint("one ", at(), f()))
	out = append(out, fmt.Sprint("one ", at()))
}

func two(f func() string) {
	/// a comment

	// and another after a blank line
	out = append(out, fmt.Sprint("two ", at(), f()))
	out = append(out, fmt.Sprint("two ", at()))
}

func block(f func() string) {
	/* a block
	   comment */
	out = append(out, fmt.Sprint("block ", at(), f()))
	out = append(out, fmt.Sprint("block ", at()))
}

func inline(f func() string) {
	/* same line */ out = append(out, fmt.Sprint("inline ", at(), f()))
	out = append(out, fmt.Sprint("inline ", at()))
}

func short(f func() string) {
	out = append(out, fmt.Sprint("short ", at(), f()))
	out = append(out, fmt.Sprint("short ", at()))
}

func main() {
	f := func() string { return "" }
	one(f)
	two(f)
	block(f)
	inline(f)
	short(f)
	for _, s := range out {
		fmt.Println(s)
	}
}
