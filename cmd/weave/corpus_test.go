package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"modernc.org/ccorpus2"

	"github.com/weave-profiler/weave/internal/testtool"
)

// The corpus tests check that weaving preserves the behaviour of C code
// nobody here wrote: the gcc c-torture execute tests and the benchmarks
// game programs from modernc.org/ccorpus2.

const (
	tortureDir = "assets/gcc-9.1.0/gcc/testsuite/gcc.c-torture/execute"
	benchDir   = "assets/benchmarksgame-team.pages.debian.net"
)

// tortureFlags are the compiler flags of both torture builds. Measured
// with gcc 12 over the 1506 tests (plain builds that exit 0 within 10 s):
//
//	-O0 -w                          1491
//	-O1 -w -fno-builtin             1476 (tests that check builtin folding fail)
//	-O1 -w                          1491
//	-O2 -w                          1490
//	-O1 -w -fgnu89-inline           1495 (12 tests ask for it in dg-options)
//	-O1 -w -fgnu89-inline -fwrapv   1502 (8 tests ask for -fwrapv)
//
// -O1 rather than -O0 because many tests call an undefined link_error()
// that only optimisation removes, and weaving must not get in its way.
var tortureFlags = []string{"-O1", "-w", "-fgnu89-inline", "-fwrapv"}

// benchFlags are the compiler flags of both benchmarks game builds; the
// programs variously need OpenMP, threads, glibc extensions (CPU_SETSIZE),
// SSSE3/AVX intrinsics and Include/khash.h.
var benchFlags = []string{"-O2", "-w", "-march=native", "-D_GNU_SOURCE", "-pthread", "-fopenmp"}

// benchLibs are the extra flags of programs including a header.
var benchLibs = []struct {
	include string
	flags   []string
}{
	{"<gmp.h>", []string{"-lgmp"}},
	{"<pcre.h>", []string{"-lpcre"}},
	{`"pcre2.h"`, []string{"-lpcre2-8"}},
	{"<apr_pools.h>", []string{"-I/usr/include/apr-1.0", "-lapr-1"}},
}

// benchArgs replaces the arguments of the .arg files (the benchmarks
// game's, which run for seconds to minutes each) by small ones, keyed by
// program name without its -N variant suffix.
var benchArgs = map[string]string{
	"binary-trees":  "16",     // 21
	"fannkuchredux": "9",      // 12
	"fasta":         "250000", // 25000000
	"mandelbrot":    "1000",   // 16000
	"nbody":         "500000", // 50000000
	"pidigits":      "2000",   // 10000
	"spectral-norm": "500",    // 5500
}

// benchStdin are the programs that read the output of fasta on stdin.
var benchStdin = map[string]bool{"k-nucleotide": true, "reverse-complement": true, "regex-redux": true}

// fastaInputArg is the fasta argument making the stdin of benchStdin
// programs (about 2.5 MB).
const fastaInputArg = "250000"

var (
	errTimeout = errors.New("timed out")
)

// runLimited runs argv in dir with extra environment variables and the
// file stdin (if not "") on standard input, killing it after limit. Unlike
// run it does not fail the test: err is errTimeout, or the error starting
// the program.
func runLimited(dir string, env []string, stdin string, limit time.Duration, argv ...string) (result, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	if stdin != "" {
		// A file, not a pipe: reverse-complement-2 takes a short read()
		// for the end of its input.
		f, err := os.Open(stdin)
		if err != nil {
			return result{}, err
		}
		defer f.Close()
		cmd.Stdin = f
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout.String(), stderr.String(), 0}
	if ctx.Err() != nil {
		return r, errTimeout
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.code = ee.ExitCode()
		if r.code < 0 { // killed by a signal
			return r, ee
		}
		return r, nil
	}
	return r, err
}

// unpackCorpus copies the corpus files under src for which keep is true
// (paths relative to src) into dst.
func unpackCorpus(t *testing.T, src, dst string, keep func(rel string, d fs.DirEntry) bool) {
	t.Helper()
	err := fs.WalkDir(ccorpus2.FS, src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, src), "/")
		if rel == "" {
			return nil
		}
		if !keep(rel, d) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		out := filepath.Join(dst, filepath.FromSlash(rel))
		if d.IsDir() {
			return os.MkdirAll(out, 0o755)
		}
		b, err := ccorpus2.FS.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(out, b, 0o644)
	})
	if err != nil {
		t.Fatalf("unpacking %s: %v", src, err)
	}
}

