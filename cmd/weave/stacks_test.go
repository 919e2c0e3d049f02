package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// This file tests the program's resources that weave shares: its
// threads' stacks (small ones, deep recursion, the frames a woven
// function adds), its descriptor table, and its being a process of one
// thread.

// TestHardeningFDTable: under WEAVE_CONTROL's default the channel opens
// in the program's second thread, its descriptor numbered near the top of
// the limit; the runtime grows the descriptor table for it at start-up,
// while the program has one thread, so that the kernel's wait for an RCU
// grace period (10-26 ms measured) does not stall that thread when the
// table grows. The program reports whether its table grew while it had
// threads: as plain, it must not.
func TestHardeningFDTable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "fdtable", nil, nil)
	pr := mustRun(t, dir, nil, plain)
	wr := mustRun(t, dir, append(outEnv(dir), "WEAVE_CONTROL=auto"), woven)
	if pr.stdout != wr.stdout {
		t.Errorf("plain: %q, woven: %q", pr.stdout, wr.stdout)
	}
}

// TestFDTableBeforeThreads: the runtime grows the descriptor table
// (WEAVE_CONTROL's default) before it starts a thread of its own, the
// sampler of WEAVE_TIME's default: grown after, the kernel made the
// constructor wait for an RCU grace period, 6-20 ms of every run's wall
// time (the sqlite3 shell on "select 1;" took 26 ms, 8 ms with
// WEAVE_CONTROL=0). strace -f shows the order of the process's calls:
// the fcntl that moves a descriptor near the top of the limit must come
// before the first clone.
func TestFDTableBeforeThreads(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "strace")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "fdtable", nil, nil)
	log := filepath.Join(dir, "strace.txt")
	mustRun(t, dir, append(outEnv(dir), "WEAVE_CONTROL=auto", "WEAVE_TIME=sampled"),
		"strace", "-f", "-o", log, "-e", "trace=fcntl,clone,clone3", woven)
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	grow, clone := -1, -1
	for i, l := range strings.Split(string(b), "\n") {
		if grow < 0 && strings.Contains(l, "F_DUPFD_CLOEXEC") {
			grow = i
		}
		if clone < 0 && (strings.Contains(l, "clone(") || strings.Contains(l, "clone3(")) {
			clone = i
		}
	}
	if grow < 0 || clone < 0 || grow > clone {
		t.Errorf("want the descriptor moved high (line %d) before the first clone (line %d):\n%s", grow, clone, b)
	}
}

// TestHardeningSmallStacks: the runtime's work done in a thread of the
// program fits the stack that thread has, however small: a thread with a
// 16 KiB stack (where the control channel opens, under WEAVE_CONTROL's
// default), forking, calling exit; a handler on an 8 KiB sigaltstack
// calling exit or _exit; abort with such a stack in place (the runtime's
// crash handler runs on it). Before, every one of them died of SIGSEGV in
// the runtime (the exit writer's frames alone took over 20 KiB), with no
// profile.
func TestHardeningSmallStacks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "smallstack", nil, nil)
	for _, c := range []struct {
		how, end, complete string
		inUse              []int64 // bytes of woven allocations in use: the process's, then its child's
	}{
		{"thread", "exit", "1", []int64{30 + 41}},
		{"thread_fork", "exit", "1", []int64{30 + 41, 45}},
		{"thread_exit", "exit", "1", []int64{30 + 41}},
		{"alt_exit", "exit", "1", []int64{30}},
		{"alt__exit", "_exit", "1", []int64{30}},
		{"alt_abort", "signal 6", "0", []int64{30}},
	} {
		t.Run(c.how, func(t *testing.T) {
			d := filepath.Join(dir, c.how)
			os.Mkdir(d, 0o755)
			ws, pr := waitStatus(t, d, nil, plain, c.how)
			// WEAVE_CONTROL's default (the tests set 1): the channel
			// opens in the program's second thread.
			wws, wr := waitStatus(t, d, append(outEnv(d), "WEAVE_CONTROL=auto"), woven, c.how)
			if ws != wws || pr.stdout != wr.stdout {
				t.Errorf("plain: %s %q, woven: %s %q", ws, pr.stdout, wws, wr.stdout)
			}
			files := hprofiles(t, d)
			if len(files) != len(c.inUse) {
				t.Fatalf("profiles %v, want %d", files, len(c.inUse))
			}
			for _, f := range files {
				l := load(t, f)
				want := c.inUse[0]
				if l.meta("inherited") != "" {
					want = c.inUse[1]
				}
				if inUse := l.wovenInUse(); l.meta("end") != c.end || l.meta("complete") != c.complete || inUse != want {
					t.Errorf("%s: end %q complete %q, %d bytes of woven allocations in use; want %q %q, %d",
						filepath.Base(f), l.meta("end"), l.meta("complete"), inUse, c.end, c.complete, want)
				}
			}
		})
	}
}

