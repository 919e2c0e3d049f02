package driver

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The compilers weave cc runs, and what a signal that ends it must do.
// A signal sent to weave alone (a build tool or CI runner stopping its
// job by pid, kill PID) used to end weave and leave its compiler running:
// that compiler went on and wrote the -o file a minute after the command
// had failed, newer than its sources, so the next make took it as built.
// Interrupted, weave passes the signal on to the compilers it runs and
// their own children (cc1, as), as a ^C reaches the whole process group,
// waits for them to end (gcc's driver removes what they were writing),
// removes its scratch directories and then ends by the same signal. A
// signal the process started with ignored (nohup's SIGHUP, a background
// job's SIGINT) stays ignored, as gcc leaves it.
var interrupt struct {
	once     sync.Once
	mu       sync.Mutex
	caught   bool
	children map[*os.Process]bool
	cleanups map[*func()]bool
}

// interruptSignals are the signals that end weave cc after its children.
var interruptSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// catchInterrupts starts the handling above, once.
func catchInterrupts() {
	interrupt.once.Do(func() {
		interrupt.children = map[*os.Process]bool{}
		interrupt.cleanups = map[*func()]bool{}
		ch := make(chan os.Signal, 1)
		for _, s := range interruptSignals {
			if !signal.Ignored(s) {
				signal.Notify(ch, s)
			}
		}
		go func() { interrupted((<-ch).(syscall.Signal)) }()
	})
}

// interrupted passes s on to the running children, waits for them (at
// most 30 s), runs the cleanups and ends the process by s.
func interrupted(s syscall.Signal) {
	interrupt.mu.Lock()
	interrupt.caught = true
	for p := range interrupt.children {
		for _, d := range descendants(p.Pid) {
			syscall.Kill(d, s)
		}
		p.Signal(s)
	}
	interrupt.mu.Unlock()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		interrupt.mu.Lock()
		n := len(interrupt.children)
		interrupt.mu.Unlock()
		if n == 0 {
			break
		}
	}
	interrupt.mu.Lock()
	for f := range interrupt.cleanups {
		(*f)()
	}
	signal.Reset(s)
	syscall.Kill(os.Getpid(), s)
	time.Sleep(time.Second) // the signal ends the process; if it is blocked:
	os.Exit(128 + int(s))
}

// onInterrupt runs f if a signal ends weave cc, until stop is called.
func onInterrupt(f func()) (stop func()) {
	catchInterrupts()
	interrupt.mu.Lock()
	interrupt.cleanups[&f] = true
	interrupt.mu.Unlock()
	return func() {
		interrupt.mu.Lock()
		delete(interrupt.cleanups, &f)
		interrupt.mu.Unlock()
	}
}

// runChild runs cmd as a child that an interrupt passes its signal on to.
// Once weave is interrupted it starts none, and one that ended does not
// return: the process ends by the signal, not by the failure it caused.
func runChild(cmd *exec.Cmd) error {
	if err := startChild(cmd); err != nil {
		return err
	}
	return waitChild(cmd)
}

// startChild starts cmd as runChild does; waitChild waits for it.
func startChild(cmd *exec.Cmd) error {
	catchInterrupts()
	interrupt.mu.Lock()
	if interrupt.caught {
		interrupt.mu.Unlock()
		select {}
	}
	err := cmd.Start()
	if err == nil {
		interrupt.children[cmd.Process] = true
	}
	interrupt.mu.Unlock()
	return err
}

func waitChild(cmd *exec.Cmd) error {
	err := cmd.Wait()
	interrupt.mu.Lock()
	delete(interrupt.children, cmd.Process)
	caught := interrupt.caught
	interrupt.mu.Unlock()
	if caught {
		select {}
	}
	return err
}

// descendants lists the processes below pid, children first: a
// compiler's driver's passes.
func descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				out = append(append(out, n), descendants(n)...)
			}
		}
	}
	return out
}
