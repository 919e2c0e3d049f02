package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The workloads: a call-heavy one (fib, 242,785 calls an op) and an
// allocation-heavy one (a binary tree of depth 14: 32,767 allocations and
// as many calls an op, then a walk of it).
const workload = `package work

import (
	"runtime"
	"syscall"
	"testing"
)

var sink int

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

type node struct{ l, r *node }

func tree(d int) *node {
	if d == 0 {
		return &node{}
	}
	return &node{tree(d - 1), tree(d - 1)}
}

func check(n *node) int {
	if n.l == nil {
		return 1
	}
	return 1 + check(n.l) + check(n.r)
}

func cpu(b *testing.B) func() {
	runtime.LockOSThread()
	t0 := threadCPU()
	return func() { b.ReportMetric(float64(threadCPU()-t0)/float64(b.N), "cpu-ns/op") }
}

func threadCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru) // RUSAGE_THREAD
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkFib(b *testing.B) {
	defer cpu(b)()
	for b.Loop() {
		sink = fib(25)
	}
}

func BenchmarkTrees(b *testing.B) {
	defer cpu(b)()
	for b.Loop() {
		sink = check(tree(14))
	}
}
`

type config struct {
	name  string
	build []string // weave go test -c's flags
	argv  []string // the test binary's flags, before the benchmark's
	env   []string
	weave bool
}

func runOverhead(root string, count int, other string) error {
	tmp, err := os.MkdirTemp("", "weave-gobench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	weaveBin := filepath.Join(tmp, "weave")
	if out, err := exec.Command("go", "build", "-o", weaveBin, "./cmd/weave").CombinedOutput(); err != nil {
		return fmt.Errorf("building weave: %v\n%s", err, out)
	}
	if other != "" { // an older weave, for a before/after table
		weaveBin = other
	}
	mod := filepath.Join(tmp, "work")
	os.MkdirAll(mod, 0o755)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/work\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "work_test.go"), []byte(workload), 0o644)
	// Each configuration's test binary is built once (go test -c), then
	// the binaries run in turn, count rounds, so that a change of the
	// machine's load falls on every configuration alike.
	bench := []string{"-test.run", "^$", "-test.bench", ".", "-test.benchtime", "100x", "-test.cpu", "1", "-test.count", "1"}
	quiet := []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}
	configs := []config{
		{name: "plain"},
		{name: "`weave go test` (default: --frames auto, exact in use)", weave: true, env: quiet},
		{name: "`weave go test`, `WEAVE_INUSE=estimate`", weave: true, env: append([]string{"WEAVE_INUSE=estimate"}, quiet...)},
		{name: "`weave go test --frames all`", weave: true, build: []string{"--frames", "all"}, env: quiet},
		{name: "`weave go test`, `WEAVE_INUSE=cleanup`", weave: true, env: append([]string{"WEAVE_INUSE=cleanup"}, quiet...)},
		{name: "`weave go test --frames all`, `WEAVE_TIME=exact`", weave: true, build: []string{"--frames", "all"}, env: append([]string{"WEAVE_TIME=exact"}, quiet...)},
		{name: "`go test -cpuprofile`", argv: []string{"-test.cpuprofile", filepath.Join(tmp, "cpu.prof")}},
		{name: "`go test -memprofile -memprofilerate=1`", argv: []string{"-test.memprofile", filepath.Join(tmp, "mem.prof"), "-test.memprofilerate", "1"}},
	}
	if other != "" { // its flags and variables are not known: its default and exact time only
		configs = []config{configs[0],
			{name: "`weave go test` (" + other + ")", weave: true, env: quiet},
			{name: "`weave go test`, `WEAVE_TIME=exact` (" + other + ")", weave: true, env: append([]string{"WEAVE_TIME=exact"}, quiet...)},
			configs[6], configs[7]}
	}
	bins := map[string]string{}
	for i, c := range configs {
		key := fmt.Sprint(c.weave, c.build)
		if _, ok := bins[key]; ok {
			continue
		}
		bin := filepath.Join(tmp, fmt.Sprintf("work%d.test", i))
		argv := append(append([]string{"go", "test", "-c", "-o", bin}, c.build...), ".")
		if c.weave {
			argv = append([]string{weaveBin}, argv...)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = mod
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %v\n%s", c.name, err, out)
		}
		bins[key] = bin
	}
	runs := map[string]map[string][]float64{} // config -> benchmark -> cpu-ns/op of each round
	for range count {
		for _, c := range configs {
			cmd := exec.Command(bins[fmt.Sprint(c.weave, c.build)], append(append([]string(nil), c.argv...), bench...)...)
			cmd.Dir = mod
			cmd.Env = append(os.Environ(), c.env...)
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("%s: %v\n%s", c.name, err, out)
			}
			if runs[c.name] == nil {
				runs[c.name] = map[string][]float64{}
			}
			for name, v := range parseBench(out) {
				runs[c.name][name] = append(runs[c.name][name], v)
			}
		}
	}
	fmt.Println("| configuration | Fib cpu-ns/op | x plain | Trees cpu-ns/op | x plain |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, c := range configs {
		f, t := median(runs[c.name]["Fib"]), median(runs[c.name]["Trees"])
		fmt.Printf("| %s | %.0f | %.2f | %.0f | %.2f |\n", c.name, f, f/median(runs["plain"]["Fib"]), t, t/median(runs["plain"]["Trees"]))
	}
	return nil
}

// parseBench returns the cpu-ns/op of each benchmark in a test binary's
// output (one run of each).
func parseBench(out []byte) map[string]float64 {
	res := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(strings.Split(f[0], "-")[0], "Benchmark")
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] == "cpu-ns/op" {
				if v, err := strconv.ParseFloat(f[i], 64); err == nil {
					res[name] = v
				}
			}
		}
	}
	return res
}
