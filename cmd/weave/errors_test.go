package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestBadInput checks that bad input gets one clear, positioned error, a
// non-zero exit and leaves no output behind.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	syntax := write("syntax.c", "#include <stdio.h>\nint main(void)\n{\n\tint x = ;\n\treturn 0;\n}\n")
	garbage := write("garbage.prof", "this is not a profile\n")
	out := filepath.Join(dir, "out.c")
	empty := write("empty.prof", "weave profile 1\nE 0\n")
	binary := write("binary.c", "\x7fELF\x02\x01\x01\x00\x00\x00int main(void) { return 0; }\n")
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name string
		args []string
		want string   // regexp the first stderr line must match
		env  []string // extra environment
	}{
		{"syntax error", []string{"-o", out, syntax}, `^.*syntax\.c:4:\d+: error: .+`, nil},
		{"missing input", []string{"-o", out, filepath.Join(dir, "nope.c")}, `^weave: .*nope\.c: no such file$`, nil},
		{"unknown flag", []string{"--frobnicate", "-o", out, syntax}, `^weave: unknown flag --frobnicate`, nil},
		{"no input", []string{"-o", out}, `^weave: no input file`, nil},
		{"bad --frames", []string{"--frames=some", "-o", out, syntax}, `^weave: unknown frame policy "some" \(want auto, unit or all\)$`, nil},
		{"bad WEAVE_FRAMES", []string{"cc", "-c", syntax, "-o", out}, `^weave: WEAVE_FRAMES: unknown frame policy "x"`, []string{"WEAVE_FRAMES=x"}},
		{"bad WEAVE_PARSE_TIMEOUT", []string{"-o", out, syntax}, `^weave: WEAVE_PARSE_TIMEOUT: "soon" is not a number of seconds$`, []string{"WEAVE_PARSE_TIMEOUT=soon"}},
		{"directory input", []string{"-o", out, filepath.Join(dir, "adir")}, `^weave: .*adir: is a directory$`, nil},
		{"binary input", []string{"-o", out, binary}, `^weave: .*binary\.c: a binary file \(NUL bytes\), not C source$`, nil},
		{"-M", []string{"-o", out, syntax, "-M"}, `^weave: -M prints dependencies instead of the preprocessed unit: use -MD or -MMD with weave -o, or weave cc -M$`, nil},
		{"-MM", []string{"-o", out, syntax, "-MM", "-MF", filepath.Join(dir, "deps")}, `^weave: -MM prints dependencies instead`, nil},
		{"mistyped command", []string{"reprot", garbage}, `^weave: reprot: no such command or file \(weave --help lists the commands\)$`, nil},
		{"mistyped command alone", []string{"reprot"}, `^weave: reprot: no such command or file`, nil},
		{"trace --timeout 0", []string{"trace", "--timeout", "0s", "1", "main"}, `^weave: trace: --timeout 0s: want a positive duration$`, nil},
		{"snapshot --timeout -1s", []string{"snapshot", "--timeout", "-1s", "1"}, `^weave: snapshot: --timeout -1s: want a positive duration$`, nil},
		{"mark --timeout 0", []string{"mark", "--timeout", "0s", "1", "here"}, `^weave: mark: --timeout 0s: want a positive duration$`, nil},
		{"go --packages last", []string{"go", "build", "--packages"}, `^weave: go: --packages needs patterns \(comma-separated\)$`, nil},
		{"go --packages=", []string{"go", "build", "--packages=", "."}, `^weave: go: --packages needs patterns \(comma-separated\)$`, nil},
		{"report --tables bogus", []string{"report", "--tables", "bogus", garbage}, `^weave: report: unknown table "bogus" \(want leaks, `, nil},
		{"report --threshold 500", []string{"report", "--threshold", "500", garbage}, `^weave: report: --threshold 500: want a percentage, 0 to 100$`, nil},
		{"report --threshold NaN", []string{"report", "--threshold", "NaN", garbage}, `^weave: report: --threshold NaN: want a percentage, 0 to 100$`, nil},
		{"report --quantity zz", []string{"report", "--quantity", "zz", garbage}, `^weave: report: unknown quantity "zz" \(want bytes_allocated, `, nil},
		{"report --leak-kinds zz", []string{"report", "--leak-kinds", "zz", garbage}, `^weave: report: --leak-kinds: unknown leak kind "zz"`, nil},
		{"merge -", []string{"merge", "-o", filepath.Join(dir, "m.prof"), garbage, "-"}, `^weave: merge: - \(standard input\): merge reads profile files; name them$`, nil},
		{"missing compiler, cc", []string{"cc", "-c", syntax, "-o", out}, `^weave: no-such-cc: compiler not found \(WEAVE_CC names it\)$`, []string{"WEAVE_CC=no-such-cc"}},
		{"missing compiler, -o", []string{"-o", out, syntax}, `^weave: no-such-cc: compiler not found \(WEAVE_CC names it\)$`, []string{"WEAVE_CC=no-such-cc"}},
		{"trailing -I", []string{"-o", out, syntax, "-I"}, `^weave: -I needs a value$`, nil},
		{"trailing -include", []string{"-o", out, syntax, "-include"}, `^weave: -include needs a value$`, nil},
		{"check --suppressions DIR", []string{"check", "--suppressions", filepath.Join(dir, "adir"), empty}, `^weave: check: [^ ]*adir: is a directory$`, nil},
		{"report --group module:DIR", []string{"report", "--group", "module:" + filepath.Join(dir, "adir"), empty}, `^weave: --group module:[^ ]*adir: is a directory$`, nil},
		{"report --group module:MISSING", []string{"report", "--group", "module:" + filepath.Join(dir, "nomods"), empty}, `^weave: --group module:[^ ]*nomods: no such file or directory$`, nil},
		{"command after -v", []string{"-v", "cc", "-c", syntax}, `^weave: cc is a command: it comes first \(weave cc \.\.\.\)$`, nil},
		{"garbage profile", []string{"report", garbage}, `^weave: .*garbage\.prof: not a weave profile`, nil},
		{"a program for its profile", []string{"report", weaveBin}, `^weave: .*weave: a program, not a profile, and not woven: build it with weave cc`, nil},
		{"missing profile", []string{"report", filepath.Join(dir, "none.prof")}, `^weave: .*none\.prof`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, dir, tc.env, append([]string{weaveBin}, tc.args...)...)
			if r.code == 0 {
				t.Fatalf("exit 0, want failure; stderr:\n%s", r.stderr)
			}
			first := strings.SplitN(r.stderr, "\n", 2)[0]
			if !regexp.MustCompile(tc.want).MatchString(first) {
				t.Errorf("stderr first line %q does not match %q; all:\n%s", first, tc.want, r.stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s left behind", out)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".out.c*")); len(m) > 0 {
				t.Errorf("temporary files left behind: %v", m)
			}
		})
	}
}

