package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestFramePointcut: depth_sum of testdata/hardening/traceloop.c cannot
// be on an allocation chain, so --frames auto leaves it frameless, with
// no tracepoint. WEAVE_TRACE=depth_sum then says so in one line at start
// (and weave trace in its answer), naming it and --frame; --frame
// depth_sum, on the command line, in weave.conf or in WEAVE_FLAGS, gives
// it a frame and nothing else one: its calls are counted (4 a call of
// work: depth_sum(3) recurses to 0; 3 threads of ROUNDS calls of work,
// as under --frames=all) and traced, every enter of them.
func TestFramePointcut(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src, _ := filepath.Abs("../../testdata/hardening/traceloop.c")
	const rounds = 50
	want := 3 * rounds * 4
	build := func(name string, env []string, flags ...string) string {
		t.Helper()
		out := filepath.Join(dir, name)
		args := append(append([]string{weaveBin, "cc", "-O1", "-pthread"}, flags...), src, "-o", out)
		mustRun(t, dir, append([]string{"WEAVE_CC=gcc"}, env...), args...)
		return out
	}
	runTraced := func(bin, pats string) (string, int, int) {
		t.Helper()
		prof := filepath.Join(dir, filepath.Base(bin)+".prof")
		r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0", "WEAVE_TRACE=" + pats}, bin, "50")
		p, c := readTrace(t, prof)
		return r.stderr, calls(p, "depth_sum"), c.enters["depth_sum"]
	}

	auto := build("auto", nil)
	stderr, n, enters := runTraced(auto, "depth_sum,work")
	if strings.Count(stderr, "\n") != 1 || !regexp.MustCompile(`^==weave [0-9]+== WEAVE_TRACE: `).MatchString(stderr) || !strings.Contains(stderr, "'depth_sum' matches only functions without a frame, which have no tracepoint: depth_sum (give them one with --frame 'depth_sum', or --frames=all)") {
		t.Errorf("WEAVE_TRACE=depth_sum,work on the auto build: stderr %q, want one line naming depth_sum and --frame", stderr)
	}
	if n != 0 || enters != 0 {
		t.Errorf("auto build: depth_sum %d calls, %d traced, want none (frameless)", n, enters)
	}
	if stderr, _, _ := runTraced(auto, "work,alloc:*"); stderr != "" {
		t.Errorf("patterns with tracepoints: stderr %q, want nothing", stderr)
	}

	// The trace file is named where the summary is printed, never alone
	// on the stderr of a run with nothing to report.
	quiet := filepath.Join(dir, "quiet.c")
	if err := os.WriteFile(quiet, []byte("#include <stdlib.h>\nvoid work(void) { free(malloc(32)); }\nint main(void) { work(); return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, weaveBin, "cc", "--frames=all", "-o", filepath.Join(dir, "quiet"), quiet)
	prof := filepath.Join(dir, "quiet.prof")
	if r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TRACE=work", "WEAVE_SUMMARY="}, filepath.Join(dir, "quiet")); r.stderr != "" {
		t.Errorf("WEAVE_TRACE=work, default summary, nothing leaked: stderr %q, want nothing", r.stderr)
	}
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TRACE=work", "WEAVE_SUMMARY=1"}, filepath.Join(dir, "quiet"))
	if !regexp.MustCompile(`(?m)^==weave [0-9]+== trace written to ` + regexp.QuoteMeta(prof) + `\.trace$`).MatchString(r.stderr) {
		t.Errorf("WEAVE_TRACE=work, WEAVE_SUMMARY=1: stderr %q, want ==weave PID== trace written to %s.trace", r.stderr, prof)
	}

	conf := filepath.Join(dir, "frame.conf")
	if err := os.WriteFile(conf, []byte("# trace the leaf\nframe depth_*\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string]string{
		"all":         build("all", nil, "--frames=all"),
		"flag":        build("flag", nil, "--frame", "depth_sum"),
		"weave.conf":  build("conf", []string{"WEAVE_CONFIG=" + conf}),
		"WEAVE_FLAGS": build("env", []string{"WEAVE_FLAGS=--frame=depth_sum"}),
	} {
		stderr, n, enters := runTraced(b, "depth_sum")
		if stderr != "" || n != want || enters != want {
			t.Errorf("%s: depth_sum %d calls, %d traced, stderr %q; want %d of both, nothing said", name, n, enters, stderr, want)
		}
	}
	// Only the functions --frame names get a frame.
	v := mustRun(t, dir, nil, weaveBin, "-v", "--frame", "depth_sum", "-o", filepath.Join(dir, "v.c"), src).stderr
	if strings.Contains(v, "depth_sum frameless") || !strings.Contains(v, "make_item frameless") {
		t.Errorf("weave -v --frame depth_sum:\n%s", v)
	}

	// weave trace's answer says it too.
	cmd, pid, errs := startLoopBin(t, dir, auto, filepath.Join(dir, "live.prof"))
	r = mustRun(t, dir, nil, weaveBin, "trace", pid, "depth_sum")
	if !strings.Contains(r.stdout, "tracing depth_sum; 'depth_sum' matches only functions without a frame") {
		t.Errorf("weave trace PID depth_sum: %q", r.stdout)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the traced process failed: %v\n%s", err, errs.String())
	}
}

// startLoopBin starts bin (traceloop.c woven) for about 2 s, writing its
// profile to prof, and returns once it runs.
func startLoopBin(t *testing.T, dir, bin, prof string) (*exec.Cmd, string, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(bin, "400", "5000")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_OUT="+prof)
	stderr := &strings.Builder{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	return cmd, strconv.Itoa(cmd.Process.Pid), stderr
}

// TestFramePointcutDlclose: weave trace checks its patterns against the
// units loaded now: a woven library's frameless libtick is named while
// the library is loaded, and forgotten (not read: its memory is gone)
// once it is dlclosed, when a pattern naming it matches nothing; the
// process goes on.
func TestFramePointcutDlclose(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := func(name string) string { s, _ := filepath.Abs("../../testdata/unframed/" + name); return s }
	env := []string{"WEAVE_CC=gcc"}
	mustRun(t, dir, env, weaveBin, "cc", "-shared", "-fPIC", "-O2", src("lib.c"), "-o", filepath.Join(dir, "lib.so"))
	bin := filepath.Join(dir, "main")
	mustRun(t, dir, env, weaveBin, "cc", "-O2", src("main.c"), "-o", bin, "-ldl")
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_OUT="+filepath.Join(dir, "m.prof"), "WEAVE_SUMMARY=0")
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	touch := func(name string) { os.WriteFile(filepath.Join(dir, name), nil, 0o600) }
	defer touch("stop")
	// Until the program says the library is loaded ("opened"), then
	// unloaded ("closed"): a fixed 200 ms wait was a guess that a loaded
	// machine (load 6-11 here) may not honour.
	waitFile := func(name string) {
		for i := 0; i < 1000; i++ {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFile("opened")
	if r := mustRun(t, dir, nil, weaveBin, "trace", pid, "libtick,tick"); !strings.Contains(r.stdout, "'libtick', 'tick' match only functions without a frame, which have no tracepoint: libtick, tick") &&
		!strings.Contains(r.stdout, "'libtick', 'tick' match only functions without a frame, which have no tracepoint: tick, libtick") {
		t.Errorf("library loaded: weave trace answered %q, want libtick and tick named", r.stdout)
	}
	touch("close")
	waitFile("closed")
	// libtick now matches nothing: the request is refused (exit 1), naming
	// it, and the process goes on.
	if r := run(t, dir, nil, weaveBin, "trace", pid, "libtick,tick"); r.code != 1 || !strings.Contains(r.stderr, "'libtick' matches no woven function or allocation site: tracing unchanged") {
		t.Errorf("library unloaded: weave trace exit %d, stderr %q; want 1 and libtick named as matching nothing", r.code, r.stderr)
	}
	if r := mustRun(t, dir, nil, weaveBin, "trace", pid, "tick"); !strings.Contains(r.stdout, "'tick' matches only functions without a frame, which have no tracepoint: tick") {
		t.Errorf("library unloaded: weave trace tick answered %q, want tick named", r.stdout)
	}
	touch("stop")
	if err := cmd.Wait(); err != nil || out.String() != "77\n" {
		t.Errorf("the process: %v, stdout %q, stderr %q", err, out.String(), errs.String())
	}
}
