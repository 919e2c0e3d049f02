package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// TestExitDuringDlopen: a program that calls _exit while another thread
// is in dlopen (testdata/hardening/dlopenexit.c: the loaded object's
// constructor holds the dynamic linker's lock for a second, then
// allocates) exits at once, as the plain build does, with its profile.
// The exit writer, holding the runtime's lock, named each function's
// object with dladdr, which waits for the linker's lock; the loading
// thread's malloc waited for the runtime's: both waited for ever (lbzip2
// 2.5's make check: a worker's pthread_exit loading libgcc_s while main
// called _exit, killed by the test's alarm after 60 s, 2 of 20 tests).
func TestExitDuringDlopen(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "dlopenexit", nil, []string{"-ldl"})
	lib := filepath.Join(dir, "libslow.so")
	src, _ := filepath.Abs("../../testdata/hardening/dlopenexit.c")
	mustRun(t, dir, nil, "gcc", "-O2", "-shared", "-fPIC", "-DLIB", "-o", lib, src)
	want := runWithin(t, 20*time.Second, dir, nil, plain, lib)
	prof := filepath.Join(dir, "w.prof")
	got := runWithin(t, 20*time.Second, dir, []string{"WEAVE_OUT=" + prof}, woven, lib)
	if got.stdout != want.stdout || got.code != want.code || want.stdout != "exiting\n" {
		t.Errorf("woven: exit %d, stdout %q; plain: exit %d, stdout %q", got.code, got.stdout, want.code, want.stdout)
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range p.Funcs {
		found = found || f.Name == "main"
	}
	if !found {
		t.Errorf("no main in the profile")
	}
}
