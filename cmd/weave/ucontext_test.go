package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestUcontext: a generator on a makecontext/swapcontext coroutine
// (testdata/ucontext.c) behaves as the plain build, its heap totals are
// valgrind's, and each side's allocations are charged under its own chain,
// in every time mode. The pseudo-stack is the thread's: before, the
// consumer resumed with the generator's frames on it, and its blocks were
// charged to item <- consume <- yield <- produce <- generator <- drive
// <- main; swapcontext's calls now keep the suspended context's top of
// the pseudo-stack (weave.h, __weave_ctx_save). In exact mode the
// generator's items made 21 timed frames deep were followed by tallies
// charged to tick, the consumer's frame, which had been pushed over the
// slots below the 16 the save kept: the save now keeps the others too.
func TestUcontext(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run(cc+opt, func(t *testing.T) {
				testtool.Need(t, cc)
				dir := t.TempDir()
				plain, woven := build(t, dir, cc, program{name: "ucontext", srcs: []string{"ucontext.c"}}, opt, "-g")
				pr := run(t, dir, nil, plain)
				for _, mode := range []string{"sampled", "exact"} {
					prof := filepath.Join(dir, mode+".prof")
					wr := run(t, dir, []string{"WEAVE_TIME=" + mode, "WEAVE_OUT=" + prof}, woven)
					if !sameRun(t, mode, pr, wr) {
						continue
					}
					ucontextChains(t, mode, prof)
					if mode == "sampled" {
						checkValgrind(t, reportTotals(t, prof), dir, plain)
					}
				}
			})
		}
	}
}

// ucontextChains checks the chains of the leak table of profile prof:
// the consumer's blocks under it, the generator's under the generator,
// none under the other side's frames (the items produced under descend
// have chains longer than the table's five).
func ucontextChains(t *testing.T, mode, prof string) {
	t.Helper()
	r := mustRun(t, "", nil, weaveBin, "report", prof)
	rows := regexp.MustCompile(`(?m)^ *[\d,]+ +[\d.]+ +\d+ +(definite|reachable|possible|indirect) .*?  ((\w+ <- )*\w+)$`).FindAllStringSubmatch(r.stdout, -1)
	want := map[string]bool{"item <- consume <- drive <- main": false, "item <- produce <- generator <- drive <- main": false,
		"item <- tally <- generator <- drive <- main": false}
	for _, row := range rows {
		if _, ok := want[row[2]]; ok {
			want[row[2]] = true
		} else if strings.HasPrefix(row[2], "item") && !strings.HasPrefix(row[2], "item <- produce <- descend <- descend <- ") {
			t.Errorf("%s: a block charged to %s", mode, row[2])
		}
	}
	for chain, seen := range want {
		if !seen {
			t.Errorf("%s: no blocks at %s:\n%s", mode, chain, r.stdout)
		}
	}
}
