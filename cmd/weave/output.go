package main

import (
	"bytes"
	"io"

	"github.com/urfave/cli/v2"

	"weave/driver"
)

// writeOutput runs write on standard output, or into memory and then to
// path through a temporary file renamed into place: a failed write leaves
// no half-written output.
func writeOutput(c *cli.Context, path string, write func(io.Writer) error) error {
	if path == "" || path == "-" {
		return write(c.App.Writer)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return driver.WriteFileAtomic(path, buf.Bytes())
}
