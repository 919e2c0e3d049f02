package main

import (
	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
	"github.com/weave-profiler/weave/runtime"
)

// runtimeCommand writes the runtime as one C file, for builds that compile
// woven files with a plain cc line.
var runtimeCommand = &cli.Command{
	Name:  "runtime",
	Usage: "write the weave runtime as one C file",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "o", Usage: "output `file` (default: standard output)"},
	},
	Action: func(c *cli.Context) error {
		if c.NArg() > 0 {
			return misuse(c, "unexpected argument %q (want only -o file)", c.Args().First())
		}
		if out := c.String("o"); out != "" && out != "-" {
			return driver.WriteFileAtomic(out, []byte(runtime.Source()))
		}
		_, err := c.App.Writer.Write([]byte(runtime.Source()))
		return err
	},
}
