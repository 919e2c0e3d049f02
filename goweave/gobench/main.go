// Command gobench measures goweave: the goroutine-state options (-gls),
// the ways to follow blocks' lifetimes (-lifetimes) and the overhead of
// woven Go benchmarks next to go test's own profilers. Run from the module
// root: go run ./goweave/gobench [-gls|-lifetimes] [-count N] [-weave
// old-weave-binary].
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	gls := flag.Bool("gls", false, "measure the goroutine-state options")
	life := flag.Bool("lifetimes", false, "measure the ways to follow blocks' lifetimes")
	count := flag.Int("count", 5, "runs of each measurement, in turn (the table keeps the median)")
	other := flag.String("weave", "", "measure this weave binary instead of one built here (its default and WEAVE_TIME=exact)")
	flag.Parse()
	root, _ := os.Getwd()
	var err error
	switch {
	case *gls:
		err = runGLS(root, *count)
	case *life:
		err = runLifetimes(*count)
	default:
		err = runOverhead(root, *count, *other)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(1)
	}
}
