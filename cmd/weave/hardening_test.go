package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/report"
)

// The hardening tests: the runtime inside programs that do hard things
// (threads, fork, exec, non-local jumps, the ways out, signals, deep
// recursion, library allocations). Each program in testdata/hardening is
// built plain and with weave cc, run both ways, and checked against the
// plain run (output, exit status) and, where it applies, against valgrind.

// hbuild compiles testdata/hardening/<name>.c plain and woven with gcc,
// with flags before the source and libs after it.
func hbuild(t *testing.T, dir, name string, flags, libs []string) (plain, woven string) {
	t.Helper()
	src, _ := filepath.Abs(filepath.Join("../../testdata/hardening", name+".c"))
	plain = filepath.Join(dir, name+".plain")
	woven = filepath.Join(dir, name+".woven")
	args := slices.Concat([]string{"-O1", "-g", "-Wall", "-Wextra", "-pthread"}, flags, []string{src})
	pr := mustRun(t, dir, nil, slices.Concat([]string{"gcc"}, args, []string{"-o", plain}, libs)...)
	wr := mustRun(t, dir, []string{"WEAVE_CC=gcc"}, slices.Concat([]string{weaveBin, "cc"}, args, []string{"-o", woven}, libs)...)
	if stripWarnings(wr.stderr, woven) != stripWarnings(pr.stderr, plain) {
		t.Errorf("woven build's diagnostics differ:\nplain:\n%s\nwoven:\n%s", pr.stderr, wr.stderr)
	}
	return plain, woven
}

// stripWarnings drops the lines of a build's diagnostics that name its
// output file out (a linker's warnings do, and the plain and woven builds
// have different ones), and the blank lines.
func stripWarnings(s, out string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" && !strings.Contains(l, filepath.Base(out)) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// hprofiles returns the profiles in dir (the runs write dir/p.<pid>.prof).
func hprofiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "p.*.prof"))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	return files
}

// outEnv is the environment of a woven run writing dir/p.<pid>.prof.
func outEnv(dir string) []string { return []string{"WEAVE_OUT=" + filepath.Join(dir, "p.%p.prof")} }

// loaded is a profile with its report (whole chains).
type loaded struct {
	p *profile.Profile
	r *report.Report
}

func load(t *testing.T, path string) loaded {
	t.Helper()
	p, err := profile.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.New(p, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return loaded{p, r}
}

func (l loaded) meta(key string) string {
	v, _ := l.p.MetaValue(key)
	return v
}

// totals are the report's heap totals, as the tests of main_test.go
// compare them.
func (l loaded) totals() totals {
	tt := l.r.Totals
	return totals{Allocs: int64(tt.Allocs), Frees: int64(tt.Frees), BytesAllocated: int64(tt.BytesAllocated),
		BytesInUse: int64(tt.BytesInUse), BlocksInUse: int64(tt.BlocksInUse)}
}

// wovenInUse is the bytes in use of the allocations made by woven calls
// (not hidden).
func (l loaded) wovenInUse() int64 {
	var h profile.Heap
	for _, n := range l.p.Nodes {
		if n.Kind == profile.KindAlloc && !n.Site.Hidden {
			h.Add(&n.Heap)
		}
	}
	return int64(h.TotalBytes() - h.TotalFreedBytes())
}

// chains maps the bytes allocated at each allocation leaf (the test
// programs give their sites distinct sizes) to its calling context,
// innermost first: "hold<after_long<guard_long<main".
func (l loaded) chains() map[uint64][]string {
	m := map[uint64][]string{}
	for _, n := range l.p.Nodes {
		if n.Kind != profile.KindAlloc || n.Heap.IsZero() {
			continue
		}
		var names []string
		for f := n.Parent; f != nil && f.Kind == profile.KindFunc; f = f.Parent {
			names = append(names, f.Func.Name)
		}
		chain := strings.Join(names, "<")
		if n.Site.Hidden {
			chain += " (hidden " + n.Site.Op + ")"
		}
		b := n.Heap.TotalBytes()
		m[b] = append(m[b], chain)
	}
	return m
}

// waitStatus runs argv and returns how it ended: "exit N" or "signal N".
func waitStatus(t *testing.T, dir string, env []string, argv ...string) (string, result) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, "WEAVE_SUMMARY=0")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("%v: %v", argv, err)
		}
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	st := fmt.Sprintf("exit %d", ws.ExitStatus())
	if ws.Signaled() {
		st = fmt.Sprintf("signal %d", int(ws.Signal()))
	}
	return st, result{out.String(), errb.String(), ws.ExitStatus()}
}

