package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestSummaryDefaults: by default the summary is printed only when there
// is something to report (lost blocks) or stderr is a terminal, so a test
// suite comparing stderr sees nothing; its lines carry the pid;
// WEAVE_SUMMARY=1/0 force it; WEAVE_LOG sends it to a new file.
func TestSummaryDefaults(t *testing.T) {
	t.Parallel()
	empty, leaky := build(t, "gcc", "empty"), build(t, "gcc", "allfns")
	auto := []string{"WEAVE_SUMMARY="}

	if r := run(t, empty, auto); r.stderr != "" || r.code != 0 {
		t.Errorf("nothing leaked, stderr a pipe: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := run(t, empty, []string{"WEAVE_SUMMARY=1"}); !strings.Contains(r.stderr, "All heap blocks were freed") {
		t.Errorf("WEAVE_SUMMARY=1: %q", r.stderr)
	}
	if r := run(t, leaky, []string{"WEAVE_SUMMARY=0"}); r.stderr != "" {
		t.Errorf("WEAVE_SUMMARY=0 with leaks: %q", r.stderr)
	}
	r := run(t, leaky, auto)
	pid := readProfile(t, r.profile()).meta["pid"]
	if !regexp.MustCompile(`(?m)^==weave ` + pid + `==    definitely lost: [\d,]+ bytes`).MatchString(r.stderr) {
		t.Errorf("lost blocks, default: no summary with pid %s:\n%s", pid, r.stderr)
	}
	for _, l := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		if !strings.HasPrefix(l, "==weave "+pid+"== ") {
			t.Errorf("line without the pid: %q", l)
		}
	}
	// Lost blocks all suppressed: nothing to report.
	supp := filepath.Join(t.TempDir(), "supp")
	os.WriteFile(supp, []byte("leak:main\nleak:helper\n"), 0o644)
	if r := run(t, leaky, append(auto, "WEAVE_SUPPRESSIONS="+supp)); r.stderr != "" {
		t.Errorf("lost blocks suppressed, default: %q", r.stderr)
	}

	// The runtime's other messages carry the pid too.
	r = run(t, leaky, []string{"WEAVE_SUMMARY=0", "WEAVE_SUPPRESSIONS=" + supp + ".none"})
	if !regexp.MustCompile(`^==weave \d+== cannot read WEAVE_SUPPRESSIONS file\n$`).MatchString(r.stderr) {
		t.Errorf("a missing suppressions file: %q", r.stderr)
	}

	// A misset variable says so in one line, never silently.
	for _, tc := range []struct{ env, line string }{
		{"WEAVE_SUMMARY=yes", "WEAVE_SUMMARY: want 1 (always) or 0 (never); printing it when there is something to report"},
		{"WEAVE_LEAKS=many", "WEAVE_LEAKS: want a number; using 5"},
		{"WEAVE_TIME_CLOCK=rdtsc", "WEAVE_TIME_CLOCK: want tsc or monotonic; using the default"},
		{"WEAVE_LEAK_THREADS=x", "WEAVE_LEAK_THREADS: want a number of threads; choosing them by the idle CPUs"},
	} {
		r := run(t, empty, append(auto, tc.env, "WEAVE_TIME=exact"))
		if !regexp.MustCompile(`^==weave \d+== ` + regexp.QuoteMeta(tc.line) + `\n$`).MatchString(r.stderr) {
			t.Errorf("%s: stderr %q, want the line %q", tc.env, r.stderr, tc.line)
		}
	}
	if r := run(t, empty, append(auto, "WEAVE_TIME=exact", "WEAVE_TIME_CLOCK=monotonic", "WEAVE_LEAKS=3", "WEAVE_LEAK_THREADS=1")); r.stderr != "" {
		t.Errorf("well-set variables: stderr %q", r.stderr)
	}

	// WEAVE_LOG: the summary in a file of its own, none on stderr.
	r = run(t, empty, append(auto, "WEAVE_LOG=log.%p"))
	pid = readProfile(t, r.profile()).meta["pid"]
	log, err := os.ReadFile(filepath.Join(r.dir, "log."+pid))
	if err != nil || r.stderr != "" || !strings.HasPrefix(string(log), "==weave "+pid+"== HEAP SUMMARY:\n") {
		t.Errorf("WEAVE_LOG=log.%%p: stderr %q, log %q (%v)", r.stderr, log, err)
	}
	r = run(t, empty, append(auto, "WEAVE_LOG=nodir/log"))
	if !strings.Contains(r.stderr, "HEAP SUMMARY") || !strings.Contains(r.stderr, "cannot write WEAVE_LOG file nodir/log: No such file") {
		t.Errorf("WEAVE_LOG in a missing directory: %q", r.stderr)
	}

	// On a terminal: printed (script gives the program a pty).
	testtool.Check(t, "terminal", []string{"script"}, func(t *testing.T) {
		out, err := exec.Command("script", "-qec", "env WEAVE_SUMMARY= WEAVE_OUT= "+empty, "/dev/null").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "All heap blocks were freed") {
			t.Errorf("on a terminal: %v %q", err, out)
		}
	})
}

