package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// coverageSource has the lines gcov counts differently when woven code is
// charged to them: functions entered and left many times (the guard's
// cleanup), an early return, recursion, an allocator through a pointer
// (a call thunk) and a loop of allocations.
const coverageSource = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node { struct node *next; int v; };

static struct node *push(struct node *h, int v)
{
	struct node *n = malloc(sizeof *n);
	if (!n)
		return h;
	n->next = h; n->v = v;
	return n;
}

static int sum(struct node *h) { int s = 0; for (; h; h = h->next) s += h->v; return s; }

static void drop(struct node *h)
{
	while (h) {
		struct node *n = h->next;
		free(h);
		h = n;
	}
}

static int fib(int n) { if (n < 2) return n; return fib(n - 1) + fib(n - 2); }

static char *dup(const char *s, void *(*alloc)(size_t))
{
	size_t n = strlen(s) + 1;
	char *p = alloc(n);
	memcpy(p, s, n);
	return p;
}

int main(int argc, char **argv)
{
	struct node *h = NULL;
	for (int i = 0; i < 10 * argc; i++)
		h = push(h, i);
	printf("%d %d\n", sum(h), fib(15));
	char *s = dup(argv[0], malloc);
	if (argc > 5) {
		puts("many");
		return 3;
	}
	printf("%zu\n", strlen(s));
	free(s);
	drop(h);
	return 0;
}
`

// coverageRun is what a coverage build's run and gcov's report on it
// gave.
type coverageRun struct {
	program, gcovErr result
	lines            string // p.c.gcov without its header (the file names)
}

// buildCovered builds coverageSource with cc --coverage flags in a new
// directory, runs it and gcov.
func buildCovered(t *testing.T, env []string, cc []string, gcov []string, flags ...string) coverageRun {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "p.c"), []byte(coverageSource), 0o644)
	mustRun(t, dir, env, append(append(append([]string{}, cc...), "--coverage", "-c", "p.c"), flags...)...)
	mustRun(t, dir, env, append(append([]string{}, cc...), "--coverage", "-o", "p", "p.o")...)
	var r coverageRun
	r.program = run(t, dir, env, "./p", "a", "b")
	r.gcovErr = mustRun(t, dir, nil, append(gcov, "p.c")...)
	r.gcovErr.stdout = ""
	b, err := os.ReadFile(filepath.Join(dir, "p.c.gcov"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(strings.TrimLeft(l, " "), "-:    0:") {
			r.lines += l
		}
	}
	return r
}

// TestCoverageBuild: a woven build for gcov (--coverage) counts the
// program's lines as the plain build does, and gcov can open every
// source its notes name: weave's code is charged to weave's header in
// the cache directory (no "<weave>"), its guards to no line at all. gcc
// optimising moves counts between lines differently for the woven code
// (docs/building.md): there only gcov's success is checked.
func TestCoverageBuild(t *testing.T) {
	for _, tc := range []struct{ cc, gcov string }{{"gcc", "gcov"}, {"clang", "llvm-cov gcov"}} {
		cache := t.TempDir() // the compiler's runtime object made once
		for _, opt := range []string{"-O0", "-O2"} {
			t.Run(tc.cc+opt, func(t *testing.T) {
				gcov := strings.Fields(tc.gcov)
				testtool.Need(t, tc.cc, gcov[0])
				env := []string{"WEAVE_CC=" + tc.cc, "WEAVE_SUMMARY=0", "XDG_CACHE_HOME=" + cache}
				plain := buildCovered(t, nil, []string{tc.cc}, gcov, opt)
				woven := buildCovered(t, env, []string{weaveBin, "cc"}, gcov, opt)
				if woven.program != plain.program || plain.program.code != 0 {
					t.Errorf("woven run %+v, plain %+v (want the same, exit 0)", woven.program, plain.program)
				}
				if woven.gcovErr != plain.gcovErr {
					t.Errorf("gcov of the woven build: %+v; of the plain build: %+v", woven.gcovErr, plain.gcovErr)
				}
				if (opt == "-O0" || tc.cc == "clang") && woven.lines != plain.lines {
					t.Errorf("p.c.gcov of the woven build:\n%s\nof the plain build:\n%s", woven.lines, plain.lines)
				}
				if hs, _ := filepath.Glob(filepath.Join(cache, "weave", "include", "weave-*.h")); len(hs) != 1 {
					t.Errorf("weave's header in the cache: %v (want one file)", hs)
				}
			})
		}
	}
}
