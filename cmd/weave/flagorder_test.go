package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestFlagsFirst: every flag of every subcommand that parses its flags
// moves before the positional arguments, with its value; "--" ends the
// flags.
func TestFlagsFirst(t *testing.T) {
	app := newApp()
	for _, cmd := range app.Commands {
		if cmd.SkipFlagParsing {
			continue
		}
		for _, f := range cmd.Flags {
			name := "--" + f.Names()[0]
			in := []string{"weave", cmd.Name, "pos", name}
			want := []string{"weave", cmd.Name, name}
			if takesValue(cmd, f.Names()[0]) {
				in = append(in, "val")
				want = append(want, "val")
			}
			want = append(want, "pos")
			if got := flagsFirst(app, in); !slices.Equal(got, want) {
				t.Errorf("flagsFirst(%q) = %q, want %q", in, got, want)
			}
		}
	}
	for _, c := range []struct{ in, want []string }{
		{[]string{"weave", "report", "p", "--format=json", "-o", "x", "--", "--sites"},
			[]string{"weave", "report", "--format=json", "-o", "x", "--", "p", "--sites"}},
		{[]string{"weave", "report", "-"}, []string{"weave", "report", "--", "-"}},
		{[]string{"weave", "cc", "x.c", "-o", "x"}, []string{"weave", "cc", "x.c", "-o", "x"}},
		{[]string{"weave", "-o", "x.woven.c", "x.c"}, []string{"weave", "-o", "x.woven.c", "x.c"}},
	} {
		if got := flagsFirst(app, c.in); !slices.Equal(got, c.want) {
			t.Errorf("flagsFirst(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestFlagsAfterArgs runs each way of calling weave with its flags after
// its other arguments, as users type them, and checks the result is the
// flags-first one. Every subcommand must have a case here.
func TestFlagsAfterArgs(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte("#include <stdlib.h>\nint main(void) { return malloc(X) == 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"WEAVE_CC=gcc"}
	prof, _ := filepath.Abs("../../report/testdata/widget.prof")
	cases := map[string]func(t *testing.T){
		"": func(t *testing.T) { // weave prog.c -o out.c [cc flags]
			mustRun(t, dir, env, weaveBin, "p.c", "-o", "w.c", "-DX=3")
			if b, err := os.ReadFile(filepath.Join(dir, "w.c")); err != nil || !strings.Contains(string(b), "(3)") {
				t.Errorf("w.c: %v, -DX=3 not applied", err)
			}
		},
		"cc": func(t *testing.T) {
			mustRun(t, dir, env, weaveBin, "cc", "p.c", "-o", "p", "-DX=4")
			if r := run(t, dir, []string{"WEAVE_OUT="}, filepath.Join(dir, "p")); r.code != 0 || !strings.Contains(r.stderr, "4 bytes in 1 blocks") {
				t.Errorf("p: exit %d\n%s", r.code, r.stderr)
			}
		},
		"report": func(t *testing.T) {
			for _, flags := range [][]string{{"--format", "json", "--depth", "2", "--sites"}, {"--format=json"}, {"--tables", "leaks"}} {
				want := mustRun(t, dir, nil, slices.Concat([]string{weaveBin, "report"}, flags, []string{prof})...).stdout
				got := mustRun(t, dir, nil, slices.Concat([]string{weaveBin, "report", prof}, flags)...).stdout
				if got != want || want == "" {
					t.Errorf("weave report %s %s: output differs from the flags-first one:\n%s\nwant:\n%s", prof, strings.Join(flags, " "), got, want)
				}
			}
			// --between takes two marks (the profile has none: the same error either way).
			want, got := run(t, dir, nil, weaveBin, "report", "--between", "a", "b", prof), run(t, dir, nil, weaveBin, "report", prof, "--between", "a", "b")
			if got != want || !strings.Contains(got.stderr, `mark "a": the profile has no marks`) {
				t.Errorf("weave report P --between a b: %+v, flags first: %+v", got, want)
			}
			mustRun(t, dir, nil, weaveBin, "report", prof, "--format", "json", "-o", "r.json")
			if b, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil || !strings.HasPrefix(string(b), "{") {
				t.Errorf("report -o after the profile: %v %.40q", err, b)
			}
		},
		"diff": func(t *testing.T) {
			want := mustRun(t, dir, nil, weaveBin, "diff", "--format", "json", "--top", "3", prof, prof).stdout
			got := mustRun(t, dir, nil, weaveBin, "diff", prof, prof, "--format", "json", "--top", "3").stdout
			if got != want || !strings.HasPrefix(want, "{") {
				t.Errorf("weave diff A B --format json: output differs from the flags-first one:\n%s\nwant:\n%s", got, want)
			}
		},
		"merge": func(t *testing.T) {
			mustRun(t, dir, nil, weaveBin, "merge", "-o", "m1.prof", prof, prof)
			mustRun(t, dir, nil, weaveBin, "merge", prof, prof, "-o", "m2.prof")
			a, _ := os.ReadFile(filepath.Join(dir, "m1.prof"))
			b, err := os.ReadFile(filepath.Join(dir, "m2.prof"))
			if err != nil || len(a) == 0 || string(a) != string(b) {
				t.Errorf("weave merge A B -o OUT: %v, or its profile differs from the flags-first one", err)
			}
		},
		"maps": func(t *testing.T) { // no flags: one after the pid is a flag, not an argument
			pid := strconv.Itoa(os.Getpid())
			if r := mustRun(t, dir, nil, weaveBin, "maps", pid); !strings.Contains(r.stdout, "total") {
				t.Errorf("weave maps %s:\n%s", pid, r.stdout)
			}
			if r := run(t, dir, nil, weaveBin, "maps", pid, "--bogus"); r.code == 0 || !strings.Contains(r.stderr, "unknown flag --bogus") {
				t.Errorf("weave maps %s --bogus: exit %d\n%s", pid, r.code, r.stderr)
			}
		},
		"runtime": func(t *testing.T) { // no positional argument: -o works, a stray argument is an error
			mustRun(t, dir, nil, weaveBin, "runtime", "-o", "rt.c")
			if fi, err := os.Stat(filepath.Join(dir, "rt.c")); err != nil || fi.Size() == 0 {
				t.Errorf("runtime -o rt.c: %v", err)
			}
			if r := run(t, dir, nil, weaveBin, "runtime", "extra", "-o", "rt2.c"); r.code == 0 || !strings.Contains(r.stderr, `unexpected argument "extra"`) {
				t.Errorf("runtime extra: exit %d\n%s", r.code, r.stderr)
			}
		},
		"api": func(t *testing.T) { // no positional argument: -o works, a stray argument is an error
			mustRun(t, dir, nil, weaveBin, "api", "-o", "inc")
			if fi, err := os.Stat(filepath.Join(dir, "inc", "weave_api.h")); err != nil || fi.Size() == 0 {
				t.Errorf("api -o inc: %v", err)
			}
			if r := run(t, dir, nil, weaveBin, "api", "extra", "-o", "inc2"); r.code == 0 || !strings.Contains(r.stderr, `unexpected argument "extra"`) {
				t.Errorf("api extra: exit %d\n%s", r.code, r.stderr)
			}
		},
		"version": func(t *testing.T) { // no argument; its output is TestCLIVersion's
			mustRun(t, dir, nil, weaveBin, "version")
			if r := run(t, dir, nil, weaveBin, "version", "extra"); r.code != 2 || !strings.Contains(r.stderr, `unexpected argument "extra"`) {
				t.Errorf("weave version extra: exit %d\n%s", r.code, r.stderr)
			}
		},
		"check": func(t *testing.T) {
			want := run(t, dir, nil, weaveBin, "check", "--leak-kinds", "all", prof)
			got := run(t, dir, nil, weaveBin, "check", prof, "--leak-kinds", "all")
			if got != want || strings.Contains(got.stderr, "too many") {
				t.Errorf("weave check P --leak-kinds all: %+v, flags first: %+v", got, want)
			}
		},
		"trace": func(t *testing.T) { // --off after the pid is a flag, not a pattern
			pid := strconv.Itoa(os.Getpid())
			r := run(t, dir, nil, weaveBin, "trace", pid, "--off", "--timeout", "1s")
			if r.code == 0 || !strings.Contains(r.stderr, "not a woven program") {
				t.Errorf("weave trace %s --off: exit %d\n%s", pid, r.code, r.stderr)
			}
		},
		"mark": func(t *testing.T) { // --timeout after the label is a flag
			pid := strconv.Itoa(os.Getpid())
			r := run(t, dir, nil, weaveBin, "mark", pid, "here", "--timeout", "1s")
			if r.code == 0 || !strings.Contains(r.stderr, "not a woven program") {
				t.Errorf("weave mark %s here --timeout 1s: exit %d\n%s", pid, r.code, r.stderr)
			}
		},
		"snapshot": func(t *testing.T) {
			pid := strconv.Itoa(os.Getpid())
			r := run(t, dir, nil, weaveBin, "snapshot", pid, "--timeout", "1s")
			if r.code == 0 || !strings.Contains(r.stderr, "not a woven program") {
				t.Errorf("weave snapshot %s --timeout 1s: exit %d\n%s", pid, r.code, r.stderr)
			}
		},
		"go": func(t *testing.T) { // go's own flags pass through; --packages anywhere
			want := mustRun(t, ".", nil, weaveBin, "go", "list", "--packages", "fmt", "-f", "{{.ImportPath}}", "fmt").stdout
			got := mustRun(t, ".", nil, weaveBin, "go", "list", "-f", "{{.ImportPath}}", "--packages", "fmt", "fmt").stdout
			if got != want || strings.TrimSpace(got) != "fmt" {
				t.Errorf("weave go list ... --packages fmt fmt: %q, flags first: %q", got, want)
			}
		},
		"toolexec": func(t *testing.T) { // the tool's arguments pass through; --packages anywhere
			want := mustRun(t, dir, nil, weaveBin, "toolexec", "--packages", "x", "echo", "hello", "-b").stdout
			got := mustRun(t, dir, nil, weaveBin, "toolexec", "echo", "hello", "-b", "--packages", "x").stdout
			if got != want || strings.TrimSpace(got) != "hello -b" {
				t.Errorf("weave toolexec echo hello -b --packages x: %q, flags first: %q", got, want)
			}
		},
	}
	for _, cmd := range append([]*cli.Command{{Name: ""}}, newApp().Commands...) {
		if cmd.Name == "help" {
			continue
		}
		f, ok := cases[cmd.Name]
		if !ok {
			t.Errorf("subcommand %q has no case in TestFlagsAfterArgs", cmd.Name)
			continue
		}
		t.Run("cmd="+cmd.Name, f)
	}
}
