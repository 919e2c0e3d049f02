package main

import (
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestUnderValgrindLargeFrees: a woven program whose frees of blocks over
// 256 bytes reach the runtime under memcheck (the executable's malloc
// left alone: --soname-synonyms=somalloc=nouserintercepts, or a program
// linked -rdynamic, as jansson's tests are) makes no memcheck error. The
// scrub read each block's glibc chunk header, which a tool's block does
// not have: "Invalid read of size 1 ... 8 bytes before a block".
func TestUnderValgrindLargeFrees(t *testing.T) {
	testtool.Need(t, "gcc", "valgrind")
	dir := t.TempDir()
	src := leaksSource(t, "reusebig.c")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", "woven", src)
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-rdynamic", "-o", "wovenr", src)
	mustRun(t, dir, nil, "gcc", "-O2", "-g", "-o", "plain", src)
	vg := []string{"valgrind", "--error-exitcode=99", "--run-libc-freeres=no", "--leak-check=full", "--show-leak-kinds=none", "--errors-for-leak-kinds=none"}
	p := run(t, dir, nil, append(vg, "./plain")...)
	if p.code == 99 {
		t.Fatalf("the plain program has memcheck errors:\n%s", p.stderr)
	}
	env := []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0", "WEAVE_CONTROL=0"}
	for _, args := range [][]string{
		{"--soname-synonyms=somalloc=nouserintercepts", "./woven"},
		{"./wovenr"},
	} {
		w := run(t, dir, env, append(vg, args...)...)
		var errs []string
		for _, l := range strings.Split(w.stderr, "\n") {
			if strings.Contains(l, "== Invalid") || strings.Contains(l, "uninitialised") || strings.Contains(l, "   at ") {
				errs = append(errs, l)
			}
		}
		if w.code != p.code || len(errs) > 0 {
			t.Errorf("%v: exit %d (plain %d), memcheck's errors:\n%s", args, w.code, p.code, strings.Join(errs, "\n"))
		}
	}
}
