package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/internal/samefile"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/report"
)

// reportCommand prints the tables of a profile.
var reportCommand = &cli.Command{
	Name:      "report",
	Usage:     "print the tables of a profile",
	ArgsUsage: "[profile]",
	Description: "Prints mprof's tables for a profile written by a woven program: memory leaks,\n" +
		"allocation bins, direct allocation and the allocation call graph; and, when the\n" +
		"program ran with timing on (WEAVE_TIME), gprof's flat profile, a time call graph\n" +
		"and the calling-context tree. Without an argument, reads the newest weave-*.prof\n" +
		"in the current directory.",
	Flags: []cli.Flag{
		&cli.StringFlag{
			Name:  "format",
			Value: "text",
			Usage: "output format: " + strings.Join(report.Formats(), " or "),
		},
		&cli.IntFlag{
			Name:  "depth",
			Value: report.DefaultDepth,
			Usage: "functions in a leak table chain, innermost first (0: whole chains)",
		},
		&cli.BoolFlag{
			Name:  "sites",
			Usage: "distinguish call sites within a function in the leak table",
		},
		&cli.StringFlag{
			Name: "tables",
			Usage: "tables to print, comma-separated: " + strings.Join(report.AllTables, ",") +
				", memory, time or all (default: the memory tables, and the time tables when the profile has times)",
		},
		&cli.BoolFlag{
			Name:  "time",
			Usage: "print the time tables (" + strings.Join(report.TimeTables, ",") + ")",
		},
		&cli.BoolFlag{
			Name:  "memory",
			Usage: "print the memory tables (" + strings.Join(report.MemoryTables, ",") + ")",
		},
		&cli.StringFlag{
			Name:  "quantity",
			Value: profile.QuantityBytes,
			Usage: "quantity of the folded stacks and the HTML flame graph: " + strings.Join(profile.Quantities, ", "),
		},
		&cli.StringFlag{
			Name:    "output",
			Aliases: []string{"o"},
			Usage:   "write the report to this file (replaced whole, never half-written) instead of standard output",
		},
		&cli.StringFlag{
			Name:  "leak-kinds",
			Usage: "leak table rows of these kinds only, comma-separated (valgrind's --show-leak-kinds): definite, indirect, possible, reachable or all; needs a profile with a leak scan",
		},
		&cli.StringFlag{
			Name:  "group",
			Usage: "aggregate the tables by source file, directory, its first N levels, or modules (a file of \"name: glob...\" lines): file, dir, dir:N or module:FILE",
		},
		&cli.StringFlag{
			Name:  "between",
			Usage: "`A B`: the blocks allocated after mark A and still live at mark B, by chain (a mark: its label, the last with it; label#N, its Nth; #N, the Nth mark)",
		},
		&cli.StringFlag{Name: "between-to", Hidden: true}, // --between A B's B (flagsFirst)
		&cli.Float64Flag{
			Name:  "threshold",
			Value: report.DefaultThreshold,
			Usage: "hide time table entries below this percentage of all time (0: show all)",
		},
	},
	Action: runReport,
}

