package testtool

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// WithPeakRSS makes cmd (not started) run through the benchmark's
// rusage helper (bench/helper/rusage.c, built once per test binary) and
// returns what reads the command's peak RSS in KiB once it has run. A
// child's own rusage cannot be used: Go starts children with vfork
// semantics (CLONE_VM), so the kernel gives the child the test process's
// high-water RSS at exec (a 17 MB program read 437 MB in CI); the helper
// forks, so the command starts from its footprint.
func WithPeakRSS(t testing.TB, cmd *exec.Cmd) func() int64 {
	t.Helper()
	helper := rusageHelper(t)
	report := filepath.Join(t.TempDir(), "rusage")
	cmd.Args = append([]string{helper, report, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = helper
	return func() int64 {
		t.Helper()
		b, err := os.ReadFile(report)
		f := strings.Fields(string(b))
		if err != nil || len(f) != 4 {
			t.Fatalf("rusage report %q: %v", b, err)
		}
		kib, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return kib
	}
}

var helperOnce struct {
	sync.Once
	path string
	err  error
	out  []byte
}

// rusageHelper builds bench/helper/rusage.c with gcc, once.
func rusageHelper(t testing.TB) string {
	t.Helper()
	Need(t, "gcc")
	helperOnce.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		src := filepath.Join(filepath.Dir(self), "..", "..", "bench", "helper", "rusage.c")
		dir, err := os.MkdirTemp("", "weave-rusage-")
		if err != nil {
			helperOnce.err = err
			return
		}
		helperOnce.path = filepath.Join(dir, "rusage")
		helperOnce.out, helperOnce.err = exec.Command("gcc", "-O2", "-o", helperOnce.path, src).CombinedOutput()
	})
	if helperOnce.err != nil {
		t.Fatalf("building the rusage helper: %v\n%s", helperOnce.err, helperOnce.out)
	}
	return helperOnce.path
}
