package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/report/diff"
)

// diffCommand compares two profiles and checks budgets.
var diffCommand = &cli.Command{
	Name:      "diff",
	Usage:     "compare two profiles; check budgets",
	ArgsUsage: "BASE NEW",
	Description: "Compares two profiles per function, call chain, allocation site and type:\n" +
		"allocations, bytes, bytes in use at exit, calls and time, both values and the change,\n" +
		"sorted by the largest change. Contexts are matched by their function names, so builds\n" +
		"that differ are comparable. Counts are exact: two runs of the same input differ only in time.\n\n" +
		"--fail-if RULE (repeatable) exits 1 when the rule holds for NEW, naming the rule and its\n" +
		"numbers (2 when a rule is malformed or names a function in neither profile).\n" +
		"RULE is QUANTITY[(FUNCTION)] OP LIMIT: QUANTITY one of " + strings.Join(profile.Quantities, ", ") + "\n" +
		"(with (FUNCTION): that function's, callees included, but calls(f) counts f's calls); OP >, >=, < or <=; LIMIT N (the new\n" +
		"value), +N or -N (the change) or +N% (the change relative to BASE); N may end in K, M, G\n" +
		"(x1024; or KiB, MiB, GiB) or, for time, ns, us, ms, s. E.g. --fail-if 'bytes_in_use > +5%' --fail-if 'allocs(parse) > 12'.",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "format", Value: "text", Usage: "output format: text or json"},
		&cli.IntFlag{Name: "depth", Value: diff.DefaultDepth, Usage: "functions in a chain, innermost first (0: whole chains)"},
		&cli.StringFlag{Name: "sort", Value: profile.QuantityBytes, Usage: "sort by the change of: " + strings.Join(profile.Quantities, ", ")},
		&cli.IntFlag{Name: "top", Value: 10, Usage: "rows per table in the text output (0: all)"},
		&cli.StringSliceFlag{Name: "fail-if", Usage: "budget rule (see above); repeatable"},
	},
	Action: runDiff,
}

func runDiff(c *cli.Context) error {
	if c.NArg() != 2 {
		return misuse(c, "want two profiles, BASE and NEW")
	}
	format := c.String("format")
	if format != "text" && format != "json" {
		return misuse(c, "unknown format %q (want text or json)", format)
	}
	sort := c.String("sort")
	if !slices.Contains(profile.Quantities, sort) {
		return misuse(c, "--sort %q: want one of %s", sort, strings.Join(profile.Quantities, ", "))
	}
	if c.Int("depth") < 0 || c.Int("top") < 0 {
		return misuse(c, "--depth and --top want 0 or more")
	}
	var rules []*diff.Rule
	for _, s := range c.StringSlice("fail-if") {
		r, err := diff.ParseRule(s)
		if err != nil {
			return misuse(c, "%v", err) // 2: a malformed rule is no broken budget
		}
		rules = append(rules, r)
	}
	base, err := readProfile(c.Args().Get(0))
	if err != nil {
		return err
	}
	new, err := readProfile(c.Args().Get(1))
	if err != nil {
		return err
	}
	d := diff.Compare(base, new, c.Int("depth"), sort)
	var verdicts []diff.Verdict
	var broken []string
	for _, r := range rules {
		v, err := r.Check(d)
		if err != nil {
			return &driver.ExitError{Code: exitUsage, Err: err}
		}
		verdicts = append(verdicts, v)
		if v.Broken {
			broken = append(broken, v.String())
		}
	}
	if format == "json" {
		err = d.WriteJSON(c.App.Writer, c.Args().Get(0), c.Args().Get(1), verdicts)
	} else {
		err = d.WriteText(c.App.Writer, c.Args().Get(0), c.Args().Get(1), c.Int("top"), verdicts)
	}
	if err != nil {
		return err
	}
	if len(broken) > 0 {
		return fmt.Errorf("budget broken: %s", strings.Join(broken, "; "))
	}
	return nil
}
