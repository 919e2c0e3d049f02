package main

import (
	"strings"
	"testing"
)

// TestHardeningNofile: a program that exits with every descriptor its
// RLIMIT_NOFILE allows taken (libevent 2.1's listener/error_unlock) still
// gets its profile, complete, with the leak scan's kinds, and no line on
// stderr; the run is the plain one's.
func TestHardeningNofile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "nofile", nil, nil)
	want := run(t, dir, nil, plain)
	got := run(t, dir, append(outEnv(dir), "WEAVE_SUMMARY="), woven)
	sameRun(t, "nofile", want, got)
	if got.stderr != "" || !strings.Contains(want.stdout, ": -1") {
		t.Errorf("plain stdout %q, woven stderr:\n%s", want.stdout, got.stderr)
	}
	files := hprofiles(t, dir)
	if len(files) != 1 {
		t.Fatalf("profiles %v", files)
	}
	l := load(t, files[0])
	if l.meta("complete") != "1" || l.meta("leak_scan") == "" || l.meta("leak_scan_failed") != "" {
		t.Errorf("profile: complete %q, leak_scan %q, leak_scan_failed %q", l.meta("complete"), l.meta("leak_scan"), l.meta("leak_scan_failed"))
	}
	if c := l.chains()[24]; len(c) != 1 || c[0] != "work" {
		t.Errorf("the thread's block at %q", c)
	}
}
