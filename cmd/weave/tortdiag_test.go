package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// knownDiagDifferences are torture tests whose woven compile's warnings
// differ from the plain preprocessed text's for a reason weave keeps.
var knownDiagDifferences = map[string]string{
	// gcc -O2 warns of a read of malloc'd memory never written only for
	// its builtin malloc; the advice (__weave_malloc) has malloc's size
	// but not the builtin's meaning, nor the malloc attribute (weave.h).
	"941014-2.c": "-Wuninitialized of malloc'd memory is gcc's builtin malloc's",
}

// TestTortureDiagnostics: over a sample of the c-torture execute tests
// (every 6th file: implicit declarations and ints, sign compares, unused
// parameters, missing returns behind abort(), on lines weave inserts text
// into), gcc -O2 -Wall -Wextra gives the woven text the diagnostics
// (place, kind, option) it gives the plain preprocessed text, and the same
// exit code; with -Werror, the plain file's. The plain .i, not the source:
// a warning in a macro's expansion is reported at the expansion in any
// compile of preprocessed text, weave's or not.
func TestTortureDiagnostics(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus test skipped under -short")
	}
	testtool.Need(t, "gcc")
	src := t.TempDir()
	unpackCorpus(t, tortureDir, src, func(rel string, d fs.DirEntry) bool {
		return !d.IsDir() // some #include a sibling
	})
	all, _ := filepath.Glob(filepath.Join(src, "*.c"))
	var names []string
	for i, name := range all {
		if i%6 == 0 || strings.HasSuffix(name, "/920603-1.c") {
			names = append(names, name)
		}
	}
	if len(names) < 200 {
		t.Fatalf("%d torture tests in %s", len(names), src)
	}
	env := []string{"WEAVE_CC=gcc", "WEAVE_CACHE=off", "WEAVE_STRICT=1"}
	for _, file := range names {
		name := filepath.Base(file)
		if knownDiagDifferences[name] != "" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			flags := []string{"-O2", "-Wall", "-Wextra", "-fgnu89-inline", "-fwrapv", "-o", "/dev/null", "-c"}
			mustRun(t, src, nil, "gcc", "-O2", "-E", name, "-o", name+".i")
			for _, werror := range []bool{false, true} {
				f := flags
				if werror {
					f = append([]string{"-Werror"}, flags...)
				}
				// -Werror: where the plain file fails, weave compiles it
				// unwoven, with the compiler's own errors (building.md).
				in := name + ".i"
				if werror {
					in = name
				}
				p := run(t, src, nil, append(append([]string{"gcc"}, f...), in)...)
				w := run(t, src, env, append(append([]string{weaveBin, "cc"}, f...), name)...)
				if diagnostics(w.stderr) != diagnostics(p.stderr) || w.code != p.code {
					t.Errorf("%v: woven (exit %d):\n%s\nplain %s (exit %d):\n%s", f, w.code, w.stderr, in, p.code, p.stderr)
				}
				if !werror && diagnostics(p.stderr) == "" {
					break
				}
			}
		})
	}
}
