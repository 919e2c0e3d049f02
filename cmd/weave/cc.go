package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
)

// ccCommand is `weave cc`: a C compiler driver that weaves every C source.
var ccCommand = &cli.Command{
	Name:            "cc",
	Usage:           "compile and link like cc, with every C source woven and the runtime linked in",
	ArgsUsage:       "[cc arguments]",
	SkipFlagParsing: true,
	HideHelp:        true, // --help goes to the real compiler
	Action: func(c *cli.Context) error {
		cfg, err := newConfig(c)
		if err != nil {
			return err
		}
		if launcherCompiler != nil {
			cfg.Compiler = launcherCompiler
		}
		frames, args, found := framesFlag(c.Args().Slice())
		if err := setFrames(cfg, frames, found); err != nil {
			return err
		}
		args, err = pointcuts(cfg, args)
		if err != nil {
			return err
		}
		err = cfg.CC(args)
		var ee *driver.ExitError
		if errors.As(err, &ee) && ee.Quiet {
			// The compiler has said why; exit as it did.
			return cli.Exit("", ee.Code)
		}
		return err
	},
}
