package main

import (
	"os"
	"path/filepath"
	"regexp"
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

// TestSanitizerLeakStacks: LeakSanitizer's report of a woven
// -fsanitize=address program (widgets.c) has the plain build's leak
// records, each with a frame of the program (make_widget) below the
// runtime's malloc_general. The runtime, built
// without frame pointers, broke the sanitizer's frame-pointer unwind:
// under gcc 2,918 records of garbage stacks (0x1001, 0x200b) where the
// plain build has one.
func TestSanitizerLeakStacks(t *testing.T) {
	record := regexp.MustCompile(`(?m)^Direct leak of (\d+) byte\(s\) in (\d+) object\(s\) allocated from:\n((?:    #.*\n)+)`)
	userFrame := regexp.MustCompile(`in (\w+) \S*widgets\.c\b`)
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			plain, woven := build(t, dir, cc, program{name: "widgets", srcs: []string{"widgets.c"}}, "-fsanitize=address", "-O1", "-g")
			var leaks [2][]string
			for i, exe := range []string{plain, woven} {
				r := runWithin(t, time.Minute, dir, []string{"WEAVE_OUT=" + filepath.Join(dir, "a.prof")}, exe)
				if r.code != 1 {
					t.Fatalf("%s: exit %d, want LeakSanitizer's 1\n%s", exe, r.code, r.stderr)
				}
				for _, m := range record.FindAllStringSubmatch(r.stderr, -1) {
					f := userFrame.FindStringSubmatch(m[3])
					if f == nil {
						t.Errorf("%s: a leak of %s bytes with no frame of the program:\n%s", filepath.Base(exe), m[1], m[3])
						continue
					}
					leaks[i] = append(leaks[i], m[1]+" bytes in "+m[2]) // the frame's name: the symbolizer's (clang's plain -O1 says main)
				}
			}
			if strings.Join(leaks[0], "\n") != strings.Join(leaks[1], "\n") || len(leaks[0]) == 0 {
				t.Errorf("leak records:\nplain: %q\nwoven (%d): %.400q", leaks[0], len(leaks[1]), leaks[1])
			}
		})
	}
}

// TestTrapv: a woven program built with -ftrapv (openssh's flags) runs as
// the plain one and counts as valgrind does. Every framed function of
// one built with gcc's -fPIC -ftrapv crashed (openssh's openbsd-compat,
// so sshd at start-up): the guard took its thread's offset as a pointer
// difference, which -ftrapv makes a call of __subvdi3, and gcc 12 passed
// it without its second argument, the thread pointer.
func TestTrapv(t *testing.T) {
	recursion := program{name: "recursion", srcs: []string{"recursion.c"}}
	for _, cc := range []string{"gcc", "clang"} {
		for _, flags := range [][]string{{"-O2", "-fPIC", "-ftrapv"}, {"-O0", "-fPIC", "-ftrapv"}, {"-O2", "-ftrapv"}} {
			t.Run(cc+strings.Join(flags, ""), func(t *testing.T) {
				testtool.Need(t, cc)
				t.Parallel()
				dir := t.TempDir()
				plain, woven := build(t, dir, cc, recursion, flags...)
				prof := filepath.Join(dir, "out.prof")
				if !sameRun(t, "recursion", run(t, dir, nil, plain), run(t, dir, []string{"WEAVE_OUT=" + prof}, woven)) {
					return
				}
				checkValgrind(t, reportTotals(t, prof), dir, woven)
			})
		}
	}
}
