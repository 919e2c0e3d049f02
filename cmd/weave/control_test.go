package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/tracepoints"
)

// blockedRun is a run of testdata/hardening/blocked.c started by
// startBlocked: its pid once it printed its first line, the rest of its
// stdout and its exit once done.
type blockedRun struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	first string
	rest  chan string
	err   strings.Builder
}

// startBlocked starts exe with args and waits for its first line of
// output (it prints it just before it blocks).
func startBlocked(t *testing.T, dir string, env []string, exe string, args ...string) *blockedRun {
	t.Helper()
	r := &blockedRun{cmd: exec.Command(exe, args...), rest: make(chan string, 1)}
	r.cmd.Dir = dir
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stderr = &r.err
	out, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(out)
	if r.first, err = br.ReadString('\n'); err != nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
		t.Fatalf("%s %v: no first line: %v\n%s", exe, args, err, r.err.String())
	}
	go func() {
		b, _ := io.ReadAll(br)
		r.rest <- string(b)
	}()
	return r
}

// finish feeds the run's stdin n bytes (read blocks until they come),
// waits for it and returns what it printed and its exit status.
func (r *blockedRun) finish(n int) result {
	if n > 0 {
		r.stdin.Write([]byte(strings.Repeat("x", n)))
	}
	r.stdin.Close()
	out := <-r.rest
	r.cmd.Wait()
	return result{stdout: r.first + out, stderr: r.err.String(), code: r.cmd.ProcessState.ExitCode()}
}

// running reports whether the run has not exited yet.
func (r *blockedRun) running() bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", r.cmd.Process.Pid))
	return err == nil && !strings.Contains(string(st), ") Z ")
}

// controlAll sends snapshot, mark and trace requests to pid and checks
// each is answered within timeout; returns the snapshot's path.
func controlAll(t *testing.T, dir string, pid int, timeout time.Duration) string {
	t.Helper()
	p := strconv.Itoa(pid)
	to := "--timeout=" + timeout.String()
	var snap string
	for _, argv := range [][]string{{"snapshot", to, p}, {"mark", to, p, "while blocked"}, {"trace", to, p, "main,alloc:*"}, {"trace", to, p, "--off"}} {
		start := time.Now()
		r := run(t, dir, nil, append([]string{weaveBin}, argv...)...)
		if r.code != 0 {
			t.Errorf("weave %s: exit %d: %s", strings.Join(argv, " "), r.code, r.stderr)
			continue
		}
		t.Logf("weave %s: answered in %v: %s", argv[0], time.Since(start).Round(time.Millisecond), strings.TrimSpace(r.stdout))
		if argv[0] == "snapshot" {
			snap = strings.TrimSpace(r.stdout[strings.LastIndex(r.stdout, " ")+1:])
		}
	}
	return snap
}

