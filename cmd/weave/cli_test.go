package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/tracepoints"
)

// TestCLIMisuse: a command used wrongly prints one error line and its
// usage line (not its whole help) and exits 2; an error that is not a
// misuse is one line naming the file once.
func TestCLIMisuse(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notadir"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string // regexp of the whole of stderr
	}{
		{[]string{"trace"}, 2, `^weave: trace: no process id\nusage: weave trace .*PID PATTERN.*\n$`},
		{[]string{"trace", "abc", "f"}, 2, `^weave: trace: "abc" is not a process id\nusage: weave trace .*\n$`},
		{[]string{"merge", "a.prof"}, 2, `^weave: merge: no output: -o OUT names the merged profile\nusage: weave merge -o OUT PROFILE\.\.\. \(weave help merge lists its flags\)\n$`},
		{[]string{"report", "--bogus"}, 2, `^weave: report: unknown flag --bogus\nusage: weave report \[options\] \[profile\] \(weave help report lists its flags\)\n$`},
		{[]string{"report", "-x"}, 2, `^weave: report: unknown flag -x\nusage: weave report .*\n$`},
		{[]string{"snapshot", "-1"}, 2, `^weave: snapshot: unknown flag -1\nusage: weave snapshot .*\n$`},
		{[]string{"report", "-o"}, 2, `^weave: report: -o needs a value\nusage: weave report .*\n$`},
		{[]string{"cc", "x.c", "--frame"}, 1, `^weave: --frame needs a value\n$`},
		{[]string{"cc", "x.c", "--alloc"}, 1, `^weave: --alloc needs a value\n$`},
		{[]string{"cc", "x.c", "--frames"}, 1, `^weave: --frames needs a value \(auto, unit or all\)\n$`},
		{[]string{"-o", "o.c", "x.c", "--frames"}, 1, `^weave: --frames needs a value \(auto, unit or all\)\n$`},
		{[]string{"go", "build", "--frames"}, 2, `^weave: go: --frames needs a value \(auto or all\)\nusage: weave go build.*\n$`},
		{[]string{"api", "-o", "inc/weave_api.h"}, 1, `^weave: api: -o inc/weave_api\.h: want a directory, where weave_api\.h is written \(the header alone: weave api > FILE\)\n$`},
		{[]string{"api", "-o", "notadir"}, 1, `^weave: api: -o notadir: want a directory`},
		{[]string{"report", "--between", "A", "notadir"}, 2, `^weave: report: --between A B: "notadir" is a file: give both marks, then the profile \(--between A B PROFILE\)\nusage: weave report .*\n$`},
		{[]string{"report", "--depth"}, 2, `^weave: report: --depth needs a value\nusage: weave report .*\n$`},
		{[]string{"report", "--format", "nope", "x.prof"}, 2, `^weave: report: unknown format "nope" .*\nusage: weave report .*\n$`},
		{[]string{"diff", "a.prof"}, 2, `^weave: diff: want two profiles, BASE and NEW\nusage: weave diff \[options\] BASE NEW .*\n$`},
		{[]string{"maps"}, 2, `^weave: maps: want one process id\nusage: weave maps PID\n$`},
		{[]string{"go"}, 2, `^weave: go: which go command\? .*\nusage: weave go build.*\n$`},
		{[]string{"toolexec"}, 2, `^weave: toolexec: no tool to run .*\nusage: go build -toolexec=.*\n$`},
		{[]string{"help", "nosuch"}, 2, `^weave: help: no command "nosuch" \(weave help lists them\)\nusage: weave help \[COMMAND\]\n$`},
		{[]string{}, 2, `^weave: no input file\nusage: weave \[-v\] .*\n$`},
		{[]string{"--frobnicate", "x.c"}, 2, `^weave: unknown flag --frobnicate \(compiler flags take one dash\)\nusage: weave .*\n$`},
		{[]string{"check", "nosuch.prof"}, 2, `^weave: check: nosuch\.prof: no such file or directory\n$`},
		{[]string{"check", "--suppressions", "nosuch.supp", "x.prof"}, 2, `^weave: check: nosuch\.supp: no such file or directory\n$`},
		{[]string{"maps", "2147483646"}, 1, `^weave: maps: no process 2147483646\n$`},
		{[]string{"report", "nosuch.prof"}, 1, `^weave: nosuch\.prof: no such file or directory\n$`},
		{[]string{"diff", "nosuch.prof", "other.prof"}, 1, `^weave: nosuch\.prof: no such file or directory\n$`},
		{[]string{"merge", "-o", "m.prof", "nosuch.prof"}, 1, `^weave: nosuch\.prof: no such file or directory\n$`},
	} {
		r := run(t, dir, nil, append([]string{weaveBin}, tc.args...)...)
		if r.code != tc.code || !regexp.MustCompile(tc.stderr).MatchString(r.stderr) || r.stdout != "" {
			t.Errorf("weave %s: exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr matching %s", strings.Join(tc.args, " "), r.code, r.stdout, r.stderr, tc.code, tc.stderr)
		}
	}
}