// TestHardeningDeep: 1,000,000 nested calls, direct and mutual recursion:
// no crash, a tree folded to a few nodes, and memory: the runtime adds
// 16 bytes of pseudo-stack a level, not a node.
func TestHardeningDeep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "deep", nil, nil)
	rss := func(env []string, argv ...string) (int64, result) {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), env...), "WEAVE_SUMMARY=0")
		peak := testtool.WithPeakRSS(t, cmd)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%v: %v", argv, err)
		}
		return peak(), result{stdout: string(out)}
	}
	pk, pr := rss(nil, plain)
	wk, wr := rss(outEnv(dir), woven)
	if pr.stdout != wr.stdout || pr.stdout != "1000000 1000000\n" {
		t.Errorf("plain %q, woven %q", pr.stdout, wr.stdout)
	}
	t.Logf("peak RSS at depth 1,000,000 (twice): plain %d KiB, woven %d KiB", pk, wk)
	// The pseudo-stack: 16 MB; anything like a node per level (3M
	// levels, 48 bytes each) would add 150 MB more.
	if wk-pk > 48<<10 {
		t.Errorf("the woven run took %d KiB more than the plain one", wk-pk)
	}
	files := hprofiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("profiles %v", files)
	}
	l := load(t, files[0])
	if len(l.p.Nodes) > 30 {
		t.Errorf("%d nodes", len(l.p.Nodes))
	}
	ch := l.chains()
	for size, want := range map[uint64]string{
		31: "down<down<run",
		32: "ping<pong<ping<run", // ping(0): the second ping's node
	} {
		if c := ch[size]; len(c) != 1 || c[0] != want {
			t.Errorf("%d bytes at %q, want %q", size, c, want)
		}
	}
	// Calls: down from run once, from itself the rest.
	for _, n := range l.p.Nodes {
		if n.Kind == profile.KindFunc && n.Func.Name == "down" {
			want := uint64(1)
			if n.Parent.Kind == profile.KindFunc && n.Parent.Func.Name == "down" {
				want = 1000000
			}
			if n.Calls != want {
				t.Errorf("down under %s: %d calls, want %d", n.Parent.Func.Name, n.Calls, want)
			}
		}
	}
}

// TestHardeningStackUse: a framed function's frame grows by its guard (16
// bytes; at -O0 a slot or two more: 32 under gcc and clang) and no more,
// under gcc and clang, so a program that recursed deep enough plain
// still does woven: a list of 60,000 nodes built recursively at -O0
// (stackuse.c) in an 8 MiB stack, 3.8 MB of it plain. Before, at -O0 the
// guard's inlined C kept each of its locals in the frame (gcc: 64 -> 208
// bytes a level, clang: 48 -> 224): the woven build ran out of stack
// four times sooner (42,000 levels of such a list, plain 172,000).
func TestHardeningStackUse(t *testing.T) {
	t.Parallel()
	src, _ := filepath.Abs("../../testdata/hardening/stackuse.c")
	for _, cc := range []string{"gcc", "clang"} {
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run(cc+opt, func(t *testing.T) {
				t.Parallel()
				testtool.Need(t, cc)
				dir := t.TempDir()
				plain, woven := filepath.Join(dir, "plain"), filepath.Join(dir, "woven")
				mustRun(t, dir, nil, cc, opt, "-g", "-o", plain, src)
				mustRun(t, dir, []string{"WEAVE_CC=" + cc}, weaveBin, "cc", opt, "-g", "-o", woven, src)
				limited := func(bin string) result {
					return run(t, dir, outEnv(dir), "sh", "-c", "ulimit -s 8192 && exec "+bin+" 60000")
				}
				pr, wr := limited(plain), limited(woven)
				var pb, wb int
				fmt.Sscanf(pr.stdout, "%d bytes a level", &pb)
				fmt.Sscanf(wr.stdout, "%d bytes a level", &wb)
				more := 16
				if opt == "-O0" {
					more = 32
				}
				if pr.code != 0 || wr.code != 0 || pb == 0 || wb == 0 || wb > pb+more {
					t.Errorf("plain: %d bytes a level, exit %d; woven: %d, exit %d; want at most %d more",
						pb, pr.code, wb, wr.code, more)
				}
				if want := "sum 1800030000\n"; !strings.HasSuffix(pr.stdout, want) || !strings.HasSuffix(wr.stdout, want) {
					t.Errorf("plain %q, woven %q", pr.stdout, wr.stdout)
				}
			})
		}
	}
}

