package main

import (
	"os"
	"path/filepath"
	"strings"
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

// TestCheckExec: a process image that ended by exec has no leak scan (its
// memory went with it, as memcheck and LeakSanitizer check nothing there):
// weave check calls its profile clean and says why, not "no leak scan"
// with exit 2 (libuv's test runner forks and execs itself for each test,
// one such profile each), and a suite's merge does not count it among
// the runs it could not check.
func TestCheckExec(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "reexec.c")
	os.WriteFile(src, []byte("#include <stdlib.h>\n#include <unistd.h>\nstatic char *keep;\n"+
		"int main(int argc, char **argv) { keep = malloc(8); if (argc == 1) { execl(\"/proc/self/exe\", argv[0], \"again\", (char *)0); return 3; } free(keep); return 0; }\n"), 0o644)
	mustRun(t, dir, nil, weaveBin, "cc", "-o", "reexec", src)
	mustRun(t, dir, []string{"WEAVE_OUT=" + dir + "/p/"}, "./reexec")
	profs, _ := filepath.Glob(filepath.Join(dir, "p", "*.prof"))
	if len(profs) != 2 {
		t.Fatalf("profiles %v, want 2 (before exec, after)", profs)
	}
	r := run(t, dir, nil, append([]string{weaveBin, "check"}, profs...)...)
	execd := 0
	for _, p := range profs {
		execd += strings.Count(r.stdout, p+": clean (ended by exec: its blocks went with its image)\n")
	}
	if r.code != 0 || execd != 1 || strings.Count(r.stdout, ": clean") != 2 || r.stderr != "" {
		t.Errorf("weave check %v: exit %d, stdout\n%s\nstderr\n%s\n(want exit 0, both clean, one ended by exec)", profs, r.code, r.stdout, r.stderr)
	}
	execProf := profs[0]
	if !strings.Contains(r.stdout, execProf+": clean (ended by exec") {
		execProf = profs[1]
	}
	m, m2 := filepath.Join(dir, "m.prof"), filepath.Join(dir, "m2.prof")
	mustRun(t, dir, nil, append([]string{weaveBin, "merge", "-o", m}, profs...)...)
	mustRun(t, dir, nil, weaveBin, "merge", "-o", m2, execProf)
	// A merge of merges: the scanned one's runs ended by exec count too.
	r2 := run(t, dir, []string{"WEAVE_OUT=" + dir + "/q/"}, "./reexec")
	q, _ := filepath.Glob(filepath.Join(dir, "q", "*.prof"))
	mq, mm := filepath.Join(dir, "mq.prof"), filepath.Join(dir, "mm.prof")
	mustRun(t, dir, nil, append([]string{weaveBin, "merge", "-o", mq}, q...)...)
	mustRun(t, dir, nil, weaveBin, "merge", "-o", mm, m, mq)
	if r2.code != 0 || len(q) != 2 {
		t.Fatalf("second run: exit %d, profiles %v", r2.code, q)
	}
	for p, want := range map[string]string{
		mm: ": clean (2 of 4 runs ended by exec)\n",
		m:  ": clean (1 of 2 runs ended by exec)\n",
		m2: ": clean (ended by exec: its blocks went with its image)\n",
	} {
		if r := mustRun(t, dir, nil, weaveBin, "check", p); r.stdout != p+want {
			t.Errorf("weave check of a merge: %q, want %q", r.stdout, p+want)
		}
	}
}
