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
	app := &cli.App{
		Name:  "weave",
		Usage: "weave memory and time profiling into C programs",
		UsageText: "weave cc [weave flags] [cc arguments]    (compile and link, woven)\n" +
			"weave [-v] [weave flags] -o out.c prog.c [cc flags]\n" +
			"weave COMMAND [options] [arguments]\n" +
			"weave help COMMAND                       (a command's flags)",
		Description: "Without a command, weave preprocesses prog.c with $WEAVE_CC (default cc) and the\n" +
			"given flags, weaves profiling advice into it and writes the result to out.c, which any\n" +
			"C compiler builds together with the runtime (weave runtime -o weave_rt.c); give the flags\n" +
			"out.c will be compiled with (-O2, -fno-builtin...): it is woven for them. -v lists\n" +
			"the functions left unwoven or frameless, and why. The weave flags are weave cc's\n" +
			"(weave help cc). A program woven runs as before and writes a profile at exit:\n" +
			"weave report prints it. prog.c - reads the source from standard input. Guides:\n" +
			"README.md and docs/ in weave's source.",
		SkipFlagParsing: true,
		HideHelpCommand: true,
		// Shown by weave --help; weaveAction parses the line itself.
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "v", Usage: "list the functions left unwoven or frameless, and why"},
			&cli.StringFlag{Name: "frames", Usage: "which functions get a frame, `POLICY` auto (default), unit or all; weave help cc lists the other weave flags"},
			&cli.StringFlag{Name: "o", Usage: "the woven `file` (default: standard output)"},
			&cli.BoolFlag{Name: "version", Usage: "print the versions (as weave version)"},
		},
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
			helpCommand,
			versionCommand,
		},
		Action:       weaveAction,
		OnUsageError: onUsageError,
	}
	for _, c := range app.Commands {
		c.OnUsageError = onUsageError
		c.HideHelpCommand = true
		c.UsageText = usageLine(c) // the line a misuse prints, in the help too
	}
	return app
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
		Verbose:      os.Getenv("WEAVE_VERBOSE") == "1",
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
