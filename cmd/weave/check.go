package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
	"github.com/weave-profiler/weave/report"
	"github.com/weave-profiler/weave/report/leakcheck"
)

// Exit statuses of weave check.
const (
	checkClean      = 0 // no leaks of the failing kinds, or all suppressed
	checkLeaks      = 1 // leaks remain
	checkUnreadable = 2 // a profile or the suppressions could not be read, or a profile has no scan
)

// checkCommand is a CI gate over profiles: LeakSanitizer's leak check, after the fact.
var checkCommand = &cli.Command{
	Name:      "check",
	Usage:     "fail when profiles hold leaks (a CI gate)",
	ArgsUsage: "PROFILE...",
	Description: "Reads the leak kinds the runtime found at exit in each profile and lists the\n" +
		"definitely and indirectly lost blocks (--leak-kinds to change), merged by call chain,\n" +
		"less those a LeakSanitizer-style suppressions file matches (leak:function, leak:file.c,\n" +
		"leak:libname.so, leak:outer>inner; '*' wildcards, '^' and '$' anchors).\n" +
		"Exit status: 0 clean, 1 leaks remain, 2 unreadable input (or a profile without a leak scan).",
	Flags: []cli.Flag{
		&cli.StringFlag{Name: "suppressions", Usage: "LeakSanitizer-format suppressions `FILE`"},
		&cli.StringFlag{Name: "leak-kinds", Value: "definite,indirect", Usage: "kinds that fail the check (definite, indirect, possible, reachable or all)"},
	},
	Action: runCheck,
}

func runCheck(c *cli.Context) error {
	fail := func(code int, format string, args ...any) error {
		return &driver.ExitError{Code: code, Err: fmt.Errorf(format, args...)}
	}
	if c.NArg() == 0 {
		return misuse(c, "no profile given")
	}
	kinds, err := report.ParseLeakKinds(c.String("leak-kinds"))
	if err != nil {
		return fail(checkUnreadable, "check: --leak-kinds: %v", err)
	}
	var supp leakcheck.Suppressions
	if f := c.String("suppressions"); f != "" {
		if supp, err = leakcheck.ParseFile(f); err != nil {
			err = fileError(err)
			return fail(checkUnreadable, "check: %v", err)
		}
	}
	w := c.App.Writer
	code, failed := checkClean, 0
	for _, path := range c.Args().Slice() {
		p, err := readProfile(path)
		if err != nil { // it names the file
			fmt.Fprintf(c.App.ErrWriter, "weave: check: %v\n", err)
			code = checkUnreadable
			continue
		}
		r, err := leakcheck.Check(p, kinds, supp)
		if err != nil {
			fmt.Fprintf(c.App.ErrWriter, "weave: check: %s: %v\n", path, err)
			code = checkUnreadable
			continue
		}
		if r.Exec {
			fmt.Fprintf(w, "%s: clean (ended by exec: its blocks went with its image)", path)
		} else if r.Failed == 0 {
			fmt.Fprintf(w, "%s: clean", path)
		} else {
			leaks := "leaks"
			if r.Failed == 1 {
				leaks = "leak"
			}
			fmt.Fprintf(w, "%s: %d %s, %s bytes in %s blocks", path, r.Failed, leaks, leakcheck.Commas(r.Bytes), leakcheck.Commas(r.Blocks))
			failed++
		}
		if r.Suppressed > 0 {
			fmt.Fprintf(w, " (%s blocks suppressed)", leakcheck.Commas(r.Suppressed))
		}
		// a merged suite's runs that crashed or ran unscanned are not
		// in the verdict: say so rather than call them clean
		runs, ok1 := p.MetaUint("merged")
		scanned, ok2 := p.MetaUint("leak_scan_runs")
		execd, _ := p.MetaUint("exec_runs")
		if ok1 && ok2 && scanned+execd < runs {
			why := "crashed, or WEAVE_LEAK_SCAN=0"
			if failed, _ := p.MetaUint("leak_scan_failed_runs"); failed > 0 {
				reason, _ := p.MetaValue("leak_scan_failed")
				if why = "their scan failed, " + reason; failed < runs-scanned-execd {
					why = fmt.Sprintf("%d whose scan failed, %s; the others crashed, or WEAVE_LEAK_SCAN=0", failed, reason)
				}
			}
			fmt.Fprintf(w, " (%d of %d runs without a leak scan, not checked: %s)", runs-scanned-execd, runs, why)
		}
		if ok1 && execd > 0 && !r.Exec {
			fmt.Fprintf(w, " (%d of %d runs ended by exec)", execd, runs)
		}
		fmt.Fprintln(w)
		for _, l := range r.Leaks {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for _, s := range supp {
		if s.Used == 0 {
			fmt.Fprintf(w, "%s:%d: suppression matched nothing\n", s.File, s.Line)
		}
	}
	if code == checkClean && failed > 0 {
		fmt.Fprintf(c.App.ErrWriter, "weave: check: leaks in %d of %d profiles\n", failed, c.NArg())
		code = checkLeaks
	}
	if code != checkClean {
		return cli.Exit("", code)
	}
	return nil
}
