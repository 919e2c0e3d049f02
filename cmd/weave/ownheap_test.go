package main

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestOwnHeap: a program with its own malloc family in a unit of its own
// (testdata/ownheap, as bash 5.2's lib/malloc) wins over the runtime's
// weak definitions, so its frees can bypass the runtime. Woven, bash's
// subshells aborted in its free ("start and end chunk sizes differ", 1,550
// times in tests/ifs-posix.tests): a block recorded at one size and freed
// by bash's own entry (sh_xfree) kept its record, and when its chunk came
// back at a smaller size and woven code freed it, the runtime zeroed the
// record's size for the leak scan, over the allocator's trailer ("reused").
// And a woven free or realloc of a block the runtime never saw asked the
// C library's malloc_usable_size about it, which read the program's
// header as glibc's: SIGSEGV ("unseen"). Each case: the woven run is the
// plain one, the leak scan on (the default), the woven allocations
// recorded (else the case tests nothing).
func TestOwnHeap(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			t.Parallel()
			testtool.Need(t, cc)
			dir := t.TempDir()
			p := program{"ownheap", []string{"ownheap/main.c", "ownheap/heap.c"}, nil}
			plain, woven := build(t, dir, cc, p, "-O2")
			for _, c := range []struct {
				name   string
				allocs int64
			}{{"reused", 4}, {"unseen", 1}} {
				pr := run(t, dir, nil, plain, c.name)
				if pr.code != 0 {
					t.Fatalf("%s: the plain run failed: exit %d\n%s", c.name, pr.code, pr.stderr)
				}
				prof := filepath.Join(dir, c.name+".prof")
				wr := run(t, dir, []string{"WEAVE_OUT=" + prof}, woven, c.name)
				if !sameRun(t, c.name, pr, wr) {
					continue
				}
				wt := reportTotals(t, prof)
				if wt.Allocs < c.allocs {
					t.Errorf("%s: the woven allocations were not recorded (%+v): the case tests nothing", c.name, wt)
				}
				checkAllFreedOwnHeap(t, c.name, wr.stderr, wt, woven)
			}
		})
	}
}

// checkAllFreedOwnHeap: with every block it saw freed, the summary of a
// program whose free is its own said valgrind's "All heap blocks were
// freed -- no leaks are possible", which weave, seeing none of the
// allocator's own blocks nor the frees that bypass it, cannot know. It
// says how many allocations it saw, and whose free the process's is.
func checkAllFreedOwnHeap(t *testing.T, name, stderr string, wt totals, woven string) {
	t.Helper()
	if wt.BlocksInUse != 0 {
		t.Fatalf("%s: %d blocks in use: the case tests nothing", name, wt.BlocksInUse)
	}
	m := regexp.MustCompile(`(?m)^==weave \d+== the (\d+) allocations? weave saw (?:was|were all) freed, but the process's malloc and free are not weave's \(free is (.*)'s\)`).FindStringSubmatch(stderr)
	if strings.Contains(stderr, "no leaks are possible") || m == nil || m[1] != strconv.FormatInt(wt.Allocs, 10) || m[2] != woven {
		t.Errorf("%s: the summary does not say weave saw %d allocations and free is %s's:\n%s", name, wt.Allocs, woven, stderr)
	}
}