// TestHardeningThreads: POSIX and C11 threads, cross-thread frees,
// library allocations in threads, threads ending before the process:
// valgrind's totals at 8 x 20,000 blocks; at 8 x 1,000,000 the woven
// allocations exactly; and no ThreadSanitizer report with the runtime
// built with -fsanitize=thread.
func TestHardeningThreads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "threads", nil, nil)
	want := run(t, dir, nil, plain)
	got := run(t, dir, outEnv(dir), woven)
	sameRun(t, "threads", want, got)
	files := hprofiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("profiles %v", files)
	}
	l := load(t, files[0])
	checkValgrind(t, l.totals(), dir, woven)
	if len(l.p.Threads) != 9 || l.r.Totals.HiddenAllocs < 8*20000/8 {
		t.Errorf("%d threads, %d hidden allocations", len(l.p.Threads), l.r.Totals.HiddenAllocs)
	}

	// 8 x 1M: the blocks the woven code allocated (malloc, 7 in 8) and
	// frees (3 in 4), exactly; asprintf's (1 in 8, all kept) are hidden.
	const n = 1000000
	big := filepath.Join(dir, "big")
	os.Mkdir(big, 0o755)
	got = run(t, dir, outEnv(big), woven, fmt.Sprint(n))
	if got.code != 0 || got.stdout != fmt.Sprintf("%d blocks kept\n", 8*n/4) {
		t.Fatalf("exit %d: %s%s", got.code, got.stdout, got.stderr)
	}
	files = hprofiles(t, big)
	if len(files) != 1 {
		t.Fatalf("profiles %v", files)
	}
	l = load(t, files[0])
	var woven1, hidden1 profile.Heap
	for _, nd := range l.p.Nodes {
		if nd.Kind == profile.KindAlloc && nd.Site.Hidden {
			hidden1.Add(&nd.Heap)
		} else if nd.Kind == profile.KindAlloc {
			woven1.Add(&nd.Heap)
		}
	}
	if a, f := woven1.TotalAllocs(), woven1.TotalFrees(); a != 8*(n-n/8)+8 || f != 8*3*n/4 {
		t.Errorf("woven allocations %d, frees %d; want %d, %d", a, f, 8*(n-n/8)+8, 8*3*n/4)
	}
	// asprintf: a malloc and a realloc (a free and an allocation) each.
	if a, f := hidden1.TotalAllocs(), hidden1.TotalFrees(); a-f < 8*n/8 || a-f > 8*n/8+16 {
		t.Errorf("hidden allocations %d, frees %d: want %d kept, and the threads' own", a, f, 8*n/8)
	}
	if !hasSummary(got.stderr) {
		t.Errorf("no summary:\n%s", got.stderr)
	}

	// ThreadSanitizer: the runtime built with -fsanitize=thread (weave cc
	// passes it on); it then interposes nothing (the sanitizer owns the
	// allocator), so only woven allocations are counted. POSIX threads
	// only: TSan does not follow thrd_create's.
	{
		tdir := filepath.Join(dir, "tsan")
		os.Mkdir(tdir, 0o755)
		_, tw := hbuild(t, tdir, "threads", []string{"-fsanitize=thread", "-DPOSIX_ONLY"}, nil)
		got := run(t, tdir, outEnv(tdir), tw, "20000")
		if got.code != 0 || strings.Contains(got.stderr, "ThreadSanitizer") {
			t.Fatalf("under TSan: exit %d\n%s", got.code, got.stderr)
		}
		files := hprofiles(t, tdir)
		if len(files) != 1 {
			t.Fatalf("profiles %v", files)
		}
		tl := load(t, files[0])
		if a := tl.r.Totals.Allocs; a != 8*(20000-20000/8)+8 || tl.meta("hidden") != "0" {
			t.Errorf("under TSan: %d allocations, M hidden %s", a, tl.meta("hidden"))
		}
	}
}

