package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
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

// TestSiteSizes: the sizeof(T) an allocation site records is the
// compiler's, also where cc/v4 computes another (packed structures,
// -fshort-enums): testdata/dialect/sizes.c prints each type's size, which
// its site in the profile must hold. Under -fpack-struct (below 8) weave.h
// would be laid out differently from the runtime's: the unit is built
// unwoven, with a warning, and runs as the plain build. gcc and clang.
func TestSiteSizes(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		for _, flags := range []string{"-fpack-struct", "-fpack-struct=2"} {
			cc, flags := cc, flags
			testtool.Check(t, cc+flags, []string{cc}, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				src, _ := filepath.Abs("../../testdata/dialect/sizes.c")
				mustRun(t, dir, nil, cc, "-w", flags, src, "-o", "plain")
				r := mustRun(t, dir, []string{"WEAVE_CC=" + cc}, weaveBin, "cc", "-w", flags, src, "-o", "woven")
				if want := "weave: warning: " + src + ": not woven: " + flags + " changes the layout of weave's runtime interface\n"; r.stderr != want {
					t.Errorf("stderr %q, want %q", r.stderr, want)
				}
				sameRun(t, "sizes", run(t, dir, nil, "./plain"), run(t, dir, []string{"WEAVE_OUT="}, "./woven"))
			})
		}
		for _, flags := range [][]string{nil, {"-fshort-enums"}, {"-fpack-struct=8"}} {
			cc, flags := cc, flags
			testtool.Check(t, cc+strings.Join(flags, ""), []string{cc}, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				src, _ := filepath.Abs("../../testdata/dialect/sizes.c")
				env := []string{"WEAVE_CC=" + cc, "WEAVE_STRICT=1"}
				mustRun(t, dir, nil, append(append([]string{cc, "-w"}, flags...), src, "-o", "plain")...)
				mustRun(t, dir, env, append(append([]string{weaveBin, "cc", "-w"}, flags...), src, "-o", "woven")...)
				want := run(t, dir, nil, "./plain")
				got := run(t, dir, []string{"WEAVE_OUT=w.prof"}, "./woven")
				sameRun(t, "sizes", want, got)
				p, err := profile.ReadFile(filepath.Join(dir, "w.prof"))
				if err != nil {
					t.Fatal(err)
				}
				sizes := map[string]uint64{}
				for _, s := range p.Sites {
					if s.Op == "malloc" {
						sizes[s.Type] = s.TypeSize
					}
				}
				for _, l := range strings.Split(strings.TrimSpace(want.stdout), "\n") {
					typ, size, _ := strings.Cut(l, "=")
					if typ == "struct local" { // cc/v4's size, right here
						continue
					}
					if got := fmt.Sprint(sizes[typ]); got != size {
						t.Errorf("site of sizeof(%s) records %s, the compiler says %s", typ, got, size)
					}
				}
			})
		}
	}
}
