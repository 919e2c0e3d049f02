package main

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestMaps runs weave maps on a sleeping process and on bad arguments.
func TestMaps(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Wait()
	defer sleep.Process.Kill()
	// Once the dynamic loader has mapped the C library: read at once, a
	// process just started (under load) had only ld.so's maps.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m, _ := os.ReadFile("/proc/" + strconv.Itoa(sleep.Process.Pid) + "/maps"); strings.Contains(string(m), "libc.so") {
			break
		}
	}
	r := mustRun(t, "", nil, weaveBin, "maps", strconv.Itoa(sleep.Process.Pid))
	for _, want := range []string{"segment", "text", "stack", "libc.so.6 text", "total"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("weave maps: no %q in\n%s", want, r.stdout)
		}
	}
	// A process without a map of its own says why, exit 1: it printed an
	// empty table, exit 0. A zombie (started, not waited for) always; a
	// kernel thread if this pid namespace shows one.
	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	defer zombie.Wait()
	noMap := map[string]string{strconv.Itoa(zombie.Process.Pid): ": it has exited (a zombie: its parent has not waited for it)"}
	if kt := kernelThread(); kt != "" {
		noMap[kt] = ": a kernel thread"
	}
	for pid, why := range noMap {
		want := "weave: maps: process " + pid + " has no memory map of its own" + why + "\n"
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			r := run(t, "", nil, weaveBin, "maps", pid)
			if r.code == 1 && r.stdout == "" && r.stderr == want {
				break
			}
			if time.Now().After(deadline) { // the zombie: true has not exited yet
				t.Errorf("weave maps %s: exit %d, stdout %q, stderr %q; want exit 1, %q", pid, r.code, r.stdout, r.stderr, want)
				break
			}
		}
	}
	for _, args := range [][]string{{}, {"x"}, {"0"}, {"999999999"}} {
		r := run(t, "", nil, append([]string{weaveBin, "maps"}, args...)...)
		if r.code == 0 || !strings.HasPrefix(r.stderr, "weave: maps: ") {
			t.Errorf("weave maps %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// kernelThread is the pid of a kernel thread (PF_KTHREAD in its
// /proc/PID/stat flags), or "" if none is seen here.
func kernelThread() string {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		i := strings.LastIndex(string(st), ") ")
		if err != nil || i < 0 {
			continue
		}
		f := strings.Fields(string(st[i+2:]))
		if len(f) < 7 {
			continue
		}
		if flags, err := strconv.ParseUint(f[6], 10, 64); err == nil && flags&0x00200000 != 0 {
			return e.Name()
		}
	}
	return ""
}