// TestHardeningFork: fork without exec; children ending with _exit and
// with a return from main each write their own profile (their pid in the
// name), and nothing is counted twice.
func TestHardeningFork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "fork", nil, nil)
	sameRun(t, "fork", run(t, dir, nil, plain), run(t, dir, outEnv(dir), woven))
	files := hprofiles(t, dir)
	if len(files) != 3 {
		t.Fatalf("profiles %v, want 3", files)
	}
	byEnd := map[string]loaded{}
	var parentPid string
	for _, f := range files {
		l := load(t, f)
		pid := l.meta("pid")
		if filepath.Base(f) != "p."+pid+".prof" {
			t.Errorf("%s holds pid %s", f, pid)
		}
		if l.meta("inherited") == "" {
			parentPid = pid
		}
		byEnd[l.meta("end")] = l
	}
	parent, first, second := byEnd["exit"], byEnd["_exit"], loaded{}
	for _, f := range files {
		if l := load(t, f); l.meta("end") == "exit" && l.meta("pid") != parentPid {
			second = l
		} else if l.meta("end") == "exit" {
			parent = l
		}
	}
	if parent.p == nil || first.p == nil || second.p == nil {
		t.Fatalf("want profiles ending with exit (parent, second child) and _exit (first child)")
	}
	for what, c := range map[string]struct {
		l     loaded
		want  totals
		inher string
		freed string
	}{
		// The parent: 100 kept, 150 freed (and printf's stdout buffer).
		"parent": {parent, totals{Allocs: 3, Frees: 1, BytesAllocated: 250 + 4096, BytesInUse: 100 + 4096, BlocksInUse: 2}, "", ""},
		"first":  {first, totals{Allocs: 1, Frees: 0, BytesAllocated: 200, BytesInUse: 200, BlocksInUse: 1}, "2 250", "1 150"},
		"second": {second, totals{Allocs: 1, Frees: 0, BytesAllocated: 300, BytesInUse: 300, BlocksInUse: 1}, "2 250", "0 0"},
	} {
		if got := c.l.totals(); got != c.want {
			t.Errorf("%s: totals %+v, want %+v", what, got, c.want)
		}
		if c.l.meta("inherited") != c.inher || c.l.meta("inherited_freed") != c.freed {
			t.Errorf("%s: inherited %q, freed %q", what, c.l.meta("inherited"), c.l.meta("inherited_freed"))
		}
		if what != "parent" && (c.l.meta("ppid") != parentPid || len(c.l.p.Threads) != 1) {
			t.Errorf("%s: ppid %s (parent %s), %d threads", what, c.l.meta("ppid"), parentPid, len(c.l.p.Threads))
		}
	}
	checkValgrind(t, parent.totals(), dir, woven)
}

// TestHardeningCheckpointFork: a fork after a checkpoint leaves the
// child's profile beside the parent's. Before, the child inherited the
// path of its parent's checkpoint as its own earlier profile and replaced
// it, and the parent's final profile then replaced the child's: one
// profile was left, the child's lost.
func TestHardeningCheckpointFork(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "ckfork", nil, nil)
	out := filepath.Join(dir, "p.prof")
	r := run(t, dir, []string{"WEAVE_OUT=" + out, "WEAVE_CHECKPOINT=1"}, woven, out)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p*.prof"))
	got := map[int64]bool{}
	for _, f := range files {
		got[load(t, f).wovenInUse()] = true
	}
	// The parent: 77 + 99; the child: its 88 (the 77 it inherited are
	// not its own allocations).
	if want := map[int64]bool{77 + 99: true, 88: true}; !maps.Equal(got, want) {
		t.Errorf("profiles %v hold %v bytes of woven allocations in use, want %v", files, got, want)
	}
}

// TestHardeningDaemon: a program that becomes a daemon (daemon(3)) leaves
// the profile of what it did before (its parent's: 77 bytes kept, 50
// freed) as well as the daemon's (88). Before, the C library's daemon
// ended the parent by its own _exit, past the runtime's: no profile of
// the parent was written, and the daemon's starts from zero, so what the
// program did before it became a daemon was in no profile.
func TestHardeningDaemon(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "daemon", nil, nil)
	if r := run(t, dir, outEnv(dir), woven); r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var files []string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		// The daemon's is written last, when it ends, after the test's
		// run of its parent.
		if files = hprofiles(t, dir); len(files) >= 2 {
			break
		}
	}
	got := map[int64]totals{}
	for _, f := range files {
		l := load(t, f)
		got[l.wovenInUse()] = l.totals()
	}
	if len(files) != 2 || got[77].Allocs != 2 || got[77].Frees != 1 || got[88].Allocs != 1 {
		t.Errorf("profiles %v, by woven bytes in use %+v; want the parent's (77: 2 allocations, 1 free) and the daemon's (88)", files, got)
	}
}

