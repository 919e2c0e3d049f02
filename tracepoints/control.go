package tracepoints

import (
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultSignal is the runtime's control signal, SIGRTMIN+6 (glibc's
// SIGRTMIN is 34), unless WEAVE_CONTROL_SIGNAL says otherwise.
const DefaultSignal = 34 + 6

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

// ControlDir is the directory of the requests to the processes of the
// current user: /tmp/.weave-UID, mode 0700. Returns an error if it is
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

// Target checks that pid is a running woven process of this user with the
// control handler installed, and returns its control signal.
func Target(pid int) (int, error) {
	proc := fmt.Sprintf("/proc/%d", pid)
	fi, err := os.Stat(proc)
	if err != nil {
		return 0, fmt.Errorf("no process %d", pid)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return 0, fmt.Errorf("process %d belongs to uid %d: only its own user may control it", pid, st.Uid)
	}
	if !woven(pid) {
		return 0, fmt.Errorf("process %d is not a woven program (no weave runtime in it)", pid)
	}
	sig := DefaultSignal
	if env, err := os.ReadFile(proc + "/environ"); err == nil {
		for _, kv := range bytes.Split(env, []byte{0}) {
			if v, ok := bytes.CutPrefix(kv, []byte("WEAVE_CONTROL_SIGNAL=")); ok {
				if sig, err = strconv.Atoi(string(v)); err != nil || sig <= 0 {
					return 0, fmt.Errorf("process %d has run-time control off (WEAVE_CONTROL_SIGNAL=%s)", pid, v)
				}
			}
		}
	}
	if !catches(pid, sig) {
		return 0, fmt.Errorf("process %d does not listen on signal %d: a secure (setuid) process, or the program handles that signal itself", pid, sig)
	}
	return sig, nil
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

// catches reports whether pid has a handler for sig (/proc/PID/status
// SigCgt).
func catches(pid, sig int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "SigCgt:"); ok {
			mask, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && mask&(1<<(sig-1)) != 0
		}
	}
	return false
}

// Request sends req ("trace PATTERNS", "off" or "snapshot") to the woven
// process pid and returns its answer (after "ok "), waiting at most
// timeout. The process answers at its next safe point: an allocation, a
// free, or a call on a path it had not taken before.
func Request(pid int, req string, timeout time.Duration) (string, error) {
	sig, err := Target(pid)
	if err != nil {
		return "", err
	}
	dir, err := ControlDir()
	if err != nil {
		return "", err
	}
	reqPath := filepath.Join(dir, fmt.Sprintf("req.%d", pid))
	ackPath := filepath.Join(dir, fmt.Sprintf("ack.%d", pid))
	os.Remove(ackPath)
	f, err := os.CreateTemp(dir, ".req-*")
	if err != nil {
		return "", err
	}
	_, werr := f.WriteString(req + "\n")
	cerr := f.Close()
	if werr != nil || cerr != nil || os.Rename(f.Name(), reqPath) != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing the request: %v", errors.Join(werr, cerr))
	}
	if err := syscall.Kill(pid, syscall.Signal(sig)); err != nil {
		os.Remove(reqPath)
		return "", fmt.Errorf("signalling process %d: %v", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(ackPath); err == nil {
			os.Remove(ackPath)
			ans := strings.TrimSpace(string(b))
			if rest, ok := strings.CutPrefix(ans, "ok "); ok {
				return rest, nil
			}
			return "", fmt.Errorf("process %d: %s", pid, strings.TrimPrefix(ans, "error "))
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			os.Remove(reqPath)
			return "", fmt.Errorf("process %d is gone", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	os.Remove(reqPath)
	return "", fmt.Errorf("process %d did not answer within %v: it answers at its next allocation, free or new call path", pid, timeout)
}
