package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
)

// weaveBin is the weave binary under test, built once by TestMain.
var weaveBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "weave-test-")
	if err != nil {
		panic(err)
	}
	weaveBin = filepath.Join(dir, "weave")
	if out, err := exec.Command("go", "build", "-o", weaveBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building weave: %v\n%s", err, out)
		os.Exit(1)
	}
	// The woven processes these tests send requests to are mostly
	// single-threaded, which under WEAVE_CONTROL=auto have no control
	// channel; TestControlAuto checks the default itself.
	os.Setenv("WEAVE_CONTROL", "1")
	// Keep the runtime objects, woven text and frame stores the tests
	// make out of the user's cache (hundreds of MB over many runs), and
	// the tests independent of what an earlier weave left there.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(dir, "cache"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what a program run did.
type result struct {
	stdout, stderr string
	code           int
}

// run runs argv in dir with extra environment variables.
func run(t *testing.T, dir string, env []string, argv ...string) result {
	t.Helper()
	return runWithin(t, 0, dir, env, argv...)
}

// runWithin is run with a time limit (0: none): a run that does not
// finish within it is killed and fails the test.
func runWithin(t *testing.T, limit time.Duration, dir string, env []string, argv ...string) result {
	t.Helper()
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if limit > 0 {
		ctx, cancel = context.WithTimeout(ctx, limit)
	}
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	// The summary printed whatever the run left (by default only when
	// there is something to report): the tests read it. Tests of the
	// defaults pass WEAVE_SUMMARY= in env.
	cmd.Env = append(append(os.Environ(), "WEAVE_SUMMARY=1"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish in %v", argv, limit)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", argv, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// mustRun runs argv and fails the test unless it exits 0.
func mustRun(t *testing.T, dir string, env []string, argv ...string) result {
	t.Helper()
	r := run(t, dir, env, argv...)
	if r.code != 0 {
		t.Fatalf("%s: exit %d\n%s%s", strings.Join(argv, " "), r.code, r.stdout, r.stderr)
	}
	return r
}

// summaryLine matches a line of the runtime's summary, which carries the
// pid: "==weave 4242== HEAP SUMMARY:".
var summaryLine = regexp.MustCompile(`^==weave( \d+)?== `)

// hasSummary reports whether stderr holds the runtime's summary.
func hasSummary(stderr string) bool {
	return regexp.MustCompile(`(?m)^==weave \d+== HEAP SUMMARY`).MatchString(stderr)
}

// stripSummary removes the runtime's exit summary from a program's stderr.
func stripSummary(s string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if !summaryLine.MatchString(l) {
			b.WriteString(l)
		}
	}
	return b.String()
}

// totals are the heap totals both weave and valgrind report.
type totals struct {
	Allocs         int64 `json:"allocs"`
	Frees          int64 `json:"frees"`
	BytesAllocated int64 `json:"bytes_allocated"`
	BytesInUse     int64 `json:"bytes_in_use"`
	BlocksInUse    int64 `json:"blocks_in_use"`
}

// reportTotals runs weave report --format json on a profile.
func reportTotals(t *testing.T, profile string) totals {
	t.Helper()
	r := mustRun(t, "", nil, weaveBin, "report", "--format", "json", profile)
	var rep struct {
		Totals totals `json:"totals"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report json: %v\n%s", err, r.stdout)
	}
	return rep.Totals
}

// valgrindTotals runs argv under valgrind memcheck (see memcheck.Run) and
// returns its heap totals as weave report's.
func valgrindTotals(t *testing.T, dir string, env []string, argv ...string) totals {
	t.Helper()
	m := memcheck.Run(t, dir, env, argv...)
	return totals{Allocs: int64(m.Allocs), Frees: int64(m.Frees), BytesAllocated: int64(m.Bytes),
		BytesInUse: int64(m.InUseBytes), BlocksInUse: int64(m.InUseBlocks)}
}

// checkValgrind checks, as a subtest that needs valgrind only, that a
// run of argv in dir under valgrind has the heap totals weave gave.
func checkValgrind(t *testing.T, weave totals, dir string, argv ...string) {
	t.Helper()
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		if vt := valgrindTotals(t, dir, nil, argv...); vt != weave {
			t.Errorf("weave totals %+v, valgrind %+v", weave, vt)
		}
	})
}

// program is a test program: its sources (relative to testdata) and args.
type program struct {
	name string
	srcs []string
	args []string
}

var programs = []program{
	{"widgets", []string{"widgets.c"}, nil},
	{"returns", []string{"returns.c"}, nil},
	{"recursion", []string{"recursion.c"}, nil},
	{"macros", []string{"macros.c"}, nil},
	{"longjmp", []string{"longjmp.c"}, nil},
	{"ownalloc", []string{"ownalloc.c"}, nil},
	{"twotu", []string{"twotu/main.c", "twotu/shapes.c"}, nil},
	{"fnptrs", []string{"fnptrs.c"}, nil},
	{"coldpaths", []string{"coldpaths.c"}, nil},
	{"thunks", []string{"thunks/main.c", "thunks/lib.c"}, nil},
	{"complexint", []string{"complexint.c"}, nil},
}

// build compiles a program plain and woven with compiler cc, checks the
// woven build adds no warnings, and returns both binaries.
func build(t *testing.T, dir, cc string, p program, flags ...string) (plain, woven string) {
	t.Helper()
	var srcs []string
	for _, s := range p.srcs {
		abs, _ := filepath.Abs(filepath.Join("../../testdata", s))
		srcs = append(srcs, abs)
	}
	plain = filepath.Join(dir, p.name+".plain")
	woven = filepath.Join(dir, p.name+".woven")
	// -Wunreachable-code: clang's said "code will never be executed" of
	// the statement expression around a framed call of a noreturn function
	args := append(append([]string{"-Wall", "-Wextra", "-Wunreachable-code"}, flags...), srcs...)
	pr := mustRun(t, dir, nil, append(append([]string{cc}, args...), "-o", plain)...)
	wr := mustRun(t, dir, []string{"WEAVE_CC=" + cc}, append(append([]string{weaveBin, "cc"}, args...), "-o", woven)...)
	if wr.stderr != pr.stderr {
		t.Errorf("woven build's diagnostics differ from the plain build's:\nplain:\n%s\nwoven:\n%s", pr.stderr, wr.stderr)
	}
	return plain, woven
}

// sameRun checks the woven run behaved as the plain one (stdout, stderr
// without weave's summary, exit code) and says whether it did.
func sameRun(t *testing.T, what string, plain, woven result) bool {
	t.Helper()
	if woven.stdout != plain.stdout || stripSummary(woven.stderr) != plain.stderr || woven.code != plain.code {
		t.Errorf("%s: woven run differs:\nplain: exit %d\n%s%s\nwoven: exit %d\n%s%s",
			what, plain.code, plain.stdout, plain.stderr, woven.code, woven.stdout, woven.stderr)
		return false
	}
	return true
}

// TestPrograms weaves each test program with gcc and clang, and checks the
// woven program behaves as the plain one and its heap totals equal
// valgrind's.
func TestPrograms(t *testing.T) {
	if !testtool.Has("gcc") && !testtool.Has("clang") {
		t.Fatal("neither gcc nor clang is installed")
	}
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			t.Parallel()
			testtool.Need(t, cc)
			testPrograms(t, cc)
		})
	}
}

// testPrograms is TestPrograms with compiler cc.
func testPrograms(t *testing.T, cc string) {
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			debug := "-g"
			if cc == "clang" {
				debug = "-gdwarf-4" // valgrind 3.19 cannot read clang 14's DWARF 5
			}
			plain, woven := build(t, dir, cc, p, "-O2", debug)
			want := run(t, dir, nil, append([]string{plain}, p.args...)...)
			prof := filepath.Join(dir, "out.prof")
			got := run(t, dir, []string{"WEAVE_OUT=" + prof}, append([]string{woven}, p.args...)...)
			if !sameRun(t, p.name, want, got) {
				t.FailNow()
			}
			if !hasSummary(got.stderr) {
				t.Errorf("no heap summary on stderr:\n%s", got.stderr)
			}
			wt := reportTotals(t, prof)
			if p.name == "ownalloc" {
				if wt.Allocs != 0 {
					t.Errorf("the program's own malloc was advised: %+v", wt)
				}
				return
			}
			// The oracle: valgrind on the same woven binary and run. (The
			// plain -O2 build is no oracle: gcc may elide a malloc/free
			// pair whose block never escapes.)
			testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
				vgProf := filepath.Join(dir, "vg.prof")
				vt := valgrindTotals(t, dir, []string{"WEAVE_OUT=" + vgProf}, append([]string{woven}, p.args...)...)
				if wt := reportTotals(t, vgProf); wt != vt {
					t.Errorf("weave totals %+v, valgrind %+v", wt, vt)
				}
			})
		})
	}
}
