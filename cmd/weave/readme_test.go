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

// The paths of docs/building.md besides `weave cc`, run as it writes them.

// readmeProg is a program with an include directory, a macro, a function
// weave leaves unwoven, a leak, output on both streams and exit status 3.
// dup is noinline: inlined into main, it may leave the leaked pointer in a
// register the exit scan finds (a still-reachable block, not a leak).
var readmeProg = map[string]string{
	"include/util.h": "#define GREETING \"hello\"\nchar *dup(const char *s, int n);\n",
	"prog.c": `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util.h"

__attribute__((noinline)) char *dup(const char *s, int n)
{
	char *p = malloc(strlen(s) * n + 1);
	p[0] = 0;
	for (int i = 0; i < n; i++)
		strcat(p, s);
	return p;
}

__attribute__((no_instrument_function)) static int quiet(int x)
{
	return x * 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	char *kept = dup(GREETING, n);
#ifndef NDEBUG
	puts("debug build");
#endif
	printf("%s %d\n", kept, quiet(n));
	fprintf(stderr, "to stderr\n");
	free(dup("x", 10));
	return 3;
}
`,
}

// TestReadmeWeaveFile: `weave -o prog.woven.c prog.c -O2 -I include -DNDEBUG`,
// `weave runtime -o weave_rt.c` and a plain `cc -O2 -o prog prog.woven.c
// weave_rt.c` build a program that behaves as the unwoven build and writes
// weave-prog.<pid>.prof; `weave report` without an argument reads the
// newest of them; `weave -v` lists the function left unwoven.
func TestReadmeWeaveFile(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	for name, text := range readmeProg {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"WEAVE_CC=gcc"}
	w := mustRun(t, dir, env, weaveBin, "-o", "prog.woven.c", "prog.c", "-O2", "-I", "include", "-DNDEBUG")
	if w.stderr != "" {
		t.Errorf("weave without -v printed:\n%s", w.stderr)
	}
	woven, err := os.ReadFile(filepath.Join(dir, "prog.woven.c"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^# \d+ "prog\.c"`).Match(woven) || strings.Contains(string(woven), "debug build") {
		t.Errorf("prog.woven.c: no linemarker naming prog.c, or NDEBUG not applied")
	}
	mustRun(t, dir, nil, weaveBin, "runtime", "-o", "weave_rt.c")
	mustRun(t, dir, nil, "gcc", "-O2", "-o", "prog", "prog.woven.c", "weave_rt.c")
	mustRun(t, dir, nil, "gcc", "-O2", "-o", "plain", "prog.c", "-I", "include", "-DNDEBUG")

	runs := filepath.Join(dir, "runs")
	os.Mkdir(runs, 0o755)
	noOut := []string{"WEAVE_SUMMARY="} // the default name, the default summary (prog leaks)
	for _, arg := range []string{"2", "5"} {
		want := run(t, runs, nil, filepath.Join(dir, "plain"), arg)
		got := run(t, runs, noOut, filepath.Join(dir, "prog"), arg)
		sameRun(t, "prog "+arg, want, got)
		if want.code != 3 || !hasSummary(got.stderr) {
			t.Errorf("prog %s: exit %d, stderr:\n%s", arg, want.code, got.stderr)
		}
		if !regexp.MustCompile(`(?m)^==weave \d+== .* at \S*prog\.c:8 dup <- main$`).MatchString(got.stderr) {
			t.Errorf("prog %s: no leak line naming prog.c:8:\n%s", arg, got.stderr)
		}
	}
	profs, _ := filepath.Glob(filepath.Join(runs, "weave-prog.*.prof"))
	if len(profs) != 2 {
		t.Fatalf("profiles %v, want two weave-prog.<pid>.prof", profs)
	}
	// The newest is the second run's (n=5: 11 bytes leaked); make the
	// order unambiguous whatever the file system's timestamp resolution.
	newest, older := profs[0], profs[1]
	if !strings.Contains(mustRun(t, runs, nil, weaveBin, "report", "--format", "json", newest).stdout, `"bytes_in_use": 11`) {
		newest, older = older, newest
	}
	now := time.Now()
	os.Chtimes(older, now.Add(-time.Hour), now.Add(-time.Hour))
	os.Chtimes(newest, now, now)
	got := mustRun(t, runs, nil, weaveBin, "report").stdout
	if want := mustRun(t, runs, nil, weaveBin, "report", newest).stdout; got != want || !strings.Contains(got, "dup") {
		t.Errorf("weave report without an argument:\n%s\nwant the report of %s:\n%s", got, newest, want)
	}
	if r := run(t, dir, nil, weaveBin, "report"); r.code == 0 || !strings.Contains(r.stderr, "no weave-*.prof") {
		t.Errorf("weave report with no profile here: exit %d\n%s", r.code, r.stderr)
	}

	// -v, before or after the other arguments.
	for _, args := range [][]string{
		{"-v", "-o", "v.c", "prog.c", "-I", "include"},
		{"-o", "v.c", "prog.c", "-I", "include", "-v"},
	} {
		r := mustRun(t, dir, env, append([]string{weaveBin}, args...)...)
		if !regexp.MustCompile(`^weave: \S*prog\.c:15: quiet not woven: no_instrument_function attribute\n` +
			`weave: \S*prog\.c:6: dup frameless: an allocation leaf, its allocations make its frame\n` +
			`(weave: note: .*\n)+$`).MatchString(r.stderr) {
			t.Errorf("weave %s printed %q, want quiet listed as unwoven and dup as frameless", strings.Join(args, " "), r.stderr)
		}
	}
}