// TestCLIHelp: weave help, weave help COMMAND and COMMAND --help list
// the commands and each command's flags, on stdout, exit 0; every
// command refuses an unknown flag with its usage line; weave toolexec
// --help is help, not a tool to run; weave cc --help lists weave's own
// flags and leaves --help=CLASS to the compiler.
func TestCLIHelp(t *testing.T) {
	dir := t.TempDir()
	app := newApp()
	top := mustRun(t, dir, nil, weaveBin, "help")
	if all := mustRun(t, dir, nil, weaveBin, "--help"); all.stdout != top.stdout {
		t.Errorf("weave --help differs from weave help")
	}
	for _, c := range app.Commands {
		if !regexp.MustCompile(`(?m)^   ` + c.Name + ` +\S`).MatchString(top.stdout) {
			t.Errorf("weave help does not list %s:\n%s", c.Name, top.stdout)
		}
		h := mustRun(t, dir, nil, weaveBin, "help", c.Name)
		if self := mustRun(t, dir, nil, weaveBin, c.Name, "--help"); c.Name != "help" && self.stdout != h.stdout &&
			!(c.Name == "cc" && strings.HasSuffix(self.stdout, "\n"+h.stdout)) { // cc's after the compiler's
			t.Errorf("weave %s --help differs from weave help %s:\n%s\n---\n%s", c.Name, c.Name, self.stdout, h.stdout)
		}
		if !strings.Contains(h.stdout, usageLine(c)) {
			t.Errorf("weave help %s does not show its usage %q:\n%s", c.Name, usageLine(c), h.stdout)
		}
		for _, f := range c.Flags {
			if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
				continue
			}
			name := "--" + f.Names()[0]
			if len(name) == 3 {
				name = name[1:] // -o
			}
			if !strings.Contains(h.stdout, "   "+name+" ") {
				t.Errorf("weave help %s does not list %s:\n%s", c.Name, name, h.stdout)
			}
		}
		if c.SkipFlagParsing {
			continue // the others' flags: the compiler's, go's
		}
		r := run(t, dir, nil, weaveBin, c.Name, "--no-such-flag")
		want := fmt.Sprintf("weave: %s: unknown flag --no-such-flag\nusage: %s", c.Name, usageLine(c))
		if r.code != 2 || !strings.HasPrefix(r.stderr, want) || strings.Count(r.stderr, "\n") != 2 {
			t.Errorf("weave %s --no-such-flag: exit %d, stderr:\n%s\nwant exit 2 and %q", c.Name, r.code, r.stderr, want)
		}
	}

	cc := mustRun(t, dir, nil, weaveBin, "cc", "--help")
	for _, f := range []string{"--frames", "--alloc", "--calloc", "--realloc", "--free", "--exclude", "--include", "--exclude-file", "--weave-verbose", "--help=common"} {
		if !strings.Contains(cc.stdout, f) {
			t.Errorf("weave cc --help does not mention %s:\n%s", f, cc.stdout)
		}
	}
	testtool.Need(t, "gcc")
	gcc := mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--help=common")
	want := mustRun(t, dir, nil, "gcc", "--help=common")
	if gcc.stdout != want.stdout {
		t.Errorf("weave cc --help=common is not gcc's --help=common:\n%.300s", gcc.stdout)
	}
	// configure scripts read the compiler's options in its --help (curl's
	// `$CC --help --verbose | grep fvisibility=`, without which a woven
	// libcurl exported every symbol): the compiler's help comes first,
	// whole, then weave's flags.
	gcc = mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--help", "--verbose")
	want = mustRun(t, dir, nil, "gcc", "--help", "--verbose")
	if rest, ok := strings.CutPrefix(gcc.stdout, want.stdout); !ok || !strings.Contains(want.stdout, "-fvisibility=") || !strings.HasPrefix(rest, "usage: weave cc") {
		t.Errorf("weave cc --help --verbose is not gcc's --help --verbose, then weave's flags:\n%.300s", gcc.stdout)
	}
}