// TestParseWatchdog: a parse that does not finish (cc/v4 loops on
// testdata/errors/asmfield.c in gnu mode) is given up after
// WEAVE_PARSE_TIMEOUT: `weave -o` fails with a clear error and leaves no
// output; `weave cc` compiles the unit unwoven, so the compiler reports
// the file's error as it would have; a valid unit whose parse runs out of
// time is built unwoven with a warning and runs as the plain build. Each
// command runs under a time limit of its own: a hang fails the test.
func TestParseWatchdog(t *testing.T) {
	t.Parallel()
	src, _ := filepath.Abs("../../testdata/errors/asmfield.c")
	valid, _ := filepath.Abs("../../testdata/widgets.c")
	bounded := func(t *testing.T, dir string, env []string, argv ...string) result {
		t.Helper()
		return runWithin(t, 90*time.Second, dir, env, argv...)
	}
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			env := []string{"WEAVE_CC=" + cc, "WEAVE_PARSE_TIMEOUT=2"}
			out := filepath.Join(dir, "out.c")
			r := bounded(t, dir, env, weaveBin, "-o", out, src)
			// The loop grows memory: the memory bound may stop it before the
			// time limit, depending on the machine's speed.
			byTime := "weave: " + src + ": parse did not finish in 2 s\n"
			byMemory := regexp.MustCompile(`^weave: ` + regexp.QuoteMeta(src) + `: parse did not finish: after [0-9.]+ s it held [0-9]+ MB of memory for 1 KB of text \(a loop in the parser\)\n$`)
			if r.code == 0 || r.stderr != byTime && !byMemory.MatchString(r.stderr) {
				t.Errorf("weave -o: exit %d, stderr %q; want %q or the memory bound's message", r.code, r.stderr, byTime)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*out.c*")); len(m) > 0 {
				t.Errorf("left behind: %v", m)
			}
			plain := run(t, dir, nil, cc, "-c", src, "-o", "plain.o")
			r = bounded(t, dir, env, weaveBin, "cc", "-c", src, "-o", "woven.o")
			if plain.code == 0 || r.code != plain.code || r.stderr != plain.stderr {
				t.Errorf("weave cc: exit %d, stderr:\n%s\nwant the compiler's: exit %d\n%s", r.code, r.stderr, plain.code, plain.stderr)
			}
			// In ISO C mode asm is an identifier: the unit parses and is woven.
			r = bounded(t, dir, append(env, "WEAVE_STRICT=1"), weaveBin, "cc", "-std=c99", "-c", src, "-o", "c99.o")
			if r.code != 0 {
				t.Errorf("weave cc -std=c99: exit %d\n%s", r.code, r.stderr)
			}
			// A valid unit given no time: built unwoven, with a warning. No
			// woven cache: another test's build of widgets.c would be served
			// from it, without a parse.
			env = []string{"WEAVE_CC=" + cc, "WEAVE_PARSE_TIMEOUT=0.000001", "WEAVE_CACHE=off"}
			r = bounded(t, dir, env, weaveBin, "cc", valid, "-o", "widgets")
			if want := "weave: warning: " + valid + ": not woven: " + valid + ": parse did not finish in 1e-06 s\n"; r.code != 0 || r.stderr != want {
				t.Errorf("weave cc: exit %d, stderr %q; want %q", r.code, r.stderr, want)
			}
			mustRun(t, dir, nil, cc, valid, "-o", "widgets.plain")
			sameRun(t, "widgets", run(t, dir, nil, "./widgets.plain"), run(t, dir, []string{"WEAVE_OUT="}, "./widgets"))
		})
	}
}

