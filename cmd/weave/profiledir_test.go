package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestProfileInLinkDir: a program linked by `weave cc` writes its profile
// in the directory it was linked in, not in the one it runs in. rsync's
// `make check` runs its tls helper in each tree a test made and diffs the
// trees: woven, 25 of its 50 tests failed on the helper's own profile in
// them. testdata/lsdir.c lists the directory it runs in: run twice in a
// data directory, woven, it lists what plain lists, the directory is left
// as it was, and the profiles are in the build directory (libtool's
// .libs: the directory above it, where its wrapper script runs it from).
func TestProfileInLinkDir(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	bdir := filepath.Join(dir, "build")
	data := filepath.Join(dir, "data")
	for _, d := range []string{filepath.Join(bdir, ".libs"), data} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a", "b", "weave-notes.txt"} {
		if err := os.WriteFile(filepath.Join(data, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	plain, woven := build(t, bdir, "gcc", program{name: "lsdir", srcs: []string{"lsdir.c"}}, "-O2")
	src, _ := filepath.Abs("../../testdata/lsdir.c")
	libtool := filepath.Join(bdir, ".libs", "lt-lsdir")
	mustRun(t, bdir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", src, "-o", libtool)

	want := run(t, data, nil, plain)
	for _, exe := range []string{woven, woven, libtool} {
		got := run(t, data, nil, exe)
		sameRun(t, filepath.Base(exe), want, got)
		if !strings.Contains(got.stderr, filepath.Join(bdir, "weave-")) {
			t.Errorf("%s: the summary does not name a profile in %s:\n%s", exe, bdir, got.stderr)
		}
	}
	entries, _ := os.ReadDir(data)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"a", "b", "weave-notes.txt"}) {
		t.Errorf("the data directory holds %v after the woven runs", names)
	}
	profs, _ := filepath.Glob(filepath.Join(bdir, "weave-*.prof"))
	if len(profs) != 3 {
		t.Fatalf("%d profiles in the build directory, want 3: %v", len(profs), profs)
	}
	for _, p := range profs {
		r := mustRun(t, dir, nil, weaveBin, "report", p)
		if !strings.Contains(r.stdout, "main") {
			t.Errorf("%s: report names no main:\n%s", p, r.stdout)
		}
	}
	if extra, _ := filepath.Glob(filepath.Join(bdir, ".libs", "weave-*")); len(extra) != 0 {
		t.Errorf("profiles in .libs: %v", extra)
	}
}

// TestProfileLinkDirGone: a woven program installed (make install
// DESTDIR=..., a package built in a builder's tree) and run where the
// directory it was linked in no longer exists writes its profile in the
// directory it runs in, as a runtime linked by hand does, and says nothing
// on stderr: c-ares 1.18's ahost, installed and its build tree removed,
// printed 'cannot write .../bin/weave-ahost.N.prof: No such file or
// directory; the profile goes to /tmp/...' at every run.
func TestProfileLinkDirGone(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	bdir, inst, work := filepath.Join(dir, "build"), filepath.Join(dir, "inst"), filepath.Join(dir, "work")
	for _, d := range []string{bdir, inst, work, filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	src := filepath.Join(dir, "prog.c")
	text := "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n" +
		"int main(void) { char *s = strdup(\"installed\"); puts(s); free(s); return 3; }\n"
	if err := os.WriteFile(src, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, woven := filepath.Join(bdir, "prog.plain"), filepath.Join(bdir, "prog.woven")
	mustRun(t, bdir, nil, "gcc", "-O2", "-o", plain, src)
	mustRun(t, bdir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-o", woven, src)
	for _, exe := range []string{plain, woven} {
		b, err := os.ReadFile(exe)
		if err == nil {
			err = os.WriteFile(filepath.Join(inst, filepath.Base(exe)), b, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := os.RemoveAll(bdir); err != nil {
		t.Fatal(err)
	}
	want := run(t, work, nil, filepath.Join(inst, "prog.plain"))
	got := run(t, work, []string{"WEAVE_SUMMARY=", "TMPDIR=" + filepath.Join(dir, "tmp")}, filepath.Join(inst, "prog.woven"))
	if got.stdout != want.stdout || got.stderr != want.stderr || got.code != want.code {
		t.Errorf("woven run differs:\nplain: exit %d\n%s%s\nwoven: exit %d\n%s%s", want.code, want.stdout, want.stderr, got.code, got.stdout, got.stderr)
	}
	if profs, _ := filepath.Glob(filepath.Join(work, "weave-prog.woven.*.prof")); len(profs) != 1 {
		t.Errorf("profiles in the directory it ran in: %v, want one", profs)
	}
}