// TestCLIVersion: weave version and weave --version print weave's version
// and the versions of the formats it reads; the runtime ABI is the one a
// woven program writes in its profile (M runtime).
func TestCLIVersion(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	v := mustRun(t, dir, nil, weaveBin, "version")
	if dashed := mustRun(t, dir, nil, weaveBin, "--version"); dashed.stdout != v.stdout {
		t.Errorf("weave --version %q, weave version %q", dashed.stdout, v.stdout)
	}
	m := regexp.MustCompile(`^weave \S.* go\S+ \w+/\w+\nprofile format (\d+)\nruntime ABI (\d+)\ntrace format (\d+)\n$`).FindStringSubmatch(v.stdout)
	if m == nil {
		t.Fatalf("weave version printed:\n%s", v.stdout)
	}
	if m[1] != fmt.Sprint(profile.Version) || m[3] != fmt.Sprint(tracepoints.FormatVersion) {
		t.Errorf("weave version: profile format %s, trace format %s; want %d, %d", m[1], m[3], profile.Version, tracepoints.FormatVersion)
	}
	os.WriteFile(filepath.Join(dir, "p.c"), []byte("#include <stdlib.h>\nint main(void) { free(malloc(8)); return 0; }\n"), 0o644)
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-o", "p", "p.c")
	mustRun(t, dir, []string{"WEAVE_OUT=p.prof"}, "./p")
	prof, err := os.ReadFile(filepath.Join(dir, "p.prof"))
	if err != nil {
		t.Fatal(err)
	}
	if abi := regexp.MustCompile(`(?m)^M runtime (\d+)$`).FindSubmatch(prof); abi == nil || string(abi[1]) != m[2] {
		t.Errorf("weave version says runtime ABI %s; the profile says %q", m[2], abi)
	}
	if !strings.HasPrefix(string(prof), fmt.Sprintf("weave profile %s\n", m[1])) {
		t.Errorf("weave version says profile format %s; the profile starts %.20q", m[1], prof)
	}
}

// TestCLIVerbose: weave cc --weave-verbose and WEAVE_VERBOSE=1 list the
// functions left frameless as weave -v does; without them weave cc is
// silent; weave cc -v is the compiler's.
func TestCLIVerbose(t *testing.T) {
	dir, env := widgetsDir(t)
	want := mustRun(t, dir, env, weaveBin, "-v", "-o", "w.c", "widgets.c").stderr
	if !strings.Contains(want, "frameless") {
		t.Fatalf("weave -v printed %q, want frameless functions", want)
	}
	if r := mustRun(t, dir, env, weaveBin, "cc", "-c", "-o", "w.o", "widgets.c"); r.stderr != "" {
		t.Errorf("weave cc printed %q", r.stderr)
	}
	for _, r := range []result{
		mustRun(t, dir, env, weaveBin, "cc", "--weave-verbose", "-c", "-o", "w.o", "widgets.c"),
		mustRun(t, dir, append(env, "WEAVE_VERBOSE=1"), weaveBin, "cc", "-c", "-o", "w.o", "widgets.c"),
	} {
		if r.stderr != want {
			t.Errorf("weave cc verbose printed:\n%s\nwant weave -v's:\n%s", r.stderr, want)
		}
	}
	if r := mustRun(t, dir, env, weaveBin, "cc", "-v", "-c", "-o", "w.o", "widgets.c"); !strings.Contains(r.stderr, "gcc version") {
		t.Errorf("weave cc -v did not reach gcc:\n%.300s", r.stderr)
	}
}

