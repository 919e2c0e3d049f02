package main

import (
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// wantStop is how the leak scan stops the other threads of the programs
// these tests run: by ptrace, unless this environment refuses it to them
// (a seccomp filter, under which the runtime makes no clone; Yama's
// ptrace_scope 3, or 2 without privilege): then by a signal.
func wantStop() string {
	b, _ := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	scope := strings.TrimSpace(string(b))
	if underSeccomp() || scope == "3" || scope == "2" && os.Geteuid() != 0 {
		return "signal"
	}
	return "ptrace"
}

// TestLeakStopQuiet: threads sleeping in poll and nanosleep while the
// process exits (testdata/leaks/sleepers.c, issue 29's reproducer) are
// stopped for the leak scan and resumed without any call of theirs ending
// early: the woven -O2 build's stdout, stderr and exit status are the
// plain build's, run after run, also with threads created and ending
// during the stop, main gone by pthread_exit, and a forked child (whose
// scan has nothing to stop: M leak_stop none). M leak_stop says ptrace.
func TestLeakStopQuiet(t *testing.T) {
	testtool.Need(t, "gcc")
	if wantStop() != "ptrace" {
		t.Skip("ptrace refused here: the scan stops threads with a signal (TestLeakBlocked checks that way)")
	}
	dir := t.TempDir()
	src := leaksSource(t, "sleepers.c")
	woven, plain := filepath.Join(dir, "woven"), filepath.Join(dir, "plain")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", woven, src, "-pthread")
	mustRun(t, dir, nil, "gcc", "-O2", "-g", "-o", plain, src, "-pthread")
	for _, mode := range []string{"plain", "churn", "pexit", "fork"} {
		want := run(t, dir, nil, plain, mode)
		if want.code != 0 || want.stdout != "bye\n" || want.stderr != "" {
			t.Fatalf("%s: the plain build: exit %d, %q, %q", mode, want.code, want.stdout, want.stderr)
		}
		for i := range 3 {
			wantStops := "ptrace"
			if mode == "fork" {
				wantStops = "none ptrace" // the child's, the parent's
			}
			if got := runLikePlain(t, dir, woven, mode, i, want); got != wantStops {
				t.Errorf("%s, run %d: M leak_stop of the profiles: %q, want %q", mode, i, got, wantStops)
			}
		}
	}
}

// TestLeakBlocked: threads blocked at exit in poll, nanosleep, read and
// pthread_cond_wait (testdata/leaks/blocked.c) keep memcheck's leak kinds
// when stopped by ptrace, none of their calls ending early, also when
// they block every signal; and when the process is not dumpable (ptrace
// refused), stopped by the signal that is the fallback, which M leak_stop
// then names, still with memcheck's kinds.
func TestLeakBlocked(t *testing.T) {
	args := []string{"all", "all-nodump"}
	if wantStop() == "ptrace" {
		args = append(args, "masked") // a signal would not stop them
	}
	leaksLikeMemcheck(t, "blocked.c", 64, func(t *testing.T, arg string, r result, p *profile.Profile) {
		want := wantStop()
		if arg == "all-nodump" {
			want = "signal"
		}
		if got, _ := p.MetaValue("leak_stop"); got != want {
			t.Errorf("%s: M leak_stop %q, want %q", arg, got, want)
		}
		if want == "ptrace" && strings.Contains(r.stderr, "Interrupted") {
			t.Errorf("%s: a blocked call ended early:\n%s", arg, r.stderr)
		}
		if r.stdout != "done\n" {
			t.Errorf("%s: stdout %q", arg, r.stdout)
		}
	}, args...)
}

// TestLeakRedZone: a thread blocked in a system call at exit, the only
// pointers to 8 blocks in a returned function's frame in the 128 bytes
// below its stack pointer (testdata/leaks/redzone.c): memcheck's kinds
// (definitely lost), stopped by ptrace or by the signal. The scan read a
// stopped thread's stack from 128 bytes below its stack pointer (the red
// zone, live in a leaf function's code), and called them still reachable;
// a clang build of blocked.c did so for one or two blocks in some runs.
func TestLeakRedZone(t *testing.T) {
	if goruntime.GOARCH != "amd64" {
		t.Skip("redzone.c reads the x86-64 stack pointer")
	}
	leaksLikeMemcheck(t, "redzone.c", 8, func(t *testing.T, arg string, r result, p *profile.Profile) {
		if r.stdout != "done\n" {
			t.Errorf("%s: stdout %q", arg, r.stdout)
		}
	}, "all", "all-nodump")
}

// TestLeakStopExitWhile: a thread calls exit(7) while main waits in
// pause() (testdata/leaks/exitwhile.c). Not dumpable, the scan stops main
// with its signal, which ends the pause(): main must not run on to return
// 0 from main and end the process before the profile is written (it did:
// exit 0, "main returns", no profile). Dumpable (ptrace here) as a check.
func TestLeakStopExitWhile(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := leaksSource(t, "exitwhile.c")
	woven, plain := filepath.Join(dir, "woven"), filepath.Join(dir, "plain")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", woven, src, "-pthread")
	mustRun(t, dir, nil, "gcc", "-O2", "-g", "-o", plain, src, "-pthread")
	for _, mode := range []string{"nodump", "dump"} {
		want := run(t, dir, nil, plain, mode)
		if want.code != 7 || want.stdout != "thread exits\n" {
			t.Fatalf("%s: the plain build: exit %d, %q, %q", mode, want.code, want.stdout, want.stderr)
		}
		wantStop := wantStop()
		if mode == "nodump" {
			wantStop = "signal"
		}
		for i := range 3 {
			// One profile, so one stop.
			if got := runLikePlain(t, dir, woven, mode, i, want); got != wantStop {
				t.Errorf("%s, run %d: M leak_stop of the profiles: %q, want %q", mode, i, got, wantStop)
			}
		}
	}
}

// TestLeakPthreadExit: main gone by pthread_exit, another thread exits
// (testdata/leaks/pexit.c): memcheck's kinds, the blocked threads' kept
// blocks still reachable. The scan read /proc/self/maps, empty for a
// zombie main: no stack nor global was read, all 69 blocks definitely
// lost; it reads /proc/thread-self's. So do the memory map at exit and
// the program's name and arguments (M argv was empty, no V exit record).
func TestLeakPthreadExit(t *testing.T) {
	leaksLikeMemcheck(t, "pexit.c", 4, func(t *testing.T, arg string, r result, p *profile.Profile) {
		if r.stdout != "done\n" {
			t.Errorf("stdout %q", r.stdout)
		}
		if argv, _ := p.MetaValue("argv"); !strings.HasSuffix(argv, "woven "+arg) {
			t.Errorf("M argv %q, want the woven program's command line", argv)
		}
		for _, sn := range p.Snapshots {
			if sn.Name == "exit" && sn.Maps == "" {
				t.Errorf("no memory map at exit (V exit) in the profile")
			}
		}
	}, "run")
}

// runLikePlain runs the woven program with arg mode (run i of it), its
// profiles in a directory of their own: its exit status, stdout and
// stderr must be want's, the plain build's. It returns the profiles' M
// leak_stop values, sorted, joined by spaces.
func runLikePlain(t *testing.T, dir, woven, mode string, i int, want result) string {
	t.Helper()
	out := filepath.Join(dir, fmt.Sprintf("%s-%d", mode, i)) + "/"
	r := runWithin(t, 30*time.Second, dir, []string{"WEAVE_OUT=" + out, "WEAVE_SUMMARY=0"}, woven, mode)
	if r != want {
		t.Errorf("%s, run %d: exit %d, stdout %q, stderr %q; plain: exit %d, %q, %q",
			mode, i, r.code, r.stdout, r.stderr, want.code, want.stdout, want.stderr)
	}
	files, _ := filepath.Glob(out + "*.prof")
	var stops []string
	for _, f := range files {
		p, err := profile.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := p.MetaValue("leak_stop")
		stops = append(stops, s)
	}
	slices.Sort(stops)
	return strings.Join(stops, " ")
}
