package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestSuiteAutotools builds testdata/suite, an autotools project whose
// make check compares each run's stdout, stderr and exit status with the
// expected ones (as many test suites do), with CC="weave cc", and runs
// make check with the default settings: it passes (nothing leaked, so the
// runtime prints nothing; with WEAVE_SUMMARY=1 the same check fails, so
// it can). WEAVE_OUT=DIR/ collects one profile per process (fork
// children included, configure's probes excluded); weave merge sums them,
// and weave check reads the sum: clean, then failing once a leaky run's
// profile is added.
func TestSuiteAutotools(t *testing.T) {
	skipProjects(t)
	testtool.Need(t, "autoreconf", "automake")
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../testdata/suite")); err != nil {
		t.Fatal(err)
	}
	profs := filepath.Join(t.TempDir(), "profs")
	env := []string{"WEAVE_CC=gcc", "WEAVE_SUMMARY=", "WEAVE_OUT=" + profs + "/"}
	mustRun(t, dir, env, "autoreconf", "-i")
	mustRun(t, dir, env, "./configure", "CC="+weaveBin+" cc")
	mustRun(t, dir, env, "make")
	if !isWoven(t, filepath.Join(dir, "kvtool")) {
		t.Fatal("kvtool is not woven")
	}
	files, _ := filepath.Glob(filepath.Join(profs, "*"))
	if len(files) != 0 {
		t.Errorf("the build wrote profiles: %v", files) // configure's conftest and the compiler's own runs
	}

	if r := run(t, dir, env, "make", "check"); r.code != 0 {
		log, _ := os.ReadFile(filepath.Join(dir, "check-output.sh.log"))
		t.Fatalf("make check with the default settings: exit %d\n%s%s%s", r.code, r.stdout, r.stderr, log)
	}
	// 4 runs, one of them forking a child.
	files, _ = filepath.Glob(filepath.Join(profs, "weave-kvtool.*.prof"))
	if len(files) != 5 {
		t.Fatalf("profiles %v, want 5 (one per process)", files)
	}
	if r := run(t, dir, append(env, "WEAVE_OUT=", "WEAVE_SUMMARY=1"), "make", "check"); r.code == 0 {
		t.Error("make check passes with the summary on stderr: it does not compare stderr")
	}

	merged := filepath.Join(t.TempDir(), "suite.prof")
	mustRun(t, dir, nil, append([]string{weaveBin, "merge", "-o", merged}, files...)...)
	var sum totals
	for _, f := range files {
		tt := load(t, f).totals()
		sum.Allocs += tt.Allocs
		sum.Frees += tt.Frees
		sum.BytesAllocated += tt.BytesAllocated
	}
	m := load(t, merged)
	if got := m.totals(); got.Allocs != sum.Allocs || got.Frees != sum.Frees || got.BytesAllocated != sum.BytesAllocated || sum.Allocs == 0 {
		t.Errorf("merged totals %+v, the runs' sum %+v", got, sum)
	}
	text := mustRun(t, dir, nil, weaveBin, "report", merged).stdout
	if !strings.Contains(text, "the sum of 5 profiles") || !regexp.MustCompile(`5 runs, [\d.]+ s of run time in all`).MatchString(text) {
		t.Errorf("merged report's header:\n%s", text)
	}
	if r := run(t, dir, nil, weaveBin, "check", merged); r.code != 0 || !strings.Contains(r.stdout, "clean") {
		t.Errorf("weave check of the merged suite: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// A run that leaks: weave check of the new sum names it.
	leak := run(t, dir, env, filepath.Join(dir, "kvtool"), "-l", filepath.Join(dir, "tests", "good.in"))
	if !strings.Contains(leak.stderr, "definitely lost") {
		t.Errorf("a leaking run printed no summary by default:\n%s", leak.stderr)
	}
	files, _ = filepath.Glob(filepath.Join(profs, "weave-kvtool.*.prof"))
	mustRun(t, dir, nil, append([]string{weaveBin, "merge", "-o", merged}, files...)...)
	r := run(t, dir, nil, weaveBin, "check", merged)
	if r.code != 1 || !strings.Contains(r.stdout, "definitely lost") || !strings.Contains(r.stdout, "kv_new") {
		t.Errorf("weave check of the suite with a leaking run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
