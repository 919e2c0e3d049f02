package tracepoints

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CheckPatterns checks a tracepoint pattern list as the runtime does:
// comma-separated NAME globs, file:GLOB, dir:DIR, alloc:FILE[:LINE].
func CheckPatterns(list string) error {
	if list == "" {
		return errors.New("no pattern")
	}
	for _, p := range strings.Split(list, ",") {
		if p == "" {
			return fmt.Errorf("%q: empty pattern", list)
		}
		kind, rest, ok := strings.Cut(p, ":")
		if !ok {
			continue
		}
		switch kind {
		case "file", "dir", "alloc":
		default:
			return fmt.Errorf("%q: unknown pattern kind %q (want NAME, file:GLOB, dir:DIR, alloc:FILE[:LINE])", p, kind)
		}
		if rest == "" {
			return fmt.Errorf("%q: empty pattern after %s:", p, kind)
		}
	}
	if len(list) >= 4096 {
		return errors.New("pattern list too long")
	}
	return nil
}

// ControlDir is the directory of the control sockets of the current
// user's woven processes: /tmp/.weave-UID, mode 0700. Returns an error if it is
// not a directory of this user's that no one else can write.
func ControlDir() (string, error) {
	dir := filepath.Join("/tmp", ".weave-"+strconv.Itoa(os.Geteuid()))
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return "", fmt.Errorf("%s is not a directory of this user's: refusing to use it", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// Target checks that pid is a running woven process of this user.
func Target(pid int) error {
	fi, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	if err != nil {
		return fmt.Errorf("no process %d", pid)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("process %d belongs to uid %d: only its own user may control it", pid, st.Uid)
	}
	if !woven(pid) {
		return fmt.Errorf("process %d is not a woven program (no weave runtime in it)", pid)
	}
	return nil
}

// woven reports whether the executable or a shared object of pid holds
// the weave runtime.
func woven(pid int) bool {
	files := []string{fmt.Sprintf("/proc/%d/exe", pid)}
	if maps, err := os.ReadFile(fmt.Sprintf("/proc/%d/maps", pid)); err == nil {
		seen := map[string]bool{}
		for _, l := range strings.Split(string(maps), "\n") {
			if f := strings.Fields(l); len(f) >= 6 && strings.HasPrefix(f[5], "/") && strings.Contains(f[5], ".so") && !seen[f[5]] {
				seen[f[5]] = true
				files = append(files, f[5])
			}
		}
	}
	for _, name := range files {
		f, err := elf.Open(name)
		if err != nil {
			continue
		}
		syms, _ := f.DynamicSymbols()
		f.Close()
		for _, s := range syms {
			if s.Name == "__weave_enter_slow" && s.Section != elf.SHN_UNDEF {
				return true
			}
		}
	}
	return false
}

// Socket is the path of pid's control socket in dir (ControlDir).
func Socket(dir string, pid int) string {
	return filepath.Join(dir, strconv.Itoa(pid)+".sock")
}

// noChannel says why pid has no control socket at path to connect to.
func noChannel(pid int, path string) error {
	env, _ := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	mode := "auto"
	for _, kv := range bytes.Split(env, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("WEAVE_CONTROL=")); ok {
			mode = string(v)
		}
	}
	if mode == "0" {
		return fmt.Errorf("process %d has run-time control off (WEAVE_CONTROL=0)", pid)
	}
	if hasCtlThread(pid) {
		return fmt.Errorf("process %d has a control thread but no socket at %s (removed by hand?)", pid, path)
	}
	if mode == "auto" || mode == "" {
		if n := threads(pid); n == 1 {
			return fmt.Errorf("process %d runs one thread, and under WEAVE_CONTROL=auto (the default) a single-threaded program gets no control thread: "+
				"one would switch glibc to its multi-thread paths for the whole run; start it with WEAVE_CONTROL=1 to reach it while it runs", pid)
		} else if n > 1 {
			return fmt.Errorf("process %d has no control channel yet: under WEAVE_CONTROL=auto (the default) it opens when a second thread of the program first enters weave's runtime (allocates or calls woven code), which none of its %d other threads has done; WEAVE_CONTROL=1 opens it at start-up", pid, n-1)
		}
	}
	return fmt.Errorf("process %d has no control channel (no socket at %s, no weave-ctl thread): a secure (setuid) process, one whose runtime predates the control thread, or one that could not use %s", pid, path, filepath.Dir(path))
}

// threads returns pid's number of threads but the sampler (weave-sample,
// sampled time's), or 0 if unknown.
func threads(pid int) int {
	return len(Tasks(pid, "weave-sample"))
}

// hasCtlThread reports whether pid has a thread named weave-ctl.
func hasCtlThread(pid int) bool {
	return len(Tasks(pid)) > len(Tasks(pid, "weave-ctl"))
}

// Tasks returns the names of pid's threads (/proc/PID/task/*/comm) but
// those named in except.
func Tasks(pid int, except ...string) []string {
	comms, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/comm", pid))
	var names []string
	for _, c := range comms {
		if b, err := os.ReadFile(c); err == nil && !slices.Contains(except, strings.TrimSpace(string(b))) {
			names = append(names, strings.TrimSpace(string(b)))
		}
	}
	return names
}

// Request sends req ("trace PATTERNS", "off", "snapshot" or "mark LABEL")
// to the woven process pid over its control socket and returns its answer
// (after "ok "), waiting at most timeout. The process's control thread
// answers at once, whatever its other threads are doing (blocked in
// sleep, read or epoll_wait included), unless one of them holds the
// runtime's lock all that time. A socket that refuses or drops the
// request unread while the process has its control thread is tried again
// until the timeout: the thread binds a new one when it finds that the
// program closed its descriptor (a daemon's closefrom), which the first
// try makes it see.
func Request(pid int, req string, timeout time.Duration) (string, error) {
	if err := Target(pid); err != nil {
		return "", err
	}
	dir, err := ControlDir()
	if err != nil {
		return "", err
	}
	sweep(dir)
	deadline := time.Now().Add(timeout)
	for {
		ans, again, err := request(pid, Socket(dir, pid), req, deadline)
		if !again {
			return ans, err
		}
		if !hasCtlThread(pid) {
			return "", noChannel(pid, Socket(dir, pid))
		}
		if time.Now().Add(50 * time.Millisecond).After(deadline) {
			return "", fmt.Errorf("process %d did not take the request within %v: %v", pid, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// sweep removes the sockets in dir of processes that are gone: killed
// (SIGKILL, a signal's default action) before the runtime could remove
// its own.
func sweep(dir string) {
	socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	for _, s := range socks {
		pid, err := strconv.Atoi(strings.TrimSuffix(filepath.Base(s), ".sock"))
		if err != nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); errors.Is(err, os.ErrNotExist) {
			os.Remove(s)
		}
	}
}

// request is one try of Request; again: the request was not read (no
// socket, refused, or dropped unanswered) and may be tried again.
func request(pid int, path, req string, deadline time.Time) (ans string, again bool, err error) {
	conn, err := dial(path)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EAGAIN) {
			return "", true, err
		}
		return "", false, fmt.Errorf("connecting to process %d: %v", pid, err)
	}
	defer conn.Close()
	if err := checkPeer(conn, pid); err != nil {
		return "", false, err
	}
	conn.SetDeadline(deadline)
	if _, err := conn.Write([]byte(req)); err != nil {
		return "", errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE), err
	}
	buf := make([]byte, 8192)
	n, err := conn.Read(buf)
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded) && stopped(pid):
		return "", false, fmt.Errorf("process %d did not answer in time: it is stopped (SIGSTOP, or a debugger holds it); it answers once it runs again (kill -CONT %d)", pid, pid)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "", false, fmt.Errorf("process %d did not answer in time: its control thread waits for the runtime's lock, which a thread of the program holds (stopped, or stuck inside the runtime)", pid)
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || err == nil && n == 0:
		return "", true, fmt.Errorf("dropped unanswered")
	case err != nil:
		return "", false, fmt.Errorf("process %d: no answer: %v", pid, err)
	}
	a := strings.TrimSpace(string(buf[:n]))
	if rest, ok := strings.CutPrefix(a, "ok "); ok {
		return rest, false, nil
	}
	return "", false, fmt.Errorf("process %d: %s", pid, strings.TrimPrefix(a, "error "))
}