// TestControlBlocked: a program blocked in sleep, nanosleep, poll, select,
// epoll_wait, pthread_cond_timedwait or read, with one thread or three,
// answers weave snapshot, mark and trace while blocked (the control
// thread answers: no call of the program is cut short), and behaves as
// the unwoven build: same output (each thread's call returned 0 after the
// time it asked for, as the program itself checks), same exit status. With
// "own", the program has its own handler for every signal it can catch:
// none runs while it is controlled, each runs when raised.
func TestControlBlocked(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "blocked", nil, nil)
	type tc struct {
		call    string
		threads int
		own     bool
	}
	var cases []tc
	for _, call := range []string{"sleep", "nanosleep", "poll", "select", "epoll_wait", "condwait", "read"} {
		for _, n := range []int{1, 3} {
			cases = append(cases, tc{call, n, false})
		}
	}
	cases = append(cases, tc{"sleep", 1, true}, tc{"poll", 3, true})
	for _, c := range cases {
		name := fmt.Sprintf("%s/%d", c.call, c.threads)
		if c.own {
			name += "/own"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const ms = 2000
			args := []string{c.call, strconv.Itoa(ms), strconv.Itoa(c.threads)}
			if c.own {
				args = append(args, "own")
			}
			feed := 0
			if c.call == "read" {
				feed = c.threads
			}
			sub := filepath.Join(dir, strings.ReplaceAll(name, "/", "-"))
			if err := os.Mkdir(sub, 0o755); err != nil {
				t.Fatal(err)
			}
			var want result
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := startBlocked(t, sub, nil, plain, args...)
				time.Sleep(ms / 2 * time.Millisecond)
				want = p.finish(feed)
			}()
			prof := filepath.Join(sub, "w.prof")
			w := startBlocked(t, sub, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, woven, args...)
			time.Sleep(200 * time.Millisecond) // into the call
			start := time.Now()
			snap := controlAll(t, sub, w.cmd.Process.Pid, 5*time.Second)
			if !w.running() {
				t.Errorf("the program ended before the requests were answered (%v): they were not answered while it was blocked", time.Since(start))
			}
			if snap != prof {
				t.Errorf("snapshot written to %q, want %q", snap, prof)
			}
			got := w.finish(feed)
			wg.Wait()
			if want.code != 0 {
				t.Fatalf("the plain run failed: exit %d\n%s%s", want.code, want.stdout, want.stderr)
			}
			sameRun(t, name, want, got)
			p, err := profile.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			if end, pats := metaValue(p, "end"), metaValue(p, "trace_patterns"); end != "exit" || pats != "-" {
				t.Errorf("final profile: M end %q, M trace_patterns %q (want exit, - after trace --off)", end, pats)
			}
			if len(p.Marks) != 1 || p.Marks[0].Label != "while blocked" {
				t.Errorf("marks %+v, want the one weave mark set", p.Marks)
			}
			if _, err := os.Stat(tracepoints.Socket(controlDir(t), w.cmd.Process.Pid)); err == nil {
				t.Errorf("the control socket is left after exit")
			}
		})
	}
}