// TestHardeningExec: a failed exec goes on; a successful one first writes
// the profile of what ran before it (M end exec), which the next image of
// the same pid does not replace.
func TestHardeningExec(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "exec", nil, nil)
	want, got := run(t, dir, nil, plain), run(t, dir, outEnv(dir), woven)
	sameRun(t, "exec", want, got)
	files := hprofiles(t, dir)
	if len(files) != 2 {
		t.Fatalf("profiles %v, want 2 (images 1 and 2)\n%s", files, got.stderr)
	}
	// p.<pid>.prof is image 1's; image 2, finding it, took p.<pid>.1.prof.
	if strings.HasSuffix(files[0], ".1.prof") {
		files[0], files[1] = files[1], files[0]
	}
	// Each summary says it was written before an exec, with the one pid.
	heads := regexp.MustCompile(`(?m)^==weave (\d+)== HEAP SUMMARY(.*)$`).FindAllStringSubmatch(got.stderr, -1)
	for _, h := range heads {
		if h[1] != heads[0][1] || h[2] != " (before exec):" {
			t.Errorf("summary heading %q (pid %s, first %s)", h[0], h[1], heads[0][1])
		}
	}
	if len(heads) < 2 {
		t.Errorf("%d summaries, want one per image at least:\n%s", len(heads), got.stderr)
	}
	img1, img2 := load(t, files[0]), load(t, files[1])
	if img1.meta("pid") != img2.meta("pid") || !strings.HasSuffix(files[1], ".1.prof") {
		t.Errorf("profiles %v: pids %s %s", files, img1.meta("pid"), img2.meta("pid"))
	}
	for _, c := range []struct {
		l    loaded
		want totals
	}{
		{img1, totals{Allocs: 3, Frees: 1, BytesAllocated: 111 + 50 + 122, BytesInUse: 233, BlocksInUse: 2}},
		{img2, totals{Allocs: 1, Frees: 0, BytesAllocated: 222, BytesInUse: 222, BlocksInUse: 1}},
	} {
		if c.l.totals() != c.want || c.l.meta("end") != "exec" || c.l.meta("complete") != "1" {
			t.Errorf("%s: totals %+v (want %+v), end %s", c.l.meta("argv"), c.l.totals(), c.want, c.l.meta("end"))
		}
	}
}

// TestHardeningJumps: after longjmp out of nested calls, siglongjmp out
// of a signal handler and __builtin_longjmp, allocations are charged to
// the right chains (after __builtin_longjmp, guard_builtin's and main's
// were charged under bthrower's frames: weave.go, builtinSetjmp).
func TestHardeningJumps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "jumps", nil, nil)
	sameRun(t, "jumps", run(t, dir, nil, plain), run(t, dir, outEnv(dir), woven))
	files := hprofiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("profiles %v", files)
	}
	l := load(t, files[0])
	checkValgrind(t, l.totals(), dir, woven)
	ch := l.chains()
	for size, want := range map[uint64]string{
		4 * 101: "hold<after_long<guard_long<main",
		4 * 102: "hold<guard_long<main",
		4 * 103: "hold<after_sig<guard_sig<main",
		4 * 104: "hold<guard_sig<main",
		4 * 106: "hold<guard_builtin<main",
		4 * 107: "hold<after_builtin<guard_builtin<main",
		105:     "hold<main",
	} {
		if c := ch[size]; len(c) != 1 || c[0] != want {
			t.Errorf("%d bytes at %q, want %q", size, c, want)
		}
	}
	// thrower's 7-byte blocks: 4 jumps from depths 0, 10, 20, 30; the
	// recursion folded below the first level.
	if c := ch[7*4]; len(c) != 1 || c[0] != "thrower<guard_long<main" {
		t.Errorf("thrower's first-level blocks at %q", c)
	}
	if c := ch[7*(10+20+30)]; len(c) != 1 || c[0] != "thrower<thrower<guard_long<main" {
		t.Errorf("thrower's deeper blocks at %q", c)
	}
}

// TestHardeningExits: each way out writes the profile once, complete
// (abort: marked incomplete), with what the atexit handlers did; the exit
// status is the plain program's; the totals are valgrind's.
func TestHardeningExits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "exits", nil, nil)
	for _, c := range []struct {
		how, end, complete string
		inUse              int64 // bytes
	}{
		{"return", "exit", "1", 30},
		{"exit", "exit", "1", 30},
		{"_exit", "_exit", "1", 30},
		{"_Exit", "_exit", "1", 30},
		{"quick_exit", "quick_exit", "1", 30 + 81},
		{"abort", "signal 6", "0", 30},
		{"atexit", "exit", "1", 10 + 77 + 79},
		{"thread", "exit", "1", 30 + 82},
	} {
		t.Run(c.how, func(t *testing.T) {
			d := filepath.Join(dir, c.how)
			os.Mkdir(d, 0o755)
			ws, _ := waitStatus(t, d, nil, plain, c.how)
			wws, _ := waitStatus(t, d, outEnv(d), woven, c.how)
			if ws != wws {
				t.Errorf("plain: %s, woven: %s", ws, wws)
			}
			files := hprofiles(t, d)
			if len(files) != 1 {
				t.Fatalf("profiles %v, want one", files)
			}
			l := load(t, files[0])
			if inUse := l.wovenInUse(); l.meta("end") != c.end || l.meta("complete") != c.complete || inUse != c.inUse {
				t.Errorf("end %q complete %q, %d bytes of woven allocations in use; want %q %q, %d",
					l.meta("end"), l.meta("complete"), inUse, c.end, c.complete, c.inUse)
			}
			if l.r.Complete != (c.complete == "1") {
				t.Errorf("report: complete %v", l.r.Complete)
			}
			checkValgrind(t, l.totals(), d, woven, c.how)
		})
	}
}

