package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// recC recurses argv[1] levels in rec, allocating at the bottom.
const recC = `#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) static long rec(long n)
{
	long r = n ? rec(n - 1) + 1 : (sink = (long)malloc(8), 0);
	sink += r;
	return r;
}
int main(int argc, char **argv) { free((void *)sink); return rec(atol(argv[1])) > 0 ? 0 : 1; }
`

// TestTraceDeepRecursion: a traced recursion deeper than the timed frames'
// first 4,096 slots is traced at every level, in sampled mode (where a
// traced frame takes a slot: tp_enter grows the stack as exact mode's push
// does; before, the levels past 4,095 had no events) and in exact mode.
func TestTraceDeepRecursion(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	const levels = 10000
	dir := t.TempDir()
	src, exe := filepath.Join(dir, "rec.c"), filepath.Join(dir, "rec")
	if err := os.WriteFile(src, []byte(recC), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, []string{"WEAVE_CC=gcc", "WEAVE_FRAMES=all"}, weaveBin, "cc", "-O1", "-g", src, "-o", exe)
	for _, mode := range []string{"sampled", "exact"} {
		prof := filepath.Join(dir, mode+".prof")
		mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TIME=" + mode, "WEAVE_TRACE=rec"}, exe, "10000")
		p, c := readTrace(t, prof)
		if n := calls(p, "rec"); n != levels+1 || c.enters["rec"] != n || c.exits["rec"] != n {
			t.Errorf("%s: rec called %d times (want %d), %d enter and %d exit events", mode, n, levels+1, c.enters["rec"], c.exits["rec"])
		}
	}
}