func controlDir(t *testing.T) string {
	t.Helper()
	d, err := tracepoints.ControlDir()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// openSockets is the number of sockets process pid has open.
func openSockets(pid int) int {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	n := 0
	for _, fd := range fds {
		if l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

var childRE = regexp.MustCompile(`child (\d+)\n`)

// TestControlFork: a fork child has a channel of its own (the parent's
// socket closed in it, one bound at its pid) that answers while it
// sleeps, without cutting its sleep short; the parent's answers too.
// Neither socket is left after they exit.
func TestControlFork(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "blocked", nil, nil)
	var want result
	done := make(chan bool)
	go func() {
		p := startBlocked(t, dir, nil, plain, "fork", "3000")
		want = p.finish(0)
		done <- true
	}()
	w := startBlocked(t, dir, []string{"WEAVE_OUT=" + filepath.Join(dir, "p.%p.prof"), "WEAVE_SUMMARY=0"}, woven, "fork", "3000")
	m := childRE.FindStringSubmatch(w.first)
	if m == nil {
		t.Fatalf("first line %q", w.first)
	}
	child, _ := strconv.Atoi(m[1])
	parent := w.cmd.Process.Pid
	time.Sleep(200 * time.Millisecond)
	snap := controlAll(t, dir, child, 5*time.Second)
	if want := filepath.Join(dir, "p."+m[1]+".prof"); snap != want {
		t.Errorf("the child's snapshot went to %q, want %q", snap, want)
	}
	mustRun(t, dir, nil, weaveBin, "snapshot", strconv.Itoa(parent))
	if sockets := openSockets(child); sockets != 1 {
		t.Errorf("the child has %d sockets open, want 1 (its own control socket, not the parent's)", sockets)
	}
	got := w.finish(0)
	<-done
	norm := func(r result) result {
		r.stdout = childRE.ReplaceAllString(r.stdout, "child PID\n")
		return r
	}
	sameRun(t, "fork", norm(want), norm(got))
	for _, pid := range []int{parent, child} {
		if _, err := os.Stat(tracepoints.Socket(controlDir(t), pid)); err == nil {
			t.Errorf("process %d's control socket is left after exit", pid)
		}
	}
}

// TestControlRefusals: a malformed request gets an error and one line on
// the program's stderr; a killed process's socket is swept by the next
// request; WEAVE_CONTROL=0 leaves no channel (no thread, no
// socket) and the command says why; WEAVE_CONTROL_SIGNAL says it is gone.
func TestControlRefusals(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "blocked", nil, nil)
	w := startBlocked(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}, woven, "read", "0", "1")
	pid := w.cmd.Process.Pid
	c, err := net.Dial("unixpacket", tracepoints.Socket(controlDir(t), pid))
	if err != nil {
		t.Fatal(err)
	}
	c.Write([]byte("launch the missiles"))
	b := make([]byte, 200)
	n, _ := c.Read(b)
	c.Close()
	if ans := string(b[:n]); ans != "error unknown request" {
		t.Errorf("malformed request answered %q", ans)
	}
	// A process killed by SIGKILL leaves its socket; the next request
	// (to any process) removes it.
	k := startBlocked(t, dir, []string{"WEAVE_OUT="}, woven, "read", "0", "1")
	kpid := k.cmd.Process.Pid
	k.cmd.Process.Kill()
	k.finish(0)
	if _, err := os.Stat(tracepoints.Socket(controlDir(t), kpid)); err != nil {
		t.Errorf("a killed process's socket: %v (want it left)", err)
	}
	if r := run(t, dir, nil, weaveBin, "snapshot", strconv.Itoa(pid)); r.code == 0 || !strings.Contains(r.stderr, "writes no profile") {
		t.Errorf("snapshot of a process that writes no profile: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(tracepoints.Socket(controlDir(t), kpid)); err == nil {
		t.Errorf("the killed process's socket is still there after a request")
	}
	got := w.finish(1)
	if n := strings.Count(got.stderr, "malformed request ignored"); n != 1 || got.code != 0 {
		t.Errorf("exit %d; want one line on the malformed request, got %d:\n%s", got.code, n, got.stderr)
	}

	w = startBlocked(t, dir, []string{"WEAVE_CONTROL=0", "WEAVE_SUMMARY=0"}, woven, "read", "0", "1")
	pid = w.cmd.Process.Pid
	tasks := tracepoints.Tasks(pid, "weave-sample") // sampled time's thread
	_, serr := os.Stat(tracepoints.Socket(controlDir(t), pid))
	r := run(t, dir, nil, weaveBin, "snapshot", strconv.Itoa(pid))
	got = w.finish(1)
	if len(tasks) != 1 || serr == nil {
		t.Errorf("WEAVE_CONTROL=0: %d threads, socket: %v; want 1 and none", len(tasks), serr)
	}
	if r.code == 0 || !strings.Contains(r.stderr, "WEAVE_CONTROL=0") {
		t.Errorf("snapshot with control off: exit %d %s", r.code, r.stderr)
	}

	w = startBlocked(t, dir, []string{"WEAVE_CONTROL_SIGNAL=40", "WEAVE_SUMMARY=0", "WEAVE_OUT="}, woven, "read", "0", "1")
	got = w.finish(1)
	if !strings.Contains(got.stderr, "WEAVE_CONTROL_SIGNAL is gone") || strings.Count(got.stderr, "\n") != 1 {
		t.Errorf("WEAVE_CONTROL_SIGNAL: want one line saying it is gone:\n%s", got.stderr)
	}
}

// TestControlExec: a failed exec leaves the process a working channel (its
// socket unlinked before the exec, bound again after); a successful one
// closes it (close-on-exec) and the new image, woven, opens its own at the
// same pid, which answers while it sleeps. No socket is left at exit.
func TestControlExec(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "blocked", nil, nil)
	p := startBlocked(t, dir, nil, plain, "exec", "2000")
	p.stdin.Write([]byte("x"))
	want := p.finish(0)
	prof := filepath.Join(dir, "w.prof")
	w := startBlocked(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, woven, "exec", "2000")
	if w.first != "failed exec: No such file or directory\n" {
		t.Fatalf("first line %q", w.first)
	}
	pid := w.cmd.Process.Pid
	time.Sleep(100 * time.Millisecond) // into the read
	if r := run(t, dir, nil, weaveBin, "snapshot", strconv.Itoa(pid)); r.code != 0 {
		t.Errorf("after a failed exec: weave snapshot: exit %d %s", r.code, r.stderr)
	}
	w.stdin.Write([]byte("x"))
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(b), "sleep") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	controlAll(t, dir, pid, 5*time.Second)
	if sockets := openSockets(pid); sockets != 1 {
		t.Errorf("the exec'd image has %d sockets open, want 1 (its own, none of the image before)", sockets)
	}
	got := w.finish(0)
	sameRun(t, "exec", want, got)
	if _, err := os.Stat(tracepoints.Socket(controlDir(t), pid)); err == nil {
		t.Errorf("the control socket is left after exit")
	}
}