// TestHardeningChdir: a program that changes directory (a daemon's
// chdir("/"), a test in a directory of its own) leaves its profile and
// log where it started, whatever WEAVE_OUT and WEAVE_LOG name relative to
// it (a file, a directory; without WEAVE_OUT, in the directory weave cc
// linked it in: TestProfileInLinkDir), and its summary names a path that
// is there. Before, they went to the directory it ended in, which the
// summary's relative path did not name from where it was run.
func TestHardeningChdir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "chdir", nil, nil)
	// Paths longer than the runtime's small slots (init.c's path_keep,
	// 255 bytes): the start directory, WEAVE_OUT and WEAVE_LOG.
	long := strings.Repeat("l", 200) + "/" + strings.Repeat("m", 100)
	for _, c := range []struct {
		name string
		env  []string
		glob string // the profile, in the directory the program started in
		sub  string // the directory it starts in, under dir/name
	}{
		{"default", []string{"WEAVE_OUT"}, "weave-chdir.woven.*.prof", ""},
		{"file", []string{"WEAVE_OUT=rel.prof", "WEAVE_LOG=summary.txt"}, "rel.prof", ""},
		{"dir", []string{"WEAVE_OUT=profs/"}, "profs/weave-chdir.woven.*.prof", ""},
		{"long", []string{"WEAVE_OUT=rel.prof", "WEAVE_LOG=summary.txt"}, "rel.prof", long},
		{"longout", []string{"WEAVE_OUT=" + long + "/rel.prof", "WEAVE_LOG=" + long + "/../summary.txt"}, long + "/rel.prof", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			start, away := filepath.Join(dir, c.name, c.sub), filepath.Join(dir, c.name+"-away")
			os.MkdirAll(start, 0o755)
			os.MkdirAll(filepath.Join(start, long), 0o755)
			os.Mkdir(away, 0o755)
			cmd := exec.Command(woven, away)
			cmd.Dir = start
			for _, e := range os.Environ() {
				if !strings.HasPrefix(e, "WEAVE_OUT=") {
					cmd.Env = append(cmd.Env, e)
				}
			}
			cmd.Env = append(cmd.Env, "WEAVE_SUMMARY=1")
			cmd.Env = append(cmd.Env, c.env[1:]...)
			if c.env[0] != "WEAVE_OUT" {
				cmd.Env = append(cmd.Env, c.env[0])
			}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			in := start
			if c.name == "default" {
				in = dir // the default profile goes where weave cc linked the program
				defer func() {
					m, _ := filepath.Glob(filepath.Join(dir, c.glob))
					for _, f := range m {
						os.Remove(f)
					}
				}()
			}
			files, _ := filepath.Glob(filepath.Join(in, c.glob))
			if left, _ := os.ReadDir(away); len(files) != 1 || len(left) != 0 {
				t.Fatalf("profiles %v in %s, %v in the one it went to; want one, none", files, in, left)
			}
			summary := string(out)
			if b, err := os.ReadFile(filepath.Join(start, strings.TrimPrefix(c.env[len(c.env)-1], "WEAVE_LOG="))); err == nil {
				summary = string(b)
			} else if len(c.env) > 1 {
				t.Fatalf("no WEAVE_LOG file: %v", err)
			}
			m := regexp.MustCompile(`profile written to (\S+)`).FindStringSubmatch(summary)
			if m == nil {
				t.Fatalf("no profile path in the summary:\n%s", summary)
			}
			named := m[1]
			if !filepath.IsAbs(named) {
				named = filepath.Join(start, named)
			}
			if named != files[0] {
				t.Errorf("the summary names %s (from where it ran: %s), the profile is %s", m[1], named, files[0])
			}
		})
	}
}