// corpusStats counts what happened to each program of a corpus.
type corpusStats struct {
	mu       sync.Mutex
	excluded []string // failed unwoven
	ok       int
	fellBack int
	failed   []string
	known    []string            // differ woven, for a reason in knownDifferences
	reasons  map[string][]string // fallback reason → programs
}

// knownDifferences are corpus programs whose woven build behaves
// differently for a reason that is not a change of C semantics.
var knownDifferences = map[string]string{
	// Tests gcc's inlining: f and g each inline a static __inline__
	// function containing a label and compare the label addresses. The
	// woven function body is bigger, gcc declines to inline it ("call is
	// cold and code would grow"), and both addresses become equal.
	"990208-1": "checks gcc's inlining decision, which the woven body changes",
}

func (s *corpusStats) add(f func(*corpusStats)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// report logs the counts and the fallback reasons, to the test log and to
// stdout.
func (s *corpusStats) report(t *testing.T, corpus string, start time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	ran := s.ok + s.fellBack + len(s.failed) + len(s.known)
	fmt.Fprintf(&b, "%s: %d run unwoven, %d woven ok, %d fell back, %d failed, %d known differences (%d excluded: failed unwoven; %v)\n",
		corpus, ran, s.ok, s.fellBack, len(s.failed), len(s.known), len(s.excluded), time.Since(start).Round(time.Second))
	if s.fellBack > 0 {
		fmt.Fprintf(&b, "%s: %d programs fell back to an unwoven build: each is a failure\n", corpus, s.fellBack)
	}
	for _, k := range s.known {
		fmt.Fprintf(&b, "%s: known difference: %s: %s\n", corpus, k, knownDifferences[k])
	}
	if len(s.excluded) > 0 {
		sort.Strings(s.excluded)
		fmt.Fprintf(&b, "%s: excluded: %s\n", corpus, strings.Join(s.excluded, " "))
	}
	if len(s.failed) > 0 {
		sort.Strings(s.failed)
		fmt.Fprintf(&b, "%s: failed woven: %s\n", corpus, strings.Join(s.failed, " "))
	}
	var rs []string
	for r := range s.reasons {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool {
		if a, b := len(s.reasons[rs[i]]), len(s.reasons[rs[j]]); a != b {
			return a > b
		}
		return rs[i] < rs[j]
	})
	for _, r := range rs {
		progs := s.reasons[r]
		sort.Strings(progs)
		if len(progs) > 8 {
			progs = append(progs[:8:8], "...")
		}
		fmt.Fprintf(&b, "%s: fell back %4d× %s [%s]\n", corpus, len(s.reasons[r]), r, strings.Join(progs, " "))
	}
	t.Log("\n" + b.String())
	fmt.Print(b.String())
}

var (
	reasonPos   = regexp.MustCompile(`\(?(?:[^\s:()]*/)?[^\s:/()]+\.(?:c|h|i|go):\d+(?::\d+)?(?::\w*)*:?\)?\s*`)
	reasonQuote = regexp.MustCompile(`"[^"]*"|'[^']*'|‘[^’]*’|` + "`[^`]*`")
	reasonNum   = regexp.MustCompile(`\b\d+\b`)
)

// reasonKind reduces a fallback reason to its kind for the histogram: no
// positions, quoted names or numbers.
func reasonKind(r string) string {
	r = reasonPos.ReplaceAllString(r, "")
	r = reasonQuote.ReplaceAllString(r, "_")
	r = reasonNum.ReplaceAllString(r, "N")
	return strings.TrimSpace(r)
}

// corpusProgram is one program of a corpus and how to build and run it.
type corpusProgram struct {
	name    string   // for messages
	src     string   // absolute path of the C source
	flags   []string // compile flags, before the source
	libs    []string // link flags, after the source
	library string   // the header of the library it needs ("<gmp.h>"), if any
	args    []string
	stdin   string        // file to read standard input from
	limit   time.Duration // for the plain run; the woven one gets 3× as long
	recheck bool          // run the plain program twice, to exclude nondeterministic ones
}

// checkCorpusProgram builds and runs p plain, then woven with
// `weave cc` and gcc, and records in s what happened. A program that does
// not build or exit 0 plain is excluded.
func checkCorpusProgram(t *testing.T, s *corpusStats, p corpusProgram) {
	dir := t.TempDir()
	plain, woven := filepath.Join(dir, "plain"), filepath.Join(dir, "woven")
	excluded := func(format string, args ...any) {
		s.add(func(s *corpusStats) { s.excluded = append(s.excluded, p.name) })
		t.Skipf("excluded: "+format, args...)
	}
	failed := func(format string, args ...any) {
		if why, ok := knownDifferences[p.name]; ok {
			s.add(func(s *corpusStats) { s.known = append(s.known, p.name) })
			t.Skipf("known difference (%s): "+format, append([]any{why}, args...)...)
		}
		s.add(func(s *corpusStats) { s.failed = append(s.failed, p.name) })
		t.Fatalf(format, args...)
	}
	compile := func(env []string, out string, cc ...string) (result, error) {
		argv := append(append(append(append(cc, p.flags...), p.src), p.libs...), "-o", out)
		return runLimited(dir, env, "", 2*time.Minute, argv...)
	}

	pb, err := compile(nil, plain, "gcc")
	if err != nil || pb.code != 0 {
		if p.library != "" {
			// The test needs the library (.ci/run installs it): not an
			// exclusion but a missing requirement, which fails under CI.
			s.add(func(s *corpusStats) { s.excluded = append(s.excluded, p.name) })
			testtool.Missing(t, "%s: plain build fails; is the library of %s installed (make deps)?\n%s", p.name, p.library, pb.stderr)
		}
		excluded("plain build: %v exit %d\n%s", err, pb.code, pb.stderr)
	}
	pr, err := runLimited(dir, nil, p.stdin, p.limit, append([]string{plain}, p.args...)...)
	if err != nil || pr.code != 0 {
		excluded("plain run: %v exit %d", err, pr.code)
	}
	if p.recheck {
		pr2, err := runLimited(dir, nil, p.stdin, p.limit, append([]string{plain}, p.args...)...)
		if err != nil || pr2.code != 0 || pr2.stdout != pr.stdout || pr2.stderr != pr.stderr {
			excluded("plain run is not deterministic")
		}
	}

	wb, err := compile([]string{"WEAVE_CC=gcc"}, woven, weaveBin, "cc")
	if err != nil || wb.code != 0 {
		failed("woven build: %v exit %d\n%s%s", err, wb.code, wb.stdout, wb.stderr)
	}
	var reasons []string
	for _, m := range fellBack.FindAllStringSubmatch(wb.stderr, -1) {
		reasons = append(reasons, m[1]+": "+m[2])
	}
	if compilerDiags(wb.stderr) != compilerDiags(pb.stderr) {
		failed("woven build's diagnostics differ from the plain build's:\nplain:\n%s\nwoven:\n%s", pb.stderr, wb.stderr)
	}
	prof := filepath.Join(dir, "out.prof")
	wr, err := runLimited(dir, []string{"WEAVE_OUT=" + prof}, p.stdin, 3*p.limit, append([]string{woven}, p.args...)...)
	if err != nil {
		failed("woven run: %v (plain run exits 0)\n%s", err, wr.stderr)
	}
	if wr.code != 0 || wr.stdout != pr.stdout || stripSummary(wr.stderr) != pr.stderr {
		failed("woven run differs (fallback reasons: %q):\nplain: exit 0\n%s%s\nwoven: exit %d\n%s%s",
			reasons, limitText(pr.stdout), pr.stderr, wr.code, limitText(wr.stdout), wr.stderr)
	}
	if len(reasons) > 0 {
		// Every program must be woven: a fallback is a failure, naming the
		// file and the reason.
		s.add(func(s *corpusStats) {
			s.fellBack++
			for _, r := range reasons {
				k := reasonKind(r)
				s.reasons[k] = append(s.reasons[k], p.name)
			}
		})
		t.Fatalf("%s: built unwoven (weave cc fell back): %s", p.src, strings.Join(reasons, "; "))
	}
	s.add(func(s *corpusStats) { s.ok++ })
}

// compilerDiag matches the first line of a compiler diagnostic.
var compilerDiag = regexp.MustCompile(`(?m)^\S+:\d+:\d+: .*\n?`)

// compilerDiags returns the compiler's diagnostics in the output of a
// build. The linker's are left out: they name temporary objects and text
// offsets, which differ between builds.
func compilerDiags(s string) string {
	return strings.Join(compilerDiag.FindAllString(s, -1), "")
}

// limitText shortens program output for a failure message.
func limitText(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "...[truncated]\n"
	}
	return s
}

