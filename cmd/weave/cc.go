package main

import "github.com/urfave/cli/v2"

// ccCommand is `weave cc`: a C compiler driver that weaves every C source.
var ccCommand = &cli.Command{
	Name:            "cc",
	Usage:           "compile and link like cc, with every C source woven and the runtime linked in",
	ArgsUsage:       "[cc arguments]",
	SkipFlagParsing: true,
	Action: func(c *cli.Context) error {
		cfg := newConfig(c)
		return cfg.CC(c.Args().Slice())
	},
}
