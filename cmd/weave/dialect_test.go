package main

import (
	"path/filepath"
	"strings"
	"testing"

	"weave/internal/testtool"
)

// dialectPrograms are the test programs of testdata/dialect, each with the
// language options it is built with: valid C that cc/v4 parses only in
// the dialect the options select (or with extended identifiers).
var dialectPrograms = []struct {
	src   string
	flags []string
}{
	{"keywords.c", []string{"-std=c89"}},
	{"keywords.c", []string{"-ansi"}},
	{"keywords.c", []string{"--std=c99"}},
	{"keywords.c", []string{"-std=c11", "-pedantic"}},
	{"keywords.c", []string{"-fno-asm"}},
	{"ucn.c", nil},
	{"ucn.c", []string{"-std=c99"}},
	{"unsignedchar.c", []string{"-funsigned-char"}},
	{"msext.c", []string{"-fms-extensions"}},
}

// TestDialects weaves each dialect program with gcc and clang, through
// `weave cc` (WEAVE_STRICT: no fallback) and through `weave -o` and a plain
// compile, and checks that the woven programs behave as the plain one.
// The report of the program with extended identifiers names its functions
// in UTF-8.
func TestDialects(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		for _, p := range dialectPrograms {
			p, cc := p, cc
			testtool.Check(t, cc+"/"+strings.TrimSuffix(p.src, ".c")+strings.Join(p.flags, ""), []string{cc}, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				src, _ := filepath.Abs(filepath.Join("../../testdata/dialect", p.src))
				env := []string{"WEAVE_CC=" + cc, "WEAVE_STRICT=1"}
				mustRun(t, dir, nil, append(append([]string{cc}, p.flags...), src, "-o", "plain")...)
				mustRun(t, dir, env, append(append([]string{weaveBin, "cc"}, p.flags...), src, "-o", "woven")...)
				mustRun(t, dir, env, append([]string{weaveBin, "-o", "x.woven.c", src}, p.flags...)...)
				mustRun(t, dir, env, weaveBin, "runtime", "-o", "rt.c")
				mustRun(t, dir, nil, cc, "-c", "rt.c") // the runtime is C11
				mustRun(t, dir, nil, append(append([]string{cc}, p.flags...), "x.woven.c", "rt.o", "-o", "woven2")...)
				want := run(t, dir, nil, "./plain")
				for _, bin := range []string{"woven", "woven2"} {
					got := run(t, dir, []string{"WEAVE_OUT=" + bin + ".prof"}, "./"+bin)
					sameRun(t, bin, want, got)
				}
				if p.src != "ucn.c" {
					return
				}
				rep := mustRun(t, dir, nil, weaveBin, "report", filepath.Join(dir, "woven.prof")).stdout
				if !strings.Contains(rep, "créer") || strings.Contains(rep, `\U`) || strings.Contains(rep, "$U") || strings.Contains(rep, `\u`) {
					t.Errorf("the report does not name créer in UTF-8:\n%s", rep)
				}
			})
		}
	}
}