// TestTorture runs every gcc c-torture execute test that passes plain,
// woven, and checks it still passes with the same output.
func TestTorture(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus test skipped under -short")
	}
	testtool.Need(t, "gcc")
	src := t.TempDir()
	// Top-level files only: some tests #include a sibling; none need
	// builtins/ or ieee/.
	unpackCorpus(t, tortureDir, src, func(rel string, d fs.DirEntry) bool { return !d.IsDir() })
	names, err := filepath.Glob(filepath.Join(src, "*.c"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no torture tests in %s: %v", src, err)
	}
	s := &corpusStats{reasons: map[string][]string{}}
	start := time.Now()
	t.Cleanup(func() { s.report(t, "torture", start) })
	for _, file := range names {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("dg-additional-sources")) {
			continue // needs another translation unit
		}
		name := strings.TrimSuffix(filepath.Base(file), ".c")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			checkCorpusProgram(t, s, corpusProgram{
				name:  name,
				src:   file,
				flags: tortureFlags,
				libs:  []string{"-lm"},
				limit: 10 * time.Second,
			})
		})
	}
}

// TestBenchmarksGame runs the benchmarks game programs that build and run
// plain, woven, and checks they give the same output. Arguments are
// scaled down (benchArgs); the programs reading stdin get the output of
// the plain fasta program.
func TestBenchmarksGame(t *testing.T) {
	if testing.Short() {
		t.Skip("corpus test skipped under -short")
	}
	testtool.Need(t, "gcc")
	src := t.TempDir()
	unpackCorpus(t, benchDir, src, func(rel string, d fs.DirEntry) bool {
		return rel == "Include" || strings.HasPrefix(rel, "Include/") ||
			!d.IsDir() && (path.Ext(rel) == ".c" || path.Ext(rel) == ".arg")
	})
	names, err := filepath.Glob(filepath.Join(src, "*.c"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no benchmarks in %s: %v", src, err)
	}
	flags := append(append([]string{}, benchFlags...), "-I", filepath.Join(src, "Include"))

	// The input of the programs reading stdin.
	fasta := ""
	fastaExe := filepath.Join(t.TempDir(), "fasta")
	build := append(append([]string{"gcc"}, flags...), filepath.Join(src, "fasta.c"), "-lm", "-o", fastaExe)
	if r := run(t, src, nil, build...); r.code != 0 {
		t.Logf("fasta does not build, the programs reading stdin are excluded:\n%s", r.stderr)
	} else if r, err := runLimited(src, nil, "", time.Minute, fastaExe, fastaInputArg); err != nil || r.code != 0 {
		t.Logf("fasta %s: %v exit %d, the programs reading stdin are excluded", fastaInputArg, err, r.code)
	} else {
		fasta = filepath.Join(src, "input.fasta")
		if err := os.WriteFile(fasta, []byte(r.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	s := &corpusStats{reasons: map[string][]string{}}
	start := time.Now()
	t.Cleanup(func() { s.report(t, "benchmarksgame", start) })
	variant := regexp.MustCompile(`-\d+$`)
	for _, file := range names {
		name := strings.TrimSuffix(filepath.Base(file), ".c")
		base := variant.ReplaceAllString(name, "")
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p := corpusProgram{
			name:    name,
			src:     file,
			flags:   flags,
			libs:    []string{"-lm"},
			limit:   20 * time.Second,
			recheck: true,
		}
		for _, l := range benchLibs {
			if bytes.Contains(text, []byte("#include "+l.include)) {
				p.libs = append(p.libs, l.flags...)
				p.library = l.include
			}
		}
		if a, err := os.ReadFile(strings.TrimSuffix(file, ".c") + ".arg"); err == nil {
			p.args = strings.Fields(string(a))
			if small, ok := benchArgs[base]; ok {
				p.args = []string{small}
			}
		}
		if benchStdin[base] {
			p.stdin = fasta
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if benchStdin[base] && fasta == "" {
				s.add(func(s *corpusStats) { s.excluded = append(s.excluded, name) })
				t.Skip("excluded: no fasta output for stdin")
			}
			checkCorpusProgram(t, s, p)
		})
	}
}
