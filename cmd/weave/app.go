package main

import (
	"errors"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
)

// newApp returns the weave command line: weaving a file is the default
// action (its arguments are compiler flags, so the root parses them
// itself), the rest are subcommands, each in its own file.
func newApp() *cli.App {
	return &cli.App{
		Name:      "weave",
		Usage:     "weave memory and time profiling into C programs",
		UsageText: "weave [-v] [--frames auto|all] -o out.c prog.c [cc flags]\n   weave cc [--frames auto|unit|all] [cc arguments]\n   weave report [options] [profile]\n   weave diff [options] BASE NEW\n   weave merge PROFILE... -o OUT\n   weave runtime [-o weave_rt.c]\n   weave api [-o DIR]\n   weave maps PID\n   weave trace PID PATTERN... | --off\n   weave snapshot PID\n   weave mark PID LABEL",
		Description: "Without a subcommand, weave preprocesses prog.c with $WEAVE_CC (default cc) and the\n" +
			"given flags, weaves profiling advice into it and writes the result to out.c, which any\n" +
			"C compiler builds together with the runtime (weave runtime -o weave_rt.c).",
		SkipFlagParsing: true,
		HideHelpCommand: true,
		Commands: []*cli.Command{
			ccCommand,
			checkCommand,
			diffCommand,
			mergeCommand,
			reportCommand,
			runtimeCommand,
			apiCommand,
			mapsCommand,
			traceCommand,
			snapshotCommand,
			markCommand,
			goCommand,
			toolexecCommand,
		},
		Action: weaveAction,
	}
}

// newConfig returns the driver configuration from the environment.
func newConfig(c *cli.Context) (*driver.Config, error) {
	timeout, err := driver.ParseTimeoutFromEnv()
	if err != nil {
		return nil, err
	}
	return &driver.Config{
		Compiler:     driver.CompilerFromEnv(),
		Stdout:       c.App.Writer,
		Stderr:       c.App.ErrWriter,
		Strict:       os.Getenv("WEAVE_STRICT") == "1",
		ParseTimeout: timeout,
	}, nil
}

func exitCode(err error) int {
	var ee *driver.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return 1
}
