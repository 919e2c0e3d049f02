package main

import (
	"path/filepath"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestDlopenWovenLibraryAllocs: a woven program that loads a woven library
// with dlopen, calls it and unloads it (testdata/leaks/dlclose_*.c) counts
// the allocations it counts with the plain library: the library's copy of
// the runtime, inactive, touches none of its thread-locals, whose first
// touch had the dynamic linker malloc the library's TLS block (gawk -l
// filefuncs -l readfile: 769 allocations against memcheck's 767).
func TestDlopenWovenLibraryAllocs(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := func(name string) string { return leaksSource(t, name) }
	env := []string{"WEAVE_CC=gcc"}
	woven, plain, exe := filepath.Join(dir, "libw.so"), filepath.Join(dir, "libp.so"), filepath.Join(dir, "main")
	mustRun(t, dir, env, weaveBin, "cc", "-shared", "-fPIC", "-g", "-o", woven, src("dlclose_lib.c"))
	mustRun(t, dir, nil, "gcc", "-shared", "-fPIC", "-g", "-o", plain, src("dlclose_lib.c"))
	mustRun(t, dir, env, weaveBin, "cc", "-g", "-o", exe, src("dlclose_main.c"), "-ldl")
	allocs := map[string]int64{}
	for _, lib := range []string{woven, plain} {
		prof := filepath.Join(dir, filepath.Base(lib)+".prof")
		if r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe, lib); r.stdout != "closed\n" {
			t.Fatalf("%s: stdout %q", lib, r.stdout)
		}
		allocs[lib] = reportTotals(t, prof).Allocs
	}
	if allocs[woven] != allocs[plain] {
		t.Errorf("allocations with the woven library %d, with the plain one %d", allocs[woven], allocs[plain])
	}
}