// TestHardeningOverlap: two runs at once with one WEAVE_OUT file (a test
// suite's parallel jobs) each leave their profile: the first to end
// writes the file, the other its numbered name beside it. Before, the
// later writer took the file for an earlier run's (it had started before
// this one) and replaced it: the first run's profile was lost.
func TestHardeningOverlap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "overlap", nil, nil)
	out := filepath.Join(dir, "fixed.prof")
	type proc struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
	}
	start := func(bytes string) proc {
		cmd := exec.Command(woven, bytes)
		cmd.Env = append(os.Environ(), "WEAVE_OUT="+out, "WEAVE_SUMMARY=0")
		stdin, _ := cmd.StdinPipe()
		stdout, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "ready\n" {
			t.Fatalf("%q, %v", line, err)
		}
		return proc{cmd, stdin}
	}
	end := func(p proc) {
		p.stdin.Write([]byte{1})
		if err := p.cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	first := start("111")
	second := start("222")
	end(first)
	end(second)
	files, _ := filepath.Glob(filepath.Join(dir, "fixed*.prof"))
	got := map[int64]string{}
	for _, f := range files {
		got[load(t, f).wovenInUse()] = filepath.Base(f)
	}
	want := map[int64]string{111: "fixed.prof", 222: fmt.Sprintf("fixed.%d.prof", second.cmd.Process.Pid)}
	if !maps.Equal(got, want) {
		t.Errorf("profiles by bytes in use %v, want %v", got, want)
	}
}

// TestHardeningExitRace: two threads leaving at once (exit and exit,
// exit and _exit, main's return and exit) leave one complete profile, with
// both threads' blocks, and the plain build's status. Before, the second exit ended the process
// while the first thread wrote the profile: none was left.
func TestHardeningExitRace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "exits", nil, nil)
	for _, how := range []string{"race", "race_exit", "race_return"} {
		t.Run(how, func(t *testing.T) {
			for i := 0; i < 10; i++ {
				d := filepath.Join(dir, fmt.Sprintf("%s-%d", how, i))
				os.Mkdir(d, 0o755)
				ws, _ := waitStatus(t, d, nil, plain, how)
				wws, _ := waitStatus(t, d, outEnv(d), woven, how)
				if ws != wws {
					t.Errorf("run %d: plain: %s, woven: %s", i, ws, wws)
				}
				files := hprofiles(t, d)
				if len(files) != 1 {
					t.Fatalf("run %d: profiles %v, want one", i, files)
				}
				l := load(t, files[0])
				end := l.meta("end")
				if inUse := l.wovenInUse(); (end != "exit" && end != "_exit") || l.meta("complete") != "1" || inUse != 30+83+84 {
					t.Errorf("run %d: end %q complete %q, %d bytes of woven allocations in use; want exit or _exit, 1, %d",
						i, end, l.meta("complete"), inUse, 30+83+84)
				}
			}
		})
	}
	// A vfork child shares its parent's memory: its exit must not make
	// the parent's own exit wait for ever.
	t.Run("vfork", func(t *testing.T) {
		d := filepath.Join(dir, "vfork")
		os.Mkdir(d, 0o755)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, woven, "vfork")
		cmd.Dir, cmd.Env = d, append(os.Environ(), outEnv(d)...)
		err := cmd.Run()
		if ctx.Err() != nil {
			t.Fatal("the woven program hung at exit after its vfork child's exit")
		}
		if ws, _ := waitStatus(t, d, nil, plain, "vfork"); cmd.ProcessState.ExitCode() != 3 || ws != "exit 3" {
			t.Errorf("woven: %v, plain: %s; want exit 3", err, ws)
		}
	})
}

