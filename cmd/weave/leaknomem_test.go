package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestLeakScanNoMemory: a program that leaves its address space full at
// exit (testdata/leaks/nomem.c under prlimit --as) runs as the plain build
// does, and its leak scan, which cannot map its tables, says so: the
// summary's line, M leak_scan_failed, and weave check's reason. Before,
// the summary read as if WEAVE_LEAK_SCAN=0 had been set, and weave check
// said so.
func TestLeakScanNoMemory(t *testing.T) {
	testtool.Need(t, "gcc")
	testtool.Need(t, "prlimit")
	dir := t.TempDir()
	src := leaksSource(t, "nomem.c")
	plain, woven := filepath.Join(dir, "plain"), filepath.Join(dir, "woven")
	mustRun(t, dir, nil, "gcc", "-O2", "-g", "-o", plain, src)
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", woven, src)
	as := "--as=1073741824"
	p := run(t, dir, nil, "prlimit", as, plain, "fill")
	prof := filepath.Join(dir, "n.prof")
	w := run(t, dir, []string{"WEAVE_SUMMARY=1", "WEAVE_OUT=" + prof}, "prlimit", as, woven, "fill")
	if p.code != 0 || p.stdout != "full\n" || w.code != p.code || w.stdout != p.stdout {
		t.Fatalf("plain: exit %d, %q; woven: exit %d, %q\n%s", p.code, p.stdout, w.code, w.stdout, w.stderr)
	}
	if !strings.Contains(w.stderr, "no leak scan: it ran out of memory") || !strings.Contains(w.stderr, "100,001 allocs") {
		t.Errorf("the summary does not say the scan ran out of memory:\n%s", w.stderr)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nM leak_scan_failed out of memory\n") {
		t.Errorf("no M leak_scan_failed in the profile")
	}
	c := run(t, dir, nil, weaveBin, "check", prof)
	if c.code != 2 || !strings.Contains(c.stderr, "failed, out of memory") {
		t.Errorf("weave check: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	// with room, the same blocks are classified
	r := run(t, dir, []string{"WEAVE_SUMMARY=1", "WEAVE_OUT=" + filepath.Join(dir, "m.prof")}, "prlimit", as, woven)
	if !strings.Contains(r.stderr, "definitely lost: 1,200,000 bytes in 50,000 blocks") || strings.Contains(r.stderr, "no leak scan") {
		t.Errorf("with room:\n%s", r.stderr)
	}
}
