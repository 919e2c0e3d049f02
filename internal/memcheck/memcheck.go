// Package memcheck runs a program under valgrind memcheck and returns its
// heap totals: the tests' independent oracle for weave's own.
package memcheck

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// Totals are the heap totals of valgrind's HEAP SUMMARY, which the
// runtime's exit summary prints in the same words. The runtime tests
// convert it to a type of their own with the same fields.
type Totals struct {
	InUseBytes, InUseBlocks, Allocs, Frees, Bytes uint64
}

var (
	inUseRE = regexp.MustCompile(`in use at exit: (?:at most )?([\d,]+) bytes in ([\d,]+) blocks`)
	totalRE = regexp.MustCompile(`total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated`)
	pidRE   = regexp.MustCompile(`(?m)^==(\d+)== `)
)

// Parse returns the totals of the first heap summary in text (valgrind's
// or the runtime's lines, prefixes left in), and whether there was one.
func Parse(text string) (Totals, bool) {
	a, b := inUseRE.FindStringSubmatch(text), totalRE.FindStringSubmatch(text)
	if a == nil || b == nil {
		return Totals{}, false
	}
	return Totals{num(a[1]), num(a[2]), num(b[1]), num(b[2]), num(b[3])}, true
}

func num(s string) uint64 {
	n, err := strconv.ParseUint(strings.ReplaceAll(s, ",", ""), 10, 64)
	if err != nil {
		panic(err) // the regexps match digits and commas only
	}
	return n
}

// Run runs argv in dir (a fresh directory if "") under memcheck and
// returns the heap totals of its first process (a forked child's summary
// follows with its own pid). The C library's buffers are not freed at
// exit (--run-libc-freeres=no): weave counts the heap as the program
// leaves it. The run has no weave summary or profile unless env, added
// last, asks for them. Its exit status does not matter. Without valgrind
// the test skips, or fails under CI: call it inside testtool.Check so that
// only the valgrind check skips.
func Run(t testing.TB, dir string, env []string, argv ...string) Totals {
	t.Helper()
	out := valgrind(t, dir, append([]string{"WEAVE_SUMMARY=0", "WEAVE_OUT="}, env...), []string{"--leak-check=no"}, argv)
	tot, ok := Parse(out)
	if !ok {
		t.Fatalf("valgrind %v: no heap summary in:\n%s", argv, out)
	}
	return tot
}

// valgrind runs argv under memcheck with the options in dir (a fresh
// directory if "") and returns its first process's lines (a forked
// child's follow with their own pid). --run-libc-freeres=no and
// --run-cxx-freeres=no: the C and C++ libraries' buffers (stdio's,
// libstdc++'s emergency exception pool) are counted as the program leaves
// them. WEAVE_CONTROL=0: no run-time control thread, whose TLS vector
// glibc callocs in pthread_create, a block of weave's that is not the
// program's (the runtime does not record it).
func valgrind(t testing.TB, dir string, env, opts, argv []string) string {
	t.Helper()
	testtool.Need(t, "valgrind")
	if dir == "" {
		dir = t.TempDir()
	}
	args := append(append(opts[:len(opts):len(opts)], "--run-libc-freeres=no", "--run-cxx-freeres=no"), argv...)
	cmd := exec.Command("valgrind", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "WEAVE_CONTROL=0"), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("valgrind %v: %v", argv, err)
		}
	}
	out := stderr.String()
	m := pidRE.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("valgrind %v: no valgrind output:\n%s", argv, out)
	}
	var own []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, m[0]) {
			own = append(own, l)
		}
	}
	return strings.Join(own, "\n")
}
