package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestUndefinedSanitizer: a woven program built with -fsanitize=undefined
// prints what the plain one prints (testdata/ubsan.c), times its
// functions and writes a crash profile. The runtime, built with the
// program's flags, stored 16 bytes at a time at a freed block's end as a
// vector type aligned to 8 (UBSan: "store to misaligned address" for
// each block whose size is no multiple of 8), and added 0 to a null
// pointer (clang); and clang's static UBSan runtime, which calls malloc
// from .preinit_array, had the runtime's set-up call sigaction before
// UBSan's interceptor was ready: "Warning: REAL(sigaction_symname) ==
// nullptr" twice, no sampler (M time_sampler none) and no crash handler;
// and under clang the program never ended (UBSan's report of the
// runtime's store, from the free of a block, printed that warning
// without end).
func TestUndefinedSanitizer(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			plain, woven := build(t, dir, cc, program{name: "ubsan", srcs: []string{"ubsan.c"}}, "-fsanitize=undefined", "-O1", "-g")
			for _, args := range [][]string{nil, {"abort"}} {
				prof := filepath.Join(dir, "a.prof")
				os.Remove(prof)
				pr := run(t, dir, nil, append([]string{plain}, args...)...)
				wr := runWithin(t, time.Minute, dir, []string{"WEAVE_OUT=" + prof}, append([]string{woven}, args...)...)
				if !sameRun(t, strings.Join(args, " "), pr, wr) {
					continue
				}
				b, err := os.ReadFile(prof)
				if err != nil {
					t.Fatal(err)
				}
				text := string(b)
				if !strings.Contains(text, "\nM time_sampler thread\n") {
					t.Errorf("%v: no sampler:\n%s", args, grepLines(text, "M time_sampler"))
				}
				if complete := !strings.Contains(text, "\nM complete 0\n"); complete != (args == nil) {
					t.Errorf("%v: profile complete %v", args, complete)
				}
			}
		})
	}
}

// grepLines returns the lines of text that start with prefix.
func grepLines(text, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			b.WriteString(l)
		}
	}
	return b.String()
}