// TestCLIIgnoredFlags: a report flag the format does nothing with says
// so, once; WEAVE_FLAGS is split as a shell splits words.
func TestCLIIgnoredFlags(t *testing.T) {
	dir, env := widgetsDir(t)
	mustRun(t, dir, env, weaveBin, "cc", "-o", "w", "widgets.c")
	mustRun(t, dir, []string{"WEAVE_OUT=w.prof"}, "./w", "1000")
	for _, tc := range []struct {
		args []string
		warn string
	}{
		{[]string{"--format", "pprof", "--tables", "leaks"}, "weave: warning: --tables does nothing with --format pprof\n"},
		{[]string{"--format", "folded", "--depth", "2", "--sites"}, "weave: warning: --depth, --sites do nothing with --format folded\n"},
		{[]string{"--quantity", "allocs"}, "weave: warning: --quantity does nothing with --format text\n"},
		{[]string{"--format", "folded", "--quantity", "allocs"}, ""},
		{[]string{"--tables", "leaks"}, ""},
	} {
		r := mustRun(t, dir, nil, append(append([]string{weaveBin, "report", "-o", "out"}, tc.args...), "w.prof")...)
		if r.stderr != tc.warn {
			t.Errorf("weave report %s: stderr %q, want %q", strings.Join(tc.args, " "), r.stderr, tc.warn)
		}
	}

	excluded := regexp.MustCompile(`(?m)^weave: \S+: make_widget frameless: excluded$`)
	for _, flags := range []string{`--exclude 'make_*'`, `--exclude "make_*"`, `--exclude make_\*`, `--exclude=make_*`} {
		r := mustRun(t, dir, append(env, "WEAVE_FLAGS="+flags), weaveBin, "-v", "-o", "x.c", "widgets.c")
		if !excluded.MatchString(r.stderr) {
			t.Errorf("WEAVE_FLAGS=%s: make_widget not excluded:\n%s", flags, r.stderr)
		}
	}
}

// widgetsDir is a directory holding testdata/widgets.c, and the
// environment that weaves it with gcc.
func widgetsDir(t *testing.T) (string, []string) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src, err := os.ReadFile("../../testdata/widgets.c")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "widgets.c"), src, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir, []string{"WEAVE_CC=gcc"}
}

// TestCLIStdinSource: `weave -o out.c -` weaves the source read from
// standard input, as `cc -x c -` compiles it; the woven file builds and
// runs as the plain program.
func TestCLIStdinSource(t *testing.T) {
	dir, env := widgetsDir(t)
	src, err := os.Open(filepath.Join(dir, "widgets.c"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	cmd := exec.Command(weaveBin, "-o", "woven.c", "-")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, append(os.Environ(), env...), src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("weave -o woven.c - < widgets.c: %v\n%s", err, out)
	}
	mustRun(t, dir, env, weaveBin, "runtime", "-o", "rt.c")
	mustRun(t, dir, nil, "gcc", "woven.c", "rt.c", "-o", "woven", "-lpthread")
	mustRun(t, dir, nil, "gcc", "widgets.c", "-o", "plain")
	woven := run(t, dir, []string{"WEAVE_OUT=w.prof"}, "./woven", "100")
	sameRun(t, "widgets from stdin", run(t, dir, nil, "./plain", "100"), woven)
	if !hasSummary(woven.stderr) {
		t.Errorf("the program woven from standard input wrote no profile summary:\n%s", woven.stderr)
	}
}
