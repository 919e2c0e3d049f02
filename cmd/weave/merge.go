package main

import (
	"io"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/internal/samefile"
	"github.com/weave-profiler/weave/profile"
)

// mergeCommand sums profiles.
var mergeCommand = &cli.Command{
	Name:      "merge",
	Usage:     "add profiles up into one",
	UsageText: "weave merge -o OUT PROFILE...",
	Description: "Sums profiles (a run's fork children, a test suite's runs, many hosts; of one program\n" +
		"or several), merging calling contexts by function path. The totals, calls, times and leak\n" +
		"kinds are the sums (weave check and report --between work on the result); the header\n" +
		"gives the number of runs, the sum of their run times and the first few sources. The\n" +
		"inputs are read a few at a time: memory follows the result. OUT is written whole or not at all.",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the merged profile `file` (required)"},
	},
	Action: func(c *cli.Context) error {
		if c.NArg() == 0 {
			return misuse(c, "no profiles")
		}
		if c.String("output") == "" {
			return misuse(c, "no output: -o OUT names the merged profile")
		}
		if err := samefile.Check(c.String("output"), c.Args().Slice()...); err != nil {
			return err
		}
		out, err := profile.MergeFiles(c.Args().Slice(), runtime.GOMAXPROCS(0))
		if err != nil {
			return fileError(err)
		}
		return writeOutput(c, c.String("output"), func(w io.Writer) error { return out.Write(w) })
	},
}