// TestHardeningSignals: a woven handler running mid-push and
// mid-allocation corrupts nothing; SIGSEGV and SIGBUS (a fault or sent)
// end the process as they would have, after an incomplete profile; the
// program's own handler keeps working.
func TestHardeningSignals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "signals", nil, nil)
	for _, c := range []struct {
		how, end, complete string
	}{
		{"handler", "exit", "1"},
		{"segv", "signal 11", "0"},
		{"bus", "signal 7", "0"},
		{"kill", "signal 11", "0"},
		{"handled", "_exit", "1"},
	} {
		t.Run(c.how, func(t *testing.T) {
			d := filepath.Join(dir, c.how)
			os.Mkdir(d, 0o755)
			ws, pr := waitStatus(t, d, nil, plain, c.how)
			wws, wr := waitStatus(t, d, outEnv(d), woven, c.how)
			if ws != wws || pr.stdout != wr.stdout {
				t.Errorf("plain: %s %q, woven: %s %q", ws, pr.stdout, wws, wr.stdout)
			}
			files := hprofiles(t, d)
			if len(files) != 1 {
				t.Fatalf("profiles %v, want one", files)
			}
			l := load(t, files[0])
			if l.meta("end") != c.end || l.meta("complete") != c.complete {
				t.Errorf("end %q complete %q, want %q %q", l.meta("end"), l.meta("complete"), c.end, c.complete)
			}
			tt := l.totals()
			ch := l.chains()
			if c.how != "handler" {
				if tt.BlocksInUse != 1 || tt.BytesInUse != 64 || len(ch[64]) != 1 || ch[64][0] != "main" {
					t.Errorf("totals %+v, chains %v", tt, ch)
				}
				return
			}
			// The handler's blocks are all freed; the marker block is in
			// its context; and what the pseudo-stack saw is a tree of the
			// program's real call chains.
			if len(ch[555]) != 1 || ch[555][0] != "marker<after<run_handler<main" || tt.BlocksInUse != 3 || tt.BytesInUse != 64+555+4096 {
				t.Errorf("totals %+v, 555-byte block at %v", tt, ch[555])
			}
			allowed := map[string]bool{"main": true, "run_handler": true, "middle": true, "leaf": true,
				"on_prof": true, "in_handler": true, "after": true, "marker": true}
			calls := map[string]bool{"run_handler<main": true, "middle<run_handler<main": true,
				"leaf<middle<run_handler<main": true, "after<run_handler<main": true, "marker<after<run_handler<main": true}
			for _, n := range l.p.Nodes {
				if n.Kind != profile.KindFunc {
					continue
				}
				var names []string
				for f := n; f != nil && f.Kind == profile.KindFunc; f = f.Parent {
					names = append(names, f.Func.Name)
				}
				chain := strings.Join(names, "<")
				if !allowed[names[0]] || (!calls[chain] && names[0] != "on_prof" && names[0] != "in_handler" && chain != "main") {
					t.Errorf("unexpected context %s", chain)
				}
				if names[0] == "in_handler" && names[1] != "on_prof" {
					t.Errorf("in_handler under %s", chain)
				}
			}
		})
	}
}

// TestHardeningHidden: allocations by code that was not woven (the C
// library, a third-party library) are counted and marked hidden, charged
// to the woven caller; blocks crossing between the two sides are counted
// once each way; the totals are valgrind's. WEAVE_HIDDEN=0 turns it off.
func TestHardeningHidden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lib := filepath.Join(dir, "libthird.so")
	src, _ := filepath.Abs("../../testdata/hardening/third.c")
	mustRun(t, dir, nil, "gcc", "-O1", "-g", "-shared", "-fPIC", src, "-o", lib)
	input := filepath.Join(dir, "input.txt")
	os.WriteFile(input, []byte("one\ntwo two\nthree three three\n"), 0o644)
	plain, woven := hbuild(t, dir, "hidden", nil, []string{"-L" + dir, "-lthird", "-Wl,-rpath," + dir})
	sameRun(t, "hidden", run(t, dir, nil, plain, input), run(t, dir, outEnv(dir), woven, input))
	files := hprofiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("profiles %v", files)
	}
	l := load(t, files[0])
	checkValgrind(t, l.totals(), dir, woven, input)
	if l.meta("hidden") != "1" || l.r.Totals.HiddenAllocs == 0 {
		t.Errorf("M hidden %s, %d hidden allocations", l.meta("hidden"), l.r.Totals.HiddenAllocs)
	}
	// Leaks: getline's buffers, charged to read_lines, hidden; the
	// library's strdup, charged to use_library; the block the library grew;
	// the library constructor's block, from before main.
	leaks := map[string]bool{}
	for _, lk := range l.r.Leaks {
		leaks[fmt.Sprintf("%s %v", lk.Chain[0].Name, lk.Hidden)] = true
	}
	for _, want := range []string{"read_lines true", "use_library true", "main true", "(unwoven) true"} {
		if !leaks[want] {
			t.Errorf("no leak %q in %v", want, leaks)
		}
	}
	direct := map[string]bool{}
	for _, d := range l.r.Direct.Functions {
		direct[fmt.Sprintf("%s %v", d.Func.Name, d.Hidden)] = true
	}
	for _, want := range []string{"read_lines true", "sort_numbers true", "sort_numbers false", "describe true", "use_library true", "use_library false"} {
		if !direct[want] {
			t.Errorf("no direct allocation row %q in %v", want, direct)
		}
	}
	text := mustRun(t, dir, nil, weaveBin, "report", files[0]).stdout
	if !strings.Contains(text, "read_lines (hidden)") || !strings.Contains(text, "of which hidden") {
		t.Errorf("text report lacks hidden allocations:\n%s", text)
	}

	// An allocator the user LD_PRELOADs still serves every call.
	pre := filepath.Join(dir, "libpre.so")
	psrc, _ := filepath.Abs("../../testdata/hardening/preload.c")
	mustRun(t, dir, nil, "gcc", "-O1", "-shared", "-fPIC", psrc, "-o", pre)
	pr := run(t, dir, []string{"LD_PRELOAD=" + pre, "WEAVE_OUT="}, woven, input)
	var calls int64
	if i := strings.Index(pr.stderr, "preload: "); i < 0 {
		t.Errorf("the LD_PRELOAD allocator did not report:\n%s", pr.stderr)
	} else if _, err := fmt.Sscanf(pr.stderr[i:], "preload: %d calls", &calls); err != nil || calls < l.totals().Allocs {
		t.Errorf("LD_PRELOAD allocator: %d calls (%v), want at least %d\n%s", calls, err, l.totals().Allocs, pr.stderr)
	}

	// Off: only the woven calls are counted.
	off := filepath.Join(dir, "off")
	os.Mkdir(off, 0o755)
	run(t, dir, append(outEnv(off), "WEAVE_HIDDEN=0"), woven, input)
	files = hprofiles(t, off)
	if len(files) != 1 {
		t.Fatalf("profiles %v", files)
	}
	lo := load(t, files[0])
	if lo.meta("hidden") != "0" || lo.r.Totals.HiddenAllocs != 0 || lo.r.Totals.Allocs == 0 {
		t.Errorf("WEAVE_HIDDEN=0: M hidden %s, totals %+v", lo.meta("hidden"), lo.r.Totals)
	}
}