// TestSummaryClosedStderr: a program that closed its stderr and opened a
// file of its own as descriptor 2 finds in it only what it wrote, not the
// runtime's summary (lost blocks, WEAVE_SUMMARY=1) nor its messages (a
// misset variable read after the close); WEAVE_LOG still gets the
// summary, also where the program left descriptor 2 closed.
func TestSummaryClosedStderr(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "closedstderr")
	for _, env := range [][]string{{"WEAVE_SUMMARY="}, {"WEAVE_SUMMARY=1", "WEAVE_SUPPRESSIONS=/nonexistent.supp"}} {
		r := run(t, exe, env)
		if b, err := os.ReadFile(filepath.Join(r.dir, "data.txt")); r.code != 0 || string(b) != "data\n" {
			t.Errorf("%v: exit %d, the program's data.txt holds %q (%v), want its line only", env, r.code, b, err)
		}
		if _, err := os.Stat(r.profile()); err != nil {
			t.Errorf("%v: no profile: %v", env, err)
		}
	}
	r := run(t, exe, []string{"WEAVE_LOG=log"})
	if b, _ := os.ReadFile(filepath.Join(r.dir, "log")); !strings.Contains(string(b), "definitely lost: 50 bytes in 1 blocks") {
		t.Errorf("WEAVE_LOG after the program closed stderr: %q", b)
	}
	// stdout and stderr closed and left so (gnulib's close_stdout, bc's
	// dc): the WEAVE_LOG file takes descriptor 2 and gets the summary
	// (it was left unwritten, taken for the closed stderr).
	r = run(t, exe, []string{"WEAVE_LOG=log"}, "closeall")
	if b, _ := os.ReadFile(filepath.Join(r.dir, "log")); r.code != 0 || !strings.Contains(string(b), "definitely lost: 50 bytes in 1 blocks") ||
		!strings.Contains(string(b), "profile written to ") {
		t.Errorf("WEAVE_LOG after the program closed descriptors 1 and 2: exit %d, log %q", r.code, b)
	}
	if _, err := os.Stat(r.profile()); err != nil {
		t.Errorf("descriptors 1 and 2 closed: no profile: %v", err)
	}
}

// TestOutDir: WEAVE_OUT=DIR/ (made if absent) or an existing directory:
// one profile per process there, each with a name of its own.
func TestOutDir(t *testing.T) {
	t.Parallel()
	empty := build(t, "gcc", "empty")
	dir := t.TempDir()
	name := regexp.MustCompile(`^weave-empty\.(\d+)\.[0-9a-f]{16}\.prof$`)
	for i, out := range []string{dir + "/new/", dir + "/new", dir + "/new/"} {
		r := run(t, empty, []string{"WEAVE_OUT=" + out})
		files, _ := os.ReadDir(dir + "/new")
		if len(files) != i+1 {
			t.Fatalf("WEAVE_OUT=%s: %d files in it, want %d\n%s", out, len(files), i+1, r.stderr)
		}
		if left, _ := os.ReadDir(r.dir); len(left) != 0 {
			t.Errorf("files left in the working directory: %v", left)
		}
	}
	files, _ := os.ReadDir(dir + "/new")
	for _, f := range files {
		m := name.FindStringSubmatch(f.Name())
		if m == nil {
			t.Errorf("profile name %s", f.Name())
			continue
		}
		if pid := readProfile(t, filepath.Join(dir, "new", f.Name())).meta["pid"]; pid != m[1] {
			t.Errorf("%s holds pid %s", f.Name(), pid)
		}
	}
}