func runReport(c *cli.Context) error {
	if c.NArg() > 1 {
		return misuse(c, "too many arguments (want at most one profile)")
	}
	rd, err := report.Lookup(c.String("format"))
	if err != nil {
		return misuse(c, "%v", err)
	}
	if _, err := profile.ParseQuantity(c.String("quantity")); err != nil {
		return misuse(c, "%v", err)
	}
	var kinds []profile.LeakKind
	if c.IsSet("leak-kinds") {
		if kinds, err = report.ParseLeakKinds(c.String("leak-kinds")); err != nil {
			return misuse(c, "--leak-kinds: %v", err)
		}
	}
	var tables []string // nil: report.New's default
	if c.IsSet("tables") {
		if tables, err = report.ParseTables(c.String("tables")); err != nil {
			return misuse(c, "%v", err)
		}
	}
	warnIgnored(c)
	if c.Bool("memory") {
		tables = appendNew(tables, report.MemoryTables...)
	}
	if c.Bool("time") {
		tables = appendNew(tables, report.TimeTables...)
	}
	if th := c.Float64("threshold"); th < 0 || th > 100 || th != th {
		return misuse(c, "--threshold %g: want a percentage, 0 to 100", th)
	}
	depth := c.Int("depth")
	if depth < 0 {
		return misuse(c, "--depth %d: want 0 (whole chains) or more", depth)
	}
	// --between A x.prof, one mark short: x.prof would be taken for mark B
	// and the newest profile here reported on.
	if b := c.String("between-to"); c.IsSet("between") && c.NArg() == 0 && b != "" {
		if st, err := os.Stat(b); err == nil && st.Mode().IsRegular() {
			return misuse(c, "--between A B: %q is a file: give both marks, then the profile (--between A B PROFILE)", b)
		}
	}
	path := c.Args().First()
	if path == "" {
		if path, err = newestProfile(".", "weave-*.prof"); err != nil {
			return err
		}
	}
	_, module, _ := strings.Cut(c.String("group"), "module:")
	if err := samefile.Check(c.String("output"), path, path+".trace", module); err != nil {
		return err
	}
	p, err := readProfile(path)
	if err != nil {
		return err
	}
	var between *report.Between
	if c.IsSet("between") {
		if !c.IsSet("between-to") {
			return misuse(c, "--between A B: want two marks")
		}
		if between, err = report.ApplyBetween(p, c.String("between"), c.String("between-to")); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if !c.IsSet("tables") {
			tables = []string{report.TableLeaks}
		}
	}
	if g := c.String("group"); g != "" {
		if err := report.Group(p, g); err != nil {
			return err
		}
	}
	trace := ""
	if fi, err := os.Stat(path + ".trace"); err == nil && fi.Mode().IsRegular() {
		trace = path + ".trace" // the tracepoints' events, for --format perfetto
	}
	r, err := report.New(p, report.Options{Depth: depth, Sites: c.Bool("sites"), Tables: tables,
		Threshold: c.Float64("threshold"), Quantity: c.String("quantity"), LeakKinds: kinds, Trace: trace, Between: between})
	if err != nil {
		return err
	}
	return writeOutput(c, c.String("output"), func(w io.Writer) error { return rd.Render(w, r) })
}

// ignoredBy are the flags each format does nothing with: pprof, folded
// and perfetto export the profile's stacks or events, not the report's
// tables; only folded stacks and the HTML page have a --quantity.
var ignoredBy = map[string][]string{
	"pprof":    {"tables", "memory", "time", "depth", "sites", "leak-kinds", "threshold", "quantity"},
	"folded":   {"tables", "memory", "time", "depth", "sites", "leak-kinds", "threshold"},
	"perfetto": {"tables", "memory", "time", "depth", "sites", "leak-kinds", "threshold", "quantity"},
	"text":     {"quantity"},
	"json":     {"quantity"},
}

// warnIgnored says which of the flags given do nothing with the format.
func warnIgnored(c *cli.Context) {
	var set []string
	for _, f := range ignoredBy[c.String("format")] {
		if c.IsSet(f) {
			set = append(set, "--"+f)
		}
	}
	if len(set) > 0 {
		verb := "does"
		if len(set) > 1 {
			verb = "do"
		}
		fmt.Fprintf(c.App.ErrWriter, "weave: warning: %s %s nothing with --format %s\n", strings.Join(set, ", "), verb, c.String("format"))
	}
}

// appendNew appends the names not in list yet.
func appendNew(list []string, names ...string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}

// newestProfile returns the most recently modified file in dir whose name
// matches pattern (weave-*.prof).
func newestProfile(dir, pattern string) (string, error) {
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		return "", err
	}
	var best string
	var bestInfo os.FileInfo
	for _, name := range names {
		fi, err := os.Stat(name)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if bestInfo == nil || fi.ModTime().After(bestInfo.ModTime()) ||
			fi.ModTime().Equal(bestInfo.ModTime()) && name > best {
			best, bestInfo = name, fi
		}
	}
	if best == "" {
		return "", errors.New("no weave-*.prof profile in the current directory (name one: weave report FILE)")
	}
	return best, nil
}