// TestControlDescriptors: the program's descriptors are numbered as
// unwoven (the socket sits near the top of the limit); a program that
// closes every descriptor (a daemon's closefrom) and opens its own still
// answers (the thread binds a new socket, never accepting on a number the
// program reused); a socket left by an image that exec'd past the
// runtime's wrappers is replaced by the new image's.
func TestControlDescriptors(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "blocked", nil, nil)
	for _, mode := range []string{"closefrom", "rawexec"} {
		t.Run(mode, func(t *testing.T) {
			p := startBlocked(t, dir, nil, plain, mode, "2000")
			want := p.finish(0)
			w := startBlocked(t, dir, []string{"WEAVE_OUT=" + filepath.Join(dir, mode+".prof"), "WEAVE_SUMMARY=0"}, woven, mode, "2000")
			time.Sleep(300 * time.Millisecond) // into the sleep, the exec done
			controlAll(t, dir, w.cmd.Process.Pid, 5*time.Second)
			sameRun(t, mode, want, w.finish(0))
			if _, err := os.Stat(tracepoints.Socket(controlDir(t), w.cmd.Process.Pid)); err == nil {
				t.Errorf("the control socket is left after exit")
			}
		})
	}
}

// TestControlAuto: under WEAVE_CONTROL=auto, the default, a single-threaded
// program gets no thread of weave's (one would switch glibc to its
// multi-thread paths for the whole run) and weave snapshot says why and
// what to do; a program with threads of its own gets the channel once its
// second thread enters the runtime, and answers while blocked.
func TestControlAuto(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "blocked", nil, nil)
	env := []string{"WEAVE_CONTROL=auto", "WEAVE_SUMMARY=0"}

	want := startBlocked(t, dir, nil, plain, "read", "0", "1").finish(1)
	w := startBlocked(t, dir, env, woven, "read", "0", "1")
	pid := w.cmd.Process.Pid
	tasks := tracepoints.Tasks(pid, "weave-sample") // sampled time's thread
	_, serr := os.Stat(tracepoints.Socket(controlDir(t), pid))
	r := run(t, dir, nil, weaveBin, "snapshot", strconv.Itoa(pid))
	got := w.finish(1)
	if len(tasks) != 1 || serr == nil {
		t.Errorf("one thread, auto: %d threads, socket: %v; want 1 and none", len(tasks), serr)
	}
	if r.code == 0 || !strings.Contains(r.stderr, "runs one thread") || !strings.Contains(r.stderr, "WEAVE_CONTROL=1") {
		t.Errorf("snapshot of a single-threaded process under auto: exit %d %s", r.code, r.stderr)
	}
	if got.stdout != want.stdout || got.code != want.code {
		t.Errorf("one thread, auto: woven %q exit %d, plain %q exit %d", got.stdout, got.code, want.stdout, want.code)
	}

	want = startBlocked(t, dir, nil, plain, "sleep", "3000", "3").finish(0)
	w = startBlocked(t, dir, env, woven, "sleep", "3000", "3")
	pid = w.cmd.Process.Pid
	sock := tracepoints.Socket(controlDir(t), pid)
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(sock); err == nil {
			break
		}
	}
	controlAll(t, dir, pid, 2*time.Second)
	got = w.finish(0)
	if got.stdout != want.stdout || got.code != want.code {
		t.Errorf("three threads, auto: woven %q exit %d, plain %q exit %d", got.stdout, got.code, want.stdout, want.code)
	}
}
