// Command weave weaves profiling advice into C programs and reports their profiles.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "weave: %v\n", err)
		os.Exit(exitCode(err))
	}
}
