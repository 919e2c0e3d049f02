package main

import (
	"fmt"
	"testing"
	"time"
)

// TestHardeningCancel: threads cancelled (pthread_cancel) deep in nested
// calls run their cleanup handlers as the plain build does, and the
// handlers' blocks are charged to handler <- work, the function that
// pushed them, as memcheck charges them. Before, the runtime's own system
// calls in a thread of the program's (the control channel opened at the
// second thread, a heap peak's copy of /proc) were cancellation points:
// the pending cancel ended the thread inside a malloc, the program's
// mutex held (a handler missing in 9 runs of 10, a hang now and then);
// and the handlers' blocks were charged under the calls the
// cancellation ended (deep2 <- deep1), pthread_cleanup_push's
// __sigsetjmp_cancel not being re-synchronised as setjmp is.
func TestHardeningCancel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "cancel", nil, nil)
	want := run(t, dir, nil, plain)
	if want.stdout != "4 of 4 canceled, 12 blocks kept\n" {
		t.Fatalf("plain run: %+v", want)
	}
	for _, mode := range []string{"sampled", "exact"} {
		for i := range 10 {
			// The default WEAVE_CONTROL, not the tests' 1 (main_test.go):
			// the channel opens at the program's second thread, in it.
			env := append(outEnv(dir), "WEAVE_TIME="+mode, "WEAVE_CONTROL=auto")
			got := runWithin(t, 2*time.Minute, dir, env, woven)
			if !sameRun(t, fmt.Sprintf("%s run %d", mode, i), want, got) {
				t.FailNow()
			}
		}
	}
	files := hprofiles(t, dir)
	if len(files) != 20 {
		t.Fatalf("%d profiles, want 20", len(files))
	}
	var l loaded
	for _, f := range files {
		l = load(t, f)
		got := map[string]uint64{} // each thread's tree has its own nodes
		for size, chains := range l.chains() {
			for _, c := range chains {
				got[c] += size
			}
		}
		for chain, want := range map[string]uint64{
			"hold<handler<work":  101 + 102 + 101 + 102,
			"hold<deep1<work":    4 * 11,
			"deep2<deep1<work":   4 * 7,
			"hold<popped<normal": 103,
			"hold<normal":        13 + 104,
			"hold<main":          105,
		} {
			if got[chain] != want {
				t.Errorf("%s: %d bytes at %s, want %d (all: %v)", f, got[chain], chain, want, got)
			}
		}
	}
	checkValgrind(t, l.totals(), dir, woven)
}
