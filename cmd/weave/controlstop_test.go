package main

import (
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestControlStopped: weave snapshot of a process stopped by SIGSTOP says
// that it is stopped and how to continue it (it said its control thread
// waited for a lock a program thread held); once continued, it answers
// and exits as it would.
func TestControlStopped(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "blocked", nil, nil)
	w := startBlocked(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0", "WEAVE_CONTROL=1"}, woven, "read", "0", "1")
	pid := w.cmd.Process.Pid
	p := strconv.Itoa(pid)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, nil, weaveBin, "mark", "--timeout", "300ms", p, "x")
	want := "process " + p + " did not answer in time: it is stopped (SIGSTOP, or a debugger holds it); it answers once it runs again (kill -CONT " + p + ")"
	if r.code == 0 || !strings.Contains(r.stderr, want) {
		t.Errorf("weave mark of a stopped process: exit %d, stderr %q; want %q", r.code, r.stderr, want)
	}
	syscall.Kill(pid, syscall.SIGCONT)
	mustRun(t, dir, nil, weaveBin, "mark", p, "y")
	if got := w.finish(1); got.code != 0 {
		t.Errorf("after SIGSTOP and SIGCONT: exit %d\n%s", got.code, got.stderr)
	}
}
