package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/api"
)

// apiCommand writes weave_api.h, for builds that compile a program using
// the API without weave (where its macros compile to nothing) and for
// woven builds through `weave -o` that want the header in their tree.
var apiCommand = &cli.Command{
	Name:      "api",
	Usage:     "write weave_api.h (marks and regions) into a directory",
	UsageText: "weave api -o DIR",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "o", Usage: "output `directory` (default: the header on standard output)"},
	},
	Action: func(c *cli.Context) error {
		if c.NArg() > 0 {
			return misuse(c, "unexpected argument %q (want only -o DIR)", c.Args().First())
		}
		if dir := c.String("o"); dir != "" && dir != "-" {
			// -o names a directory; one named as the header would get a
			// directory weave_api.h holding weave_api.h
			if fi, err := os.Stat(dir); err == nil && !fi.IsDir() || err != nil && strings.HasSuffix(dir, ".h") {
				return fmt.Errorf("api: -o %s: want a directory, where weave_api.h is written (the header alone: weave api > FILE)", dir)
			}
			return api.Write(dir)
		}
		_, err := c.App.Writer.Write(api.Header())
		return err
	},
}
