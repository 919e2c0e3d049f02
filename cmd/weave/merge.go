package main

import (
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"time"

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
		if slices.Contains(c.Args().Slice(), "-") { // report, diff and check read it
			return misuse(c, "- (standard input): merge reads profile files; name them")
		}
		if err := samefile.Check(c.String("output"), c.Args().Slice()...); err != nil {
			return err
		}
		stop := mergeGC()
		out, err := profile.MergeFiles(c.Args().Slice(), runtime.GOMAXPROCS(0))
		stop()
		if err != nil {
			return fileError(err)
		}
		return writeOutput(c, c.String("output"), func(w io.Writer) error { return out.Write(w) })
	},
}

// mergeGC paces the collector for a merge: reading the inputs allocates
// many times what the merged result keeps, so rather than collecting each
// time the heap doubles (GOGC=100: a third of the CPU, 4,437 inputs), it
// collects when the heap reaches the larger of 200 MiB and twice the live
// heap: rarely while the result is small, as GOGC=100 does once it is
// large. GOGC or GOMEMLIMIT in the environment win. Returns what stops it.
func mergeGC() (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	const floor = 200 << 20
	percent, limit := debug.SetGCPercent(-1), debug.SetMemoryLimit(floor)
	done := make(chan struct{})
	go func() {
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			metrics.Read(live)
			debug.SetMemoryLimit(max(floor, 2*int64(live[0].Value.Uint64())))
		}
	}()
	return func() {
		close(done)
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}