// stopped reports whether process pid is stopped by a signal or a tracer
// (state T or t in /proc/PID/stat), so none of its threads runs.
func stopped(pid int) bool {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndex(st, []byte(") ")) // after the command name, which may hold ") "
	return i >= 0 && i+2 < len(st) && (st[i+2] == 'T' || st[i+2] == 't')
}

// dial connects to the control socket at path, a SOCK_SEQPACKET one, and
// returns it as a file whose deadlines work (non-blocking, in Go's
// poller). Not through package net: weave then needs no cgo and is built
// as a static binary, without the dynamic loader, libc's start and
// pthread threads in every weave cc (about 1 ms of CPU each).
func dial(path string) (*os.File, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_SEQPACKET|syscall.SOCK_CLOEXEC|syscall.SOCK_NONBLOCK, 0)
	if err != nil {
		return nil, os.NewSyscallError("socket", err)
	}
	// A unix socket connects at once or fails: EAGAIN when the
	// listener's queue is full (tried again, as a refusal is).
	for err = syscall.EINTR; err == syscall.EINTR; {
		err = syscall.Connect(fd, &syscall.SockaddrUnix{Name: path})
	}
	if err != nil {
		syscall.Close(fd)
		return nil, os.NewSyscallError("connect", err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// checkPeer checks that the socket's listener is process pid of this user
// (a socket of another pid namespace's process would not be).
func checkPeer(c *os.File, pid int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var gerr error
	if err := raw.Control(func(fd uintptr) {
		cred, gerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if gerr != nil {
		return fmt.Errorf("the control socket of process %d: %v", pid, gerr)
	}
	if int(cred.Pid) != pid || int(cred.Uid) != os.Geteuid() {
		return fmt.Errorf("the control socket of process %d is held by process %d of uid %d: refusing it", pid, cred.Pid, cred.Uid)
	}
	return nil
}
