package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
)

// writeOutput runs write on standard output, or streams it to path
// through a temporary file renamed into place: a failed write leaves no
// half-written output, and a large one is never held in memory.
func writeOutput(c *cli.Context, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(c.App.Writer)
	}
	return driver.WriteAtomic(path, write)
}