// TestHardeningLibraryExit: a woven shared library needs no symbol of the
// exit family (libpq's build rule, `nm -A -u libpq.so | grep -v
// __cxa_atexit | grep exit`, must find nothing), and used by a program
// that is not woven (its runtime copy then the active one) it still
// writes the profile on quick_exit, after the program's handlers, and on
// exit; exit statuses are the plain library's, totals valgrind's.
func TestHardeningLibraryExit(t *testing.T) {
	t.Parallel()
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			src := func(name string) string {
				p, _ := filepath.Abs(filepath.Join("../../testdata/hardening", name))
				return p
			}
			plainDir, wovenDir := filepath.Join(dir, "plain"), filepath.Join(dir, "woven")
			os.Mkdir(plainDir, 0o755)
			os.Mkdir(wovenDir, 0o755)
			lib := "libdso.so"
			flags := []string{"-O1", "-g", "-shared", "-fPIC", src("dsolib.c"), "-o"}
			mustRun(t, dir, nil, slices.Concat([]string{cc}, flags, []string{filepath.Join(plainDir, lib)})...)
			mustRun(t, dir, []string{"WEAVE_CC=" + cc}, slices.Concat([]string{weaveBin, "cc"}, flags, []string{filepath.Join(wovenDir, lib)})...)
			nm := mustRun(t, dir, nil, "nm", "-A", "-u", filepath.Join(wovenDir, lib)).stdout
			for _, l := range strings.Split(nm, "\n") {
				if f := strings.Fields(l); len(f) > 0 && strings.Contains(f[len(f)-1], "exit") && !strings.Contains(l, "__cxa_atexit") {
					t.Errorf("the woven library needs %s", f[len(f)-1])
				}
			}
			exe := filepath.Join(dir, "main")
			mustRun(t, dir, nil, cc, "-O1", "-g", src("dsolib_main.c"), "-o", exe, "-L"+plainDir, "-ldso")
			for _, c := range []struct {
				how, end string
				inUse    int64
			}{
				{"quick_exit", "quick_exit", 10 + 81},
				{"exit", "exit", 10},
				{"return", "exit", 10},
			} {
				d := filepath.Join(dir, c.how)
				os.Mkdir(d, 0o755)
				ws, _ := waitStatus(t, d, []string{"LD_LIBRARY_PATH=" + plainDir}, exe, c.how)
				env := append(outEnv(d), "LD_LIBRARY_PATH="+wovenDir)
				wws, _ := waitStatus(t, d, env, exe, c.how)
				if ws != wws {
					t.Errorf("%s: plain library: %s, woven: %s", c.how, ws, wws)
				}
				files := hprofiles(t, d)
				if len(files) != 1 {
					t.Fatalf("%s: profiles %v, want one", c.how, files)
				}
				l := load(t, files[0])
				if inUse := l.wovenInUse(); l.meta("end") != c.end || l.meta("complete") != "1" || inUse != c.inUse {
					t.Errorf("%s: end %q complete %q, %d bytes of woven allocations in use; want %q 1, %d",
						c.how, l.meta("end"), l.meta("complete"), inUse, c.end, c.inUse)
				}
				testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
					if vt := valgrindTotals(t, d, []string{"LD_LIBRARY_PATH=" + wovenDir}, exe, c.how); vt != l.totals() {
						t.Errorf("%s: weave totals %+v, valgrind %+v", c.how, l.totals(), vt)
					}
				})
			}
		})
	}
}
