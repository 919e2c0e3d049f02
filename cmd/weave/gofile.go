package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
	"github.com/weave-profiler/weave/goweave"
)

// weaveGoFile is `weave [-line] -o out.go in.go`: one Go file, woven with
// its comments and formatting kept; -line adds //line directives so that
// positions in out.go are in.go's.
func weaveGoFile(c *cli.Context, src, out string, flags []string, frames string) error {
	line := false
	for _, f := range flags {
		if f != "-line" {
			return fmt.Errorf("%s: unknown flag for a Go file (only -line)", f)
		}
		line = true
	}
	all, err := goweave.ParseFrames(frames)
	if err != nil {
		return err
	}
	res, err := goweave.WeaveFile(src, line, all)
	if err != nil {
		return err
	}
	if res.Note != "" {
		fmt.Fprintf(c.App.ErrWriter, "weave: %s: %s\n", src, res.Note)
	}
	if out == "" || out == "-" {
		_, err := c.App.Writer.Write(res.Out)
		return err
	}
	return driver.WriteFileAtomic(out, res.Out)
}
