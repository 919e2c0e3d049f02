// Command bench measures weave's overhead against the uninstrumented
// program and against peer tools (gprof, uftrace, valgrind memcheck and
// massif, heaptrack, LeakSanitizer), side by side on the same machine, and
// prints the tables recorded in BENCHMARKS.md.
//
// Run it from the repository root:
//
//	go run ./bench                 # full sizes, 5 runs of each configuration
//	go run ./bench -size tiny      # seconds: what CI runs so the harness cannot rot
//	go run ./bench -record BENCHMARKS.md   # also replace the results section there
//
// Each benchmark program is built once per build variant (gcc -O2, weave
// cc -O2, gcc -O2 -pg, clang -O2, clang -O2 -fsanitize=leak; all with -g)
// and cached under the work directory (default out/bench). Every
// configuration of a program is run in each round, in an order rotated from
// round to round, so machine drift hits all of them alike; the tables show
// medians. Wall time and peak RSS come from the wait4 rusage of the child.
// Tools that are not installed are skipped.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"
)

// options are the command-line settings.
type options struct {
	size     string
	runs     int
	work     string
	programs string
	configs  string
	record   string
	timeout  time.Duration
	jobs     int
	weaveEnv multiFlag
	weave    string
}

// multiFlag is a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, " ") }
func (m *multiFlag) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	var o options
	flag.StringVar(&o.size, "size", "full", "benchmark sizes: full or tiny")
	flag.IntVar(&o.runs, "runs", 0, "runs of each configuration (default 5, 1 for -size tiny)")
	flag.StringVar(&o.work, "work", filepath.Join("out", "bench"), "work `dir`: builds, unpacked sources, run directories")
	flag.StringVar(&o.programs, "programs", "", "comma-separated benchmark programs to run (default all)")
	flag.StringVar(&o.configs, "configs", "", "comma-separated configurations to run (default all installed); plain is always run")
	flag.StringVar(&o.record, "record", "", "replace the results section of this markdown `file` (BENCHMARKS.md)")
	flag.DurationVar(&o.timeout, "timeout", 15*time.Minute, "limit for one run")
	flag.IntVar(&o.jobs, "j", runtime.NumCPU(), "parallel builds")
	flag.StringVar(&o.weave, "weave", "", "use this weave `binary` instead of building ./cmd/weave")
	flag.Var(&o.weaveEnv, "weave-env", "extra weave configuration `name:VAR=value[,VAR=value]` (repeatable)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "bench: no arguments expected; see -h")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	interrupted = ctx
	if err := run(&o); err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		os.Exit(1)
	}
}

// run is the whole benchmark: set up, build, measure, report.
func run(o *options) error {
	sz, ok := sizeTable[o.size]
	if !ok {
		return fmt.Errorf("unknown -size %q (full, tiny)", o.size)
	}
	if o.runs == 0 {
		o.runs = sz.runs
	}
	root, err := repoRoot()
	if err != nil {
		return err
	}
	work, err := filepath.Abs(o.work)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	start := time.Now()
	logf("work directory %s", work)

	env, err := setup(root, work, o.weave)
	if err != nil {
		return err
	}
	rusageHelper = env.rusage
	cfgs, err := selectConfigs(configs(env, o.weaveEnv), o.configs, env)
	if err != nil {
		return err
	}
	progs, err := selectPrograms(programs(env, sz), o.programs)
	if err != nil {
		return err
	}
	b := newBuilder(env, sz)
	if err := b.buildAll(progs, cfgs, o.jobs); err != nil {
		return err
	}

	res := &results{env: env, size: o.size, sz: sz, runs: o.runs, configs: cfgs, programs: progs, command: commandLine()}
	for _, p := range progs {
		res.measureProgram(b, p, o)
		if interrupted.Err() != nil {
			return fmt.Errorf("interrupted")
		}
	}
	res.measureStats(b, o)
	res.measureReport(o)
	res.measureMerge(o)
	res.measureWeaveTime(b, o)
	res.elapsed = time.Since(start)

	md := res.markdown()
	fmt.Print(md)
	out := filepath.Join(work, "results.md")
	if err := os.WriteFile(out, []byte(md), 0o644); err != nil {
		return err
	}
	if err := res.writeJSON(filepath.Join(work, "results.json")); err != nil {
		return err
	}
	logf("results written to %s and results.json (%s)", out, res.elapsed.Round(time.Second))
	if o.record != "" {
		if err := record(o.record, md); err != nil {
			return err
		}
		logf("results recorded in %s", o.record)
	}
	return res.failure()
}

// logf prints a progress line on stderr.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// commandLine is how this run was started, for the record.
func commandLine() string {
	args := []string{"go run ./bench"}
	for _, a := range os.Args[1:] {
		if strings.ContainsAny(a, " \t'\"$") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		args = append(args, a)
	}
	return strings.Join(args, " ")
}

// repoRoot finds the weave module root from the current directory up.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "module github.com/weave-profiler/weave") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("run from inside the weave repository (no go.mod of module github.com/weave-profiler/weave above %s)", dir)
		}
		dir = parent
	}
}
