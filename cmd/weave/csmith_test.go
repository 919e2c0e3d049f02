package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestCsmith weaves csmith's random programs (every function framed,
// calls through thunks and statement expressions, volatile globals,
// deep expressions) and runs them: each prints the checksum of its
// globals, which must be the plain build's, with its exit code. A
// program whose plain run takes over 5 s is left out. The seeds are
// fixed so that a failure can be rerun (csmith --seed N).
func TestCsmith(t *testing.T) {
	testtool.Need(t, "csmith", "gcc")
	inc := "/usr/include/csmith"
	if _, err := os.Stat(filepath.Join(inc, "csmith.h")); err != nil {
		t.Fatalf("csmith.h: %v", err)
	}
	ran, slow := 0, 0
	for _, c := range []struct {
		cc, opt string
		seeds   []int
	}{
		{"gcc", "-O2", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		{"gcc", "-O0", []int{2001, 2002, 2003}},
		{"clang", "-O1", []int{1001, 1003, 1004}},
	} {
		for _, seed := range c.seeds {
			t.Run(fmt.Sprintf("%s%s/%d", c.cc, c.opt, seed), func(t *testing.T) {
				testtool.Need(t, c.cc)
				dir := t.TempDir()
				mustRun(t, dir, nil, "csmith", "--seed", fmt.Sprint(seed), "-o", "p.c")
				mustRun(t, dir, nil, c.cc, c.opt, "-w", "-I"+inc, "-o", "plain", "p.c")
				start := time.Now()
				p := runWithinOrSkip(t, 5*time.Second, dir, "./plain")
				if p == nil {
					slow++
					t.Skipf("the plain program ran over 5 s (%v)", time.Since(start))
				}
				mustRun(t, dir, []string{"WEAVE_CC=" + c.cc}, weaveBin, "cc", "--frames=all", c.opt, "-w", "-I"+inc, "-o", "woven", "p.c")
				w := runWithin(t, 60*time.Second, dir, []string{"WEAVE_OUT=" + filepath.Join(dir, "w.prof"), "WEAVE_SUMMARY=0"}, "./woven")
				if w.stdout != p.stdout || w.code != p.code {
					t.Errorf("csmith --seed %d, %s %s: woven %q exit %d, plain %q exit %d", seed, c.cc, c.opt, w.stdout, w.code, p.stdout, p.code)
				}
				ran++
			})
		}
	}
	if slow > ran {
		t.Errorf("%d of csmith's programs ran over the limit, %d in time", slow, ran)
	}
}

// runWithinOrSkip runs argv in dir; a run over the limit is killed and
// gives nil.
func runWithinOrSkip(t *testing.T, limit time.Duration, dir string, argv ...string) *result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return nil
	}
	r := result{stdout: string(out)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return &r
}
