package main

import (
	"errors"

	"github.com/urfave/cli/v2"
)

// newApp returns the weave command line: weaving is the default action,
// the rest are subcommands, each in its own file.
func newApp() *cli.App {
	return &cli.App{
		Name:  "weave",
		Usage: "weave memory and time profiling into C programs",
		Commands: []*cli.Command{
			reportCommand,
		},
		HideHelpCommand: true,
	}
}

// exitError carries a process exit status chosen by a subcommand, e.g. the
// status of a compiler run on the user's behalf.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
