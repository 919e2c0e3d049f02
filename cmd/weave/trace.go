package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/tracepoints"
)

// controlTimeoutFlag is how long weave trace and weave snapshot wait for the
// process's answer.
var controlTimeoutFlag = &cli.DurationFlag{Name: "timeout", Value: 10 * time.Second, Usage: "how long to wait for the process's answer"}

// traceCommand turns tracepoints on or off in a running woven process.
var traceCommand = &cli.Command{
	Name:      "trace",
	Usage:     "turn tracepoints on (or --off) in a running woven process",
	UsageText: "weave trace [--timeout D] PID PATTERN... | weave trace --off PID",
	Description: "Patterns select woven functions by name (globs: parse_*), by file (file:src/*.c) or\n" +
		"directory (dir:src), and allocation sites (alloc:lstring.c, alloc:lstring.c:123,\n" +
		"alloc:*). The process records the selected functions' entries and exits and the\n" +
		"sites' allocations and frees into <profile>.trace; weave report --format perfetto\n" +
		"exports them. The patterns replace the previous ones. WEAVE_TRACE=PATTERNS traces\n" +
		"from the start.",
	Flags:  []cli.Flag{&cli.BoolFlag{Name: "off", Usage: "stop tracing"}, controlTimeoutFlag},
	Action: runTrace,
}

// snapshotCommand makes a running woven process write its profile now.
var snapshotCommand = &cli.Command{
	Name:        "snapshot",
	Usage:       "make a running woven process write its profile now; it goes on",
	ArgsUsage:   "PID",
	Description: "The profile (M end snapshot) is replaced by the next snapshot and by the final one at exit.",
	Flags:       []cli.Flag{controlTimeoutFlag},
	Action:      runSnapshot,
}

// markCommand sets a mark in a running woven process.
var markCommand = &cli.Command{
	Name:      "mark",
	Usage:     "set a mark (as WEAVE_MARK) in a running woven process",
	ArgsUsage: "PID LABEL",
	Description: "The mark records the time and the heap and starts a new generation, as\n" +
		"WEAVE_MARK(\"LABEL\") in the program would: weave report --between A B lists the blocks\n" +
		"allocated after mark A and still live at mark B.",
	Flags:  []cli.Flag{controlTimeoutFlag},
	Action: runMark,
}

// maxMarkLabel is the longest label the runtime keeps (LABEL_MAX in
// runtime/marks.c).
const maxMarkLabel = 200

func runMark(c *cli.Context) error {
	if c.NArg() != 2 {
		return misuse(c, "want a process id and a label")
	}
	pid, err := controlPID(c, "mark")
	if err != nil {
		return err
	}
	label := c.Args().Get(1)
	switch {
	case label == "" || strings.TrimSpace(label) != label:
		return fmt.Errorf("mark: label %q: want a non-empty label without leading or trailing space", label)
	case strings.ContainsAny(label, "\n\r\x00"):
		return fmt.Errorf("mark: label %q: a label is one line", label)
	case len(label) > maxMarkLabel:
		return fmt.Errorf("mark: label of %d bytes: at most %d", len(label), maxMarkLabel)
	}
	ans, err := tracepoints.Request(pid, "mark "+label, c.Duration("timeout"))
	if err != nil {
		return fmt.Errorf("mark: %v", err)
	}
	fmt.Fprintf(c.App.Writer, "process %d: mark %s %q set\n", pid, strings.TrimPrefix(ans, "mark "), label)
	return nil
}

func controlPID(c *cli.Context, what string) (int, error) {
	if c.NArg() == 0 {
		return 0, misuse(c, "no process id")
	}
	pid, err := strconv.Atoi(c.Args().First())
	if err != nil || pid <= 0 {
		return 0, misuse(c, "%q is not a process id", c.Args().First())
	}
	// A timeout of 0 or less would fail every request with "i/o timeout".
	if d := c.Duration("timeout"); d <= 0 {
		return 0, misuse(c, "--timeout %v: want a positive duration", d)
	}
	return pid, nil
}

func runTrace(c *cli.Context) error {
	pid, err := controlPID(c, "trace")
	if err != nil {
		return err
	}
	req := "off"
	if c.Bool("off") {
		if c.NArg() != 1 {
			return misuse(c, "--off takes no patterns")
		}
	} else {
		if c.NArg() < 2 {
			return misuse(c, "want PID and at least one pattern (or --off)")
		}
		pats := strings.Join(c.Args().Slice()[1:], ",")
		if err := tracepoints.CheckPatterns(pats); err != nil {
			return fmt.Errorf("trace: %v", err)
		}
		req = "trace " + pats
	}
	ans, err := tracepoints.Request(pid, req, c.Duration("timeout"))
	if err != nil {
		return fmt.Errorf("trace: %v", err)
	}
	fmt.Fprintf(c.App.Writer, "process %d: %s\n", pid, ans)
	return nil
}

func runSnapshot(c *cli.Context) error {
	if c.NArg() != 1 {
		return misuse(c, "want one process id")
	}
	pid, err := controlPID(c, "snapshot")
	if err != nil {
		return err
	}
	ans, err := tracepoints.Request(pid, "snapshot", c.Duration("timeout"))
	if err != nil {
		return fmt.Errorf("snapshot: %v", err)
	}
	fmt.Fprintf(c.App.Writer, "process %d: profile written to %s\n", pid, fromHere(pid, strings.TrimPrefix(ans, "snapshot ")))
	return nil
}

// fromHere is path, relative to the process's working directory (a
// relative WEAVE_OUT), as this command's user can open it: joined to the
// process's directory when that is not ours.
func fromHere(pid int, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
	if wd, _ := os.Getwd(); err != nil || cwd == wd {
		return path
	}
	return filepath.Join(cwd, path)
}
