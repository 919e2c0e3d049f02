// Command gobench measures goweave: the goroutine-state options (-gls) and
// the overhead of woven Go benchmarks next to go test's own profilers.
// Run from the module root: go run ./goweave/gobench [-gls] [-count N]
// [-weave old-weave-binary].
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	gls := flag.Bool("gls", false, "measure the goroutine-state options")
	count := flag.Int("count", 5, "runs of each measurement, in turn (the table keeps the median)")
	other := flag.String("weave", "", "measure this weave binary instead of one built here (its default and WEAVE_TIME=exact)")
	flag.Parse()
	root, _ := os.Getwd()
	var err error
	if *gls {
		err = runGLS(root, *count)
	} else {
		err = runOverhead(root, *count, *other)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(1)
	}
}
