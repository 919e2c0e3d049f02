package main

import (
	"path/filepath"
	"testing"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
)

// TestMallocaDeallocator: gnulib's malloca (testdata/leaks/malloca.c), an
// allocator of interior pointers freed through freea. Its malloc
// attribute names freea, so weave counts each block freed: the leak
// summary is memcheck's, nothing lost (before, two freed blocks were
// "definitely" and "possibly lost"). Without the attribute, freea is not
// known and the freed blocks' records stay, some at pages since unmapped:
// the program still exits as it would (the leak scan read them and
// crashed it, SIGSEGV, as grep's test-malloca did).
func TestMallocaDeallocator(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := leaksSource(t, "malloca.c")
	exe := filepath.Join(dir, "malloca")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", exe, src)
	r := run(t, dir, []string{"WEAVE_SUMMARY=1", "WEAVE_OUT=" + filepath.Join(dir, "a.prof")}, exe)
	got, ok := memcheck.ParseKinds(r.stderr)
	if r.code != 0 || r.stdout != "ok\n" || !ok {
		t.Fatalf("exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
	if got[0].Blocks != 0 || got[1].Blocks != 0 || got[2].Blocks != 0 {
		t.Errorf("blocks freed through freea reported lost: %+v\n%s", got, r.stderr)
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		plain := filepath.Join(dir, "plain")
		mustRun(t, dir, nil, "gcc", "-O2", "-g", "-o", plain, src)
		if vg := memcheck.RunLeaks(t, dir, nil, plain); vg != got {
			t.Errorf("weave's leak summary %+v, memcheck's %+v", got, vg)
		}
	})

	noattr := filepath.Join(dir, "noattr")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--alloc", "mmalloca:size=1", "-DNOATTR", "-O2", "-g", "-o", noattr, src)
	r = run(t, dir, []string{"WEAVE_SUMMARY=1", "WEAVE_OUT=" + filepath.Join(dir, "b.prof")}, noattr)
	if _, ok := memcheck.ParseKinds(r.stderr); r.code != 0 || r.stdout != "ok\n" || !ok {
		t.Errorf("freea unknown: exit %d, stdout %q\n%s", r.code, r.stdout, r.stderr)
	}
}