// TestDamagedProfile: a real profile whose record tag was damaged (a
// digit, a minus, a number) is refused at its line, not skipped as a newer
// writer's record (which would drop the record and report wrong totals);
// a damaged trace file beside it is named in the perfetto export's error.
func TestDamagedProfile(t *testing.T) {
	dir, env := widgetsDir(t)
	mustRun(t, dir, env, weaveBin, "cc", "-o", "w", "widgets.c")
	mustRun(t, dir, []string{"WEAVE_OUT=w.prof"}, "./w", "100")
	data, err := os.ReadFile(filepath.Join(dir, "w.prof"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	at := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "X ") {
			at = i
			break
		}
	}
	if at < 0 {
		t.Fatal("no X record in the profile")
	}
	for _, tag := range []string{"0", "-1", "18446744073709551615", "X1"} {
		bad := append([]string{}, lines...)
		bad[at] = tag + strings.TrimPrefix(lines[at], "X")
		if err := os.WriteFile(filepath.Join(dir, "bad.prof"), []byte(strings.Join(bad, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("weave: bad.prof:%d:1: bad record tag %q (want letters)\n", at+1, tag)
		for _, cmd := range [][]string{{"report"}, {"merge", "-o", "m.prof"}} {
			r := run(t, dir, nil, append(append([]string{weaveBin}, cmd...), "bad.prof")...)
			if r.code == 0 || r.stderr != want {
				t.Errorf("weave %s with tag %q: exit %d, stderr %q; want %q", cmd[0], tag, r.code, r.stderr, want)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "w.prof.trace"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, nil, weaveBin, "report", "--format", "perfetto", "-o", "w.json", "w.prof")
	if want := "weave: w.prof.trace: trace block 0: "; r.code == 0 || !strings.HasPrefix(r.stderr, want) {
		t.Errorf("perfetto export with a damaged trace: exit %d, stderr %q; want it to start %q", r.code, r.stderr, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "w.json")); err == nil {
		t.Error("w.json written from a damaged trace")
	}
}

// TestDepFileIsInput: a dependency file (-MF) naming the source is refused
// before anything is written, by weave cc and weave -o: the woven build
// preprocesses the source more than once, so the compiler read the rules
// written over it ("widgets.o: widgets.c ..." as C) and the source was lost.
func TestDepFileIsInput(t *testing.T) {
	dir, env := widgetsDir(t)
	src := filepath.Join(dir, "widgets.c")
	orig, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{
		{"cc", "-c", "widgets.c", "-MD", "-MF", "widgets.c"},
		{"cc", "-c", "widgets.c", "-MMD", "-MF./widgets.c", "-o", "w.o"},
		{"-o", "woven.c", "widgets.c", "-MD", "-MF", "widgets.c"},
	} {
		r := run(t, dir, env, append([]string{weaveBin}, argv...)...)
		want := "weave: -MF: error: input file 'widgets.c' is the same as output file\n"
		if r.code == 0 || r.stderr != want {
			t.Errorf("weave %s: exit %d, stderr %q; want %q", strings.Join(argv, " "), r.code, r.stderr, want)
		}
		if now, _ := os.ReadFile(src); string(now) != string(orig) {
			t.Fatalf("weave %s overwrote widgets.c", strings.Join(argv, " "))
		}
	}
}

// TestMissingFlagValue: a compiler flag that wants a value, last on the
// line, goes to the compiler, which says so as it does without weave (a
// trailing -o was dropped: weave linked a.out without the runtime, and
// the link failed on the runtime's symbols).
func TestMissingFlagValue(t *testing.T) {
	dir, env := widgetsDir(t)
	for _, flag := range []string{"-o", "-I", "-MF", "-x", "-include"} {
		plain := run(t, dir, nil, "gcc", "widgets.c", flag)
		woven := run(t, dir, env, weaveBin, "cc", "widgets.c", flag)
		if plain.code == 0 || woven.code != plain.code || woven.stderr != plain.stderr {
			t.Errorf("weave cc widgets.c %s: exit %d, stderr:\n%s\nwant gcc's: exit %d\n%s", flag, woven.code, woven.stderr, plain.code, plain.stderr)
		}
	}
}

// TestBadFlagValue: a flag value that does not parse is a usage error
// (exit 2) naming the flag and the form it wants; it said "parse error".
func TestBadFlagValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trace", "--timeout", "xyz", "1", "main"}, `invalid value "xyz" for --timeout: want a duration with its unit, as 500ms, 10s or 2m`},
		{[]string{"snapshot", "--timeout=5", "1"}, `invalid value "5" for --timeout: want a duration with its unit, as 500ms, 10s or 2m`},
		{[]string{"diff", "--depth", "x", "a", "b"}, `invalid value "x" for --depth: want a whole number`},
		{[]string{"diff", "--top", "99999999999999999999", "a", "b"}, `invalid value "99999999999999999999" for --top: want a whole number (out of range)`},
		{[]string{"report", "--threshold", "abc"}, `invalid value "abc" for --threshold: want a number, as 0.5`},
		{[]string{"trace", "--off=maybe", "1"}, `invalid value "maybe" for --off: want true or false (--off alone is true)`},
	} {
		r := run(t, t.TempDir(), nil, append([]string{weaveBin}, tc.args...)...)
		want := "weave: " + tc.args[0] + ": " + tc.want + "\nusage: weave " + tc.args[0] + " "
		if r.code != exitUsage || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("weave %s: exit %d, stderr %q; want exit %d, %q...", strings.Join(tc.args, " "), r.code, r.stderr, exitUsage, want)
		}
	}
}

// TestOutputWriteFails: an output whose write fails (a full disk; here a
// file size limit) is named as given, and nothing is left beside it. It
// named the temporary file: "write DIR/.w.html.tmp2219427976: file too
// large".
func TestOutputWriteFails(t *testing.T) {
	testtool.Need(t, "prlimit")
	dir, env := widgetsDir(t)
	mustRun(t, dir, env, weaveBin, "cc", "-o", "w", "widgets.c")
	mustRun(t, dir, []string{"WEAVE_OUT=w.prof"}, "./w", "100")
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	html := filepath.Join(out, "w.html")
	// weave's Go runtime ignores SIGXFSZ: the write past the limit fails (EFBIG).
	r := run(t, dir, nil, "prlimit", "--fsize=4096", weaveBin, "report", "--format", "html", "-o", html, "w.prof")
	if want := "weave: cannot write output file " + html + ": file too large\n"; r.code != 1 || r.stderr != want {
		t.Errorf("weave report -o past the file size limit: exit %d, stderr %q; want exit 1, %q", r.code, r.stderr, want)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 0 {
		t.Errorf("left in the output's directory: %v", ents)
	}
}
