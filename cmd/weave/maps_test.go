package main

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// TestMaps runs weave maps on a sleeping process and on bad arguments.
func TestMaps(t *testing.T) {
	sleep := exec.Command("sleep", "30")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Wait()
	defer sleep.Process.Kill()
	r := mustRun(t, "", nil, weaveBin, "maps", strconv.Itoa(sleep.Process.Pid))
	for _, want := range []string{"segment", "text", "stack", "libc.so.6 text", "total"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("weave maps: no %q in\n%s", want, r.stdout)
		}
	}
	for _, args := range [][]string{{}, {"x"}, {"0"}, {"999999999"}} {
		r := run(t, "", nil, append([]string{weaveBin, "maps"}, args...)...)
		if r.code == 0 || !strings.HasPrefix(r.stderr, "weave: maps: ") {
			t.Errorf("weave maps %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}