// TestTimingUnshare: a single-threaded program that makes a user
// namespace (unshare(CLONE_NEWUSER): util-linux's unshare -U, bubblewrap),
// in itself and in a fork child, and enters a mount and a time namespace
// (setns: nsenter -m -T) does so woven as unwoven
// (testdata/timing/unshare.c), and the sampler still samples after: the
// kernel refuses these calls (EINVAL; EUSERS for a time namespace) in a
// process of two threads, and the sampler was the second. Skipped where
// the plain build may not make a user namespace.
func TestTimingUnshare(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, _ := filepath.Abs("../../testdata/timing/unshare.c")
	plain := filepath.Join(dir, "unshare.plain")
	mustRun(t, dir, nil, "gcc", "-O2", "-o", plain, src)
	want := mustRun(t, dir, nil, plain)
	if !strings.Contains(want.stdout, "setns mnt: ok\n") || !strings.Contains(want.stdout, "unshare user: ok\n") {
		t.Skipf("the plain build cannot use namespaces here:\n%s", want.stdout)
	}
	exe := timingBuild(t, dir, "unshare")
	// WEAVE_CONTROL as by default: no control thread in a single-threaded
	// program (TestMain asks for one at start-up). A profile per process:
	// the child's and the parent's.
	out := filepath.Join(dir, "profiles") + "/"
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + out, "WEAVE_TIME=sampled", "WEAVE_CONTROL=auto"}, exe)
	if r.stdout != want.stdout {
		t.Fatalf("woven output\n%s\nunwoven\n%s", r.stdout, want.stdout)
	}
	profs, _ := filepath.Glob(out + "*.prof")
	if len(profs) != 2 {
		t.Fatalf("profiles %v: want the child's and the parent's", profs)
	}
	most, parent := -1, ""
	for _, prof := range profs {
		b, err := os.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`\nM time_sampler thread\n`).Match(b) {
			t.Errorf("%s: the sampler is not running at exit:\n%s", prof, grepLines(string(b), "M time_sampler"))
		}
		if m := regexp.MustCompile(`\nM time_samples (\d+)\n`).FindSubmatch(b); m != nil {
			if n, _ := strconv.Atoi(string(m[1])); n > most {
				most, parent = n, prof
			}
		}
	}
	// 200 ms of CPU in after(), charged by the samples taken there (a
	// busy machine's late samples charge some of it where the thread is
	// later, main or its exit): with no sampler after the unshare, and
	// so no tail charge either, it gets none.
	if most < 1 {
		t.Fatalf("no samples in a run of 200 ms of CPU after the unshare: the sampler was not started again")
	}
	if f := timingReportOf(t, parent).fn(t, "after"); f.TotalNS == 0 {
		t.Errorf("after: no time of its 200 ms of CPU")
	}
}

// TestTimingSetuid: a daemon started as root that drops to nobody
// (setgroups, setgid, setuid; testdata/timing/setuid.c) has no thread left
// with root's uids, groups or capabilities. The sampler, a raw clone the C
// library's round of its threads does not reach, kept them all: a
// privileged thread in an address space the unprivileged program
// controls. It now takes the program's credentials and goes on sampling:
// the 200 ms of CPU after the drop have their samples. With a thread of
// the program's own running, and with the control channel's and the
// checkpoint writer's threads. A vfork child's drop, made in the parent's
// memory, leaves the parent's sampler as it was.
func TestTimingSetuid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, _ := filepath.Abs("../../testdata/timing/setuid.c")
	plain := filepath.Join(dir, "setuid.plain")
	mustRun(t, dir, nil, "gcc", "-O2", "-pthread", "-o", plain, src)
	if r := mustRun(t, dir, nil, plain); r.stdout == "not root\n" {
		t.Skip("needs root")
	}
	exe := timingBuild(t, dir, "setuid")
	// Where nobody may write its profile.
	out, err := os.MkdirTemp("", "weave-setuid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	if err := os.Chmod(out, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, c := range [][]string{{""}, {"thread"}, {"thread", "WEAVE_CONTROL=1", "WEAVE_CHECKPOINT=1"}, {"vfork"}} {
		want := mustRun(t, dir, nil, plain, c[0])
		if !strings.HasSuffix(want.stdout, "every thread dropped its privileges\n") {
			t.Fatalf("plain %v: %+v", c, want)
		}
		prof := filepath.Join(out, fmt.Sprintf("run%d.prof", len(c)))
		r := mustRun(t, dir, append([]string{"WEAVE_OUT=" + prof, "WEAVE_TIME=sampled"}, c[1:]...), exe, c[0])
		if r.stdout != want.stdout || r.code != want.code {
			t.Errorf("woven %v (exit %d):\n%s%s", c, r.code, r.stdout, r.stderr)
			continue
		}
		// A checkpoint written as root is not replaced by nobody's final
		// profile, which goes beside it, and one line says where.
		if m := regexp.MustCompile(`the profile goes to (\S+)`).FindStringSubmatch(r.stderr); m != nil {
			prof = m[1]
		}
		b, err := os.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`\nM time_sampler thread\n`).Match(b) {
			t.Errorf("%v: the sampler is not running at exit:\n%s", c, grepLines(string(b), "M time_sampler"))
		}
		var ns uint64
		for _, f := range timingReportOf(t, prof).Time.Functions {
			if f.Name == "after" {
				ns = f.TotalNS
			}
		}
		if ns == 0 {
			t.Errorf("%v: after: no time of its 200 ms of CPU after the drop:\n%s", c, grepLines(string(b), "M time_"))
		}
	}
}
