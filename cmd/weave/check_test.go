package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestCheckMergedUnscanned: weave check of a suite's merged profile in
// which a run crashed (no leak scan) says how many runs it could not
// check, instead of a bare "clean"; a suite of scanned runs says nothing
// more.
func TestCheckMergedUnscanned(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "crash.c")
	os.WriteFile(src, []byte("#include <stdlib.h>\nint main(int argc, char **argv) { free(malloc(8)); if (argc > 1) abort(); return 0; }\n"), 0o644)
	exe := filepath.Join(dir, "crash")
	mustRun(t, dir, nil, weaveBin, "cc", "-o", exe, src)
	ok, crashed := filepath.Join(dir, "ok.prof"), filepath.Join(dir, "crashed.prof")
	mustRun(t, dir, []string{"WEAVE_OUT=" + ok}, exe)
	if r := run(t, dir, []string{"WEAVE_OUT=" + crashed}, exe, "crash"); r.code == 0 {
		t.Fatal("the crashing run exited 0")
	}
	for _, tc := range []struct {
		inputs []string
		want   string
	}{
		{[]string{ok, crashed}, ": clean (1 of 2 runs without a leak scan, not checked: crashed, or WEAVE_LEAK_SCAN=0)\n"},
		{[]string{ok, ok}, ": clean\n"},
	} {
		m := filepath.Join(dir, "m.prof")
		mustRun(t, dir, nil, append([]string{weaveBin, "merge", "-o", m}, tc.inputs...)...)
		if r := mustRun(t, dir, nil, weaveBin, "check", m); r.stdout != m+tc.want {
			t.Errorf("weave check of the merge of %v: %q, want %q", tc.inputs, r.stdout, m+tc.want)
		}
	}
}
