package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/internal/samefile"
	"github.com/weave-profiler/weave/merge"
	"github.com/weave-profiler/weave/profile"
)

// mergeCommand sums profiles.
var mergeCommand = &cli.Command{
	Name:      "merge",
	Usage:     "add profiles up into one",
	UsageText: "weave merge -o OUT PROFILE...",
	Description: "Sums profiles (a run's fork children, a test suite's runs, many hosts; of one program\n" +
		"or several), merging calling contexts by function path. The totals are the sums; the\n" +
		"metadata lists the sources. OUT is written whole or not at all.",
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
		var ps []*profile.Profile
		for _, path := range c.Args().Slice() {
			p, err := readProfile(path)
			if err != nil {
				return err
			}
			ps = append(ps, p)
		}
		out, err := merge.Profiles(ps, c.Args().Slice())
		if err != nil {
			return err
		}
		return writeOutput(c, c.String("output"), func(w io.Writer) error { return out.Write(w) })
	},
}
