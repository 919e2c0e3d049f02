package main

import (
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestUnderValgrindNoErrors: woven programs make no memcheck error of the
// runtime's own where its code runs under memcheck beyond
// TestUnderValgrind's case. Frees of blocks over 256 bytes that reach
// the runtime (the executable's malloc left alone: nouserintercepts, or
// a program linked -rdynamic, as jansson's tests are): the scrub read
// each block's glibc chunk header, which a tool's block does not have
// ("Invalid read of size 1 ... 8 bytes before a block"). Threads that
// exit (lbzip2's): the leak scan's note of the dead frames read words
// never written ("Conditional jump ... uninitialised").
func TestUnderValgrindNoErrors(t *testing.T) {
	testtool.Need(t, "gcc", "valgrind")
	dir := t.TempDir()
	cc := func(out, src string, flags ...string) {
		mustRun(t, dir, []string{"WEAVE_CC=gcc"}, append([]string{weaveBin, "cc", "-O2", "-g", "-o", out, leaksSource(t, src)}, flags...)...)
	}
	cc("woven", "reusebig.c")
	cc("wovenr", "reusebig.c", "-rdynamic")
	cc("threads", "threadleaks.c", "-pthread")
	vg := []string{"valgrind", "--error-exitcode=99", "--run-libc-freeres=no", "--leak-check=full", "--show-leak-kinds=none", "--errors-for-leak-kinds=none"}
	env := []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}
	for _, args := range [][]string{
		{"--soname-synonyms=somalloc=nouserintercepts", "./woven"},
		{"./wovenr"},
		{"./threads"},
	} {
		w := run(t, dir, env, append(vg, args...)...)
		var errs []string
		for _, l := range strings.Split(w.stderr, "\n") {
			if strings.Contains(l, "== Invalid") || strings.Contains(l, "uninitialised") || strings.Contains(l, "   at ") {
				errs = append(errs, l)
			}
		}
		if w.code == 99 || len(errs) > 0 {
			t.Errorf("%v: exit %d, memcheck's errors:\n%s", args, w.code, strings.Join(errs, "\n"))
		}
	}
}
