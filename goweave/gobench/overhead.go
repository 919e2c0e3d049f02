package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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
	argv  []string // after "go test" (or "weave go test")
	env   []string
	weave bool
}

func runOverhead(root string, count int) error {
	tmp, err := os.MkdirTemp("", "weave-gobench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	weaveBin := filepath.Join(tmp, "weave")
	if out, err := exec.Command("go", "build", "-o", weaveBin, "./cmd/weave").CombinedOutput(); err != nil {
		return fmt.Errorf("building weave: %v\n%s", err, out)
	}
	mod := filepath.Join(tmp, "work")
	os.MkdirAll(mod, 0o755)
	os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/work\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(mod, "work_test.go"), []byte(workload), 0o644)
	bench := []string{"-run", "^$", "-bench", ".", "-benchtime", "20x", "-cpu", "1", "-count", strconv.Itoa(count)}
	configs := []config{
		{name: "plain", argv: bench},
		{name: "`weave go test` (default: --frames auto)", argv: bench, weave: true, env: []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}},
		{name: "`weave go test --frames all`", argv: append([]string{"--frames", "all"}, bench...), weave: true, env: []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}},
		{name: "`weave go test`, `WEAVE_INUSE=exact`", argv: bench, weave: true, env: []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0", "WEAVE_INUSE=exact"}},
		{name: "`weave go test --frames all`, `WEAVE_TIME=exact`", argv: append([]string{"--frames", "all"}, bench...), weave: true, env: []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0", "WEAVE_TIME=exact"}},
		{name: "`go test -cpuprofile`", argv: append([]string{"-cpuprofile", filepath.Join(tmp, "cpu.prof")}, bench...)},
		{name: "`go test -memprofile -memprofilerate=1`", argv: append([]string{"-memprofile", filepath.Join(tmp, "mem.prof"), "-memprofilerate", "1"}, bench...)},
	}
	results := map[string]map[string]float64{} // config -> benchmark -> median cpu-ns/op
	var order []string
	for _, c := range configs {
		argv := append([]string{"go", "test"}, c.argv...)
		if c.weave {
			argv = append([]string{weaveBin}, argv...)
		}
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), c.env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", c.name, err, out)
		}
		results[c.name] = parseBench(out)
		order = append(order, c.name)
	}
	fmt.Println("| configuration | Fib cpu-ns/op | x plain | Trees cpu-ns/op | x plain |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for _, name := range order {
		r, p := results[name], results["plain"]
		fmt.Printf("| %s | %.0f | %.1f | %.0f | %.1f |\n", name, r["Fib"], r["Fib"]/p["Fib"], r["Trees"], r["Trees"]/p["Trees"])
	}
	return nil
}

// parseBench returns the median cpu-ns/op of each benchmark in go test's output.
func parseBench(out []byte) map[string]float64 {
	all := map[string][]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		name := strings.TrimPrefix(strings.Split(f[0], "-")[0], "Benchmark")
		for i := 2; i+1 < len(f); i += 2 {
			if f[i+1] == "cpu-ns/op" {
				v, err := strconv.ParseFloat(f[i], 64)
				if err == nil {
					all[name] = append(all[name], v)
				}
			}
		}
	}
	median := map[string]float64{}
	for name, vs := range all {
		sort.Float64s(vs)
		median[name] = vs[len(vs)/2]
	}
	return median
}
