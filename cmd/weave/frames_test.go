package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// allocProfile is what a profile says about memory: every table built from
// the allocation call chains, whole chains, by call site; without the call
// counts of the functions named in frameless, which are not counted, and
// without the leak kinds of the exit scan, which is conservative: a
// pointer left in a register or stack slot of the other build's code
// makes a block reachable.
func allocProfile(t *testing.T, prof string, frameless map[string]bool) string {
	t.Helper()
	r := mustRun(t, "", nil, weaveBin, "report", "--format", "json", "--depth", "0", "--sites",
		"--tables", "leaks,bins,direct,graph", prof)
	var rep map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "leak_kinds")
			delete(x, "kind")
			if name, ok := x["name"].(string); ok && frameless[name] {
				callers, _ := x["callers"].([]any) // the arcs into it
				for _, m := range append(callers, x) {
					if m, ok := m.(map[string]any); ok {
						delete(m, "calls")
						delete(m, "recursive_calls")
						delete(m, "total_calls")
					}
				}
			}
			for _, e := range x {
				strip(e)
			}
		case []any:
			for _, e := range x {
				strip(e)
			}
		}
	}
	// The leaks by chain, whatever their kind.
	byChain := map[string]map[string]float64{}
	leaks, _ := rep["leaks"].([]any)
	for _, l := range leaks {
		l, _ := l.(map[string]any)
		chain, _ := json.Marshal(l["chain"])
		sum := byChain[string(chain)]
		if sum == nil {
			sum = map[string]float64{}
			byChain[string(chain)] = sum
		}
		for _, k := range []string{"blocks_kept", "bytes_kept"} {
			v, _ := l[k].(float64)
			sum[k] += v
		}
	}
	rep["leaks"] = byChain
	var b strings.Builder
	for _, k := range []string{"totals", "leaks", "bins", "direct", "graph"} {
		strip(rep[k])
		j, _ := json.Marshal(rep[k])
		b.WriteString(k + " " + string(j) + "\n")
	}
	return b.String()
}

var framelessLine = regexp.MustCompile(`(?m)^weave: \S+:\d+: (\S+) frameless: `)

// TestFramesChains builds the test programs with --frames=auto and
// --frames=all: the allocation chains, totals and leaks must be the same,
// and the auto build must leave some functions frameless and say how many
// in the profile (the report's header).
func TestFramesChains(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	for _, p := range programs {
		p := p
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			profs := map[string]string{}
			for _, policy := range []string{"auto", "all"} {
				exe := filepath.Join(dir, p.name+"."+policy)
				args := []string{weaveBin, "cc", "--frames=" + policy, "-O2"}
				for _, s := range p.srcs {
					abs, _ := filepath.Abs(filepath.Join("../../testdata", s))
					args = append(args, abs)
				}
				mustRun(t, dir, []string{"WEAVE_CC=gcc"}, append(args, "-o", exe)...)
				profs[policy] = filepath.Join(dir, policy+".prof")
				run(t, dir, []string{"WEAVE_OUT=" + profs[policy]}, append([]string{exe}, p.args...)...)
			}
			frameless := map[string]bool{}
			for _, src := range p.srcs {
				abs, _ := filepath.Abs(filepath.Join("../../testdata", src))
				v := mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "-v", "-o", filepath.Join(dir, "w.c"), abs)
				for _, m := range framelessLine.FindAllStringSubmatch(v.stderr, -1) {
					frameless[m[1]] = true
				}
			}
			if auto, all := allocProfile(t, profs["auto"], frameless), allocProfile(t, profs["all"], frameless); auto != all {
				t.Errorf("--frames=auto changes the allocation profile:\nauto:\n%s\nall:\n%s", auto, all)
			}
			head := mustRun(t, "", nil, weaveBin, "report", profs["auto"]).stdout
			headAll := mustRun(t, "", nil, weaveBin, "report", profs["all"]).stdout
			if strings.Contains(headAll, "frameless") {
				t.Errorf("--frames=all report mentions frameless functions:\n%s", headAll)
			}
			first, _ := filepath.Abs(filepath.Join("../../testdata", p.srcs[0]))
			v := mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "-v", "-o", filepath.Join(dir, "w.c"), first)
			n := strings.Count(v.stderr, " frameless: ")
			if p.name == "widgets" && n != 2 { // random_flip, consume_widget
				t.Errorf("weave -v lists %d frameless functions in widgets.c, want 2:\n%s", n, v.stderr)
			}
			if n > 0 && len(p.srcs) == 1 && !strings.Contains(head, plural(n, "function")+" frameless") {
				t.Errorf("weave -v lists %d frameless functions, the report says:\n%s", n, head)
			}
		})
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
