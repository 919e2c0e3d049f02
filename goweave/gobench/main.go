// Command gobench measures goweave: the goroutine-state options (-gls) and
// the overhead of woven Go benchmarks next to go test's own profilers.
// Run from the module root: go run ./goweave/gobench [-gls] [-count N].
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	gls := flag.Bool("gls", false, "measure the goroutine-state options")
	count := flag.Int("count", 3, "runs of each measurement (the table keeps the median)")
	flag.Parse()
	root, _ := os.Getwd()
	var err error
	if *gls {
		err = runGLS(root, *count)
	} else {
		err = runOverhead(root, *count)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gobench:", err)
		os.Exit(1)
	}
}
