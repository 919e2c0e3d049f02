package runtime

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

func TestErrno(t *testing.T) {
	t.Parallel()
	r := run(t, build(t, "gcc", "errno"), nil)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	got := weaveSummary(t, r)
	if got.InUseBlocks != 0 || got.Allocs != 11 || !strings.Contains(r.stderr, "All heap blocks were freed") {
		t.Errorf("summary %+v\n%s", got, r.stderr)
	}
	checkConsistent(t, readProfile(t, r.profile()), got)
}

// TestEmpty: a program that allocates nothing.
func TestEmpty(t *testing.T) {
	t.Parallel()
	r := run(t, build(t, "gcc", "empty"), nil)
	got := weaveSummary(t, r)
	if got != (heapSummary{}) || !regexp.MustCompile(`==weave \d+== All heap blocks were freed -- no leaks are possible\n`).MatchString(r.stderr) {
		t.Errorf("summary:\n%s", r.stderr)
	}
	p := readProfile(t, r.profile())
	if len(p.Threads) != 1 || len(p.Nodes) != 2 || len(p.allocs()) != 0 || len(p.Bins) != 0 || len(p.Sites) != 0 {
		t.Errorf("profile %v", p)
	}
	if n := p.Nodes[1]; n.Kind != profile.KindFunc || n.Calls != 1 || n.Func.Name != "main" {
		t.Errorf("profile %v", p)
	}
	if pid := p.meta["pid"]; p.Threads[0].TID != uint64(atoi(t, pid)) || !strings.HasSuffix(p.meta["argv"], "empty") {
		t.Errorf("metadata %v, thread %d", p.meta, p.Threads[0].TID)
	}
}

func atoi(t testing.TB, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestProfileName: without WEAVE_OUT the profile goes to
// weave-<prog>.<pid>.prof, never replacing an existing file.
func TestProfileName(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "empty")
	for _, clash := range []bool{false, true} {
		var args []string
		if clash {
			args = []string{"clash"}
		}
		r := runNoOut(t, exe, args...)
		entries, _ := os.ReadDir(r.dir)
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		m := regexp.MustCompile(`profile written to (weave-empty\.(\d+)(\.1)?\.prof) `).FindStringSubmatch(r.stderr)
		if m == nil || (m[3] != "") != clash {
			t.Fatalf("clash=%v: %s", clash, r.stderr)
		}
		want := []string{m[1]}
		if clash {
			want = []string{"weave-empty." + m[2] + ".1.prof", "weave-empty." + m[2] + ".prof"}
			if b, _ := os.ReadFile(filepath.Join(r.dir, want[1])); string(b) != "mine\n" {
				t.Errorf("existing file replaced: %q", b)
			}
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("clash=%v: files %v, want %v", clash, names, want)
		}
		readProfile(t, filepath.Join(r.dir, m[1]))
	}
}

// runNoOut is run without any WEAVE_ variable in the environment but
// WEAVE_SUMMARY=1.
func runNoOut(t testing.TB, exe string, args ...string) result {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(exe, args...)
	cmd.Dir = dir
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "WEAVE_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, "WEAVE_SUMMARY=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, stderr.String())
	}
	return result{stderr: stderr.String(), dir: dir}
}

// TestEnv: WEAVE_SUMMARY=0, WEAVE_OUT= (no profile), WEAVE_LEAKS, %p.
func TestEnv(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "allfns")
	r := run(t, exe, []string{"WEAVE_SUMMARY=0"})
	if r.stderr != "" {
		t.Errorf("WEAVE_SUMMARY=0 printed %q", r.stderr)
	}
	readProfile(t, r.profile())

	r = run(t, exe, []string{"WEAVE_OUT="})
	if entries, _ := os.ReadDir(r.dir); len(entries) != 0 || strings.Contains(r.stderr, "profile") {
		t.Errorf("WEAVE_OUT= wrote a profile: %v\n%s", entries, r.stderr)
	}
	weaveSummary(t, r)

	// A directory that is not there: the profile goes to TMPDIR, and a
	// line says so.
	tmp := t.TempDir()
	r = run(t, exe, []string{"WEAVE_LEAKS=2", "WEAVE_OUT=sub%p/x.%p.prof", "TMPDIR=" + tmp})
	if moved, _ := filepath.Glob(filepath.Join(tmp, "weave-allfns.*.prof")); !strings.Contains(r.stderr, "cannot write sub") ||
		!strings.Contains(r.stderr, "; the profile goes to "+tmp+"/weave-allfns.") || len(moved) != 1 {
		t.Errorf("missing directory not reported, or no profile in TMPDIR (%v):\n%s", moved, r.stderr)
	}
	if n := len(regexp.MustCompile(` blocks (definitely|indirectly|possibly) lost at `).FindAllString(r.stderr, -1)); n != 2 ||
		!regexp.MustCompile(`==weave \d+==   \.\.\. and \d+ more\n`).MatchString(r.stderr) {
		t.Errorf("WEAVE_LEAKS=2: %d leak lines\n%s", n, r.stderr)
	}
	weaveSummary(t, r)

	r = run(t, exe, []string{"WEAVE_OUT=p.%p.prof", "WEAVE_LEAKS=0"})
	m := regexp.MustCompile(`profile written to p\.(\d+)\.prof`).FindStringSubmatch(r.stderr)
	if m == nil || strings.Contains(r.stderr, "top leaks") {
		t.Fatalf("WEAVE_OUT=p.%%p.prof:\n%s", r.stderr)
	}
	p := readProfile(t, filepath.Join(r.dir, "p."+m[1]+".prof"))
	if p.meta["pid"] != m[1] {
		t.Errorf("pid %s in p.%s.prof", p.meta["pid"], m[1])
	}
	if entries, _ := os.ReadDir(r.dir); len(entries) != 1 {
		t.Errorf("files left: %v", entries)
	}
}

// TestNoWovenFunction: allocations outside any woven frame, in the main
// thread and in a thread that never runs woven code, go to the roots.
func TestNoWovenFunction(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "nowoven")
	r := run(t, exe, []string{"WEAVE_HIDDEN=0"})
	got := weaveSummary(t, r)
	if want := (heapSummary{500, 2, 3, 1, 600}); got != want {
		t.Errorf("summary %+v, want %+v", got, want)
	}
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if len(p.Threads) != 2 {
		t.Errorf("%d threads", len(p.Threads))
	}
	for _, n := range p.allocs() {
		if n.Parent.Kind != profile.KindRoot {
			t.Errorf("node %d not below a root", n.ID)
		}
		// The 100-byte block: main thread's, freed by the other thread.
		if h := n.Heap; h.TotalBytes() == 100 && (h.TotalFrees() != 1 || n.Thread.ID != 0) {
			t.Errorf("100-byte block: %+v in thread %d", h, n.Thread.ID)
		}
		if n.Heap.TotalBytes() == 300 && n.Thread.ID != 1 {
			t.Errorf("300-byte block in thread %d", n.Thread.ID)
		}
	}
	if !regexp.MustCompile(`300 bytes in 1 blocks at \S+nowoven.c:\d+ start\n`).MatchString(r.stderr) {
		t.Errorf("leak lines:\n%s", r.stderr)
	}
	checkAgainstValgrind(t, exe)
}

// TestSignal: a signal handler that allocates, interrupting allocation:
// no deadlock, crash, or leak.
func TestSignal(t *testing.T) {
	t.Parallel()
	r := run(t, buildSignal(t), nil)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "handled ") {
		t.Fatalf("exit %d, %q\n%s", r.code, r.stdout, r.stderr)
	}
	got := weaveSummary(t, r)
	if got.InUseBlocks != 0 || got.Allocs != got.Frees {
		t.Errorf("summary %+v", got)
	}
	checkConsistent(t, readProfile(t, r.profile()), got)
}

// TestFork: parent and child each write their own profile; the child's
// counts only what it did, and what it inherited is in its metadata.
func TestFork(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "forkcounts")
	dir := t.TempDir()
	r := run(t, exe, []string{"WEAVE_OUT=" + filepath.Join(dir, "p.%p.prof")})
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p.*.prof"))
	if len(files) != 2 {
		t.Fatalf("profiles %v", files)
	}
	byPid := map[string]*prof{}
	for _, f := range files {
		p := readProfile(t, f)
		if filepath.Base(f) != "p."+p.meta["pid"]+".prof" {
			t.Errorf("%s has pid %s", f, p.meta["pid"])
		}
		byPid[p.meta["pid"]] = p
	}
	var parent, child *prof
	for _, p := range byPid {
		if byPid[p.meta["ppid"]] != nil {
			child = p
		} else {
			parent = p
		}
	}
	if parent == nil || child == nil {
		t.Fatal("no parent/child pair")
	}
	if pt, ct := parent.totals(), child.totals(); pt != (heapSummary{10, 1, 2, 1, 25}) || ct != (heapSummary{20, 1, 1, 0, 20}) {
		t.Errorf("parent %+v child %+v", pt, ct)
	}
	if child.meta["inherited"] != "2 25" || child.meta["inherited_freed"] != "1 15" || parent.meta["inherited"] != "" {
		t.Errorf("inherited: child %q %q, parent %q", child.meta["inherited"], child.meta["inherited_freed"], parent.meta["inherited"])
	}
	if len(child.Threads) != 1 || child.meta["end"] != "exit" {
		t.Errorf("child: %d threads, end %q", len(child.Threads), child.meta["end"])
	}
	for _, n := range child.called() {
		if n.Func.Name != "child" || n.Calls != 1 {
			t.Errorf("child profile: %s called %d times, want child once", n.Func.Name, n.Calls)
		}
	}
	if child.Threads[0].TID != uint64(atoi(t, child.meta["pid"])) {
		t.Errorf("child's thread tid %d, pid %s", child.Threads[0].TID, child.meta["pid"])
	}
}

// TestForkFixedOut: with WEAVE_OUT a fixed path, the child writes it first
// and the parent, writing later, never replaces it: the parent's name gets
// its pid, and its summary says so. A later run replaces the earlier run's
// file.
func TestForkFixedOut(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "forkcounts")
	dir := t.TempDir()
	out := filepath.Join(dir, "fixed.prof")
	for round := 1; round <= 2; round++ {
		r := run(t, exe, []string{"WEAVE_OUT=" + out})
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		child := readProfile(t, out)
		parentPath := filepath.Join(dir, "fixed."+child.meta["ppid"]+".prof")
		parent := readProfile(t, parentPath)
		if parent.meta["pid"] != child.meta["ppid"] || parent.meta["inherited"] != "" || child.meta["inherited"] == "" {
			t.Errorf("round %d: %s is not the parent's (pid %s) or %s not the child's", round, parentPath, parent.meta["pid"], out)
		}
		if !strings.Contains(r.stderr, "profile written to "+parentPath+" ") {
			t.Errorf("round %d: the parent's summary does not name %s:\n%s", round, parentPath, r.stderr)
		}
		if files, _ := filepath.Glob(filepath.Join(dir, "fixed*.prof")); len(files) != round+1 {
			t.Errorf("round %d: files %v", round, files)
		}
	}
}

// TestDeep: recursion beyond the maximum pseudo-stack depth. Folded, it
// costs the runtime a few nodes and 16 bytes of pseudo-stack a level, not a
// node per level: compare the peak RSS with a shallow run's.
func TestDeep(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "overdeep")
	r := run(t, exe, []string{"WEAVE_STATS=1"})
	got := weaveSummary(t, r)
	p := readProfile(t, r.profile())
	checkConsistent(t, p, got)
	if w := p.wovenTotals(); r.code != 0 || w != (heapSummary{6, 3, 3, 0, 6}) {
		t.Fatalf("exit %d, woven allocations %+v\n%s", r.code, w, r.stderr)
	}
	for _, n := range p.allocs() {
		c, b := chain(n), n.Heap.TotalBytes()
		switch {
		case n.Site.Hidden:
		case b == 1:
			// Recursion is folded: deep below deep holds every level.
			if c != "deep<deep<run" {
				t.Errorf("deepest block at %q", c)
			}
		case b == 2:
			if c != "run" {
				t.Errorf("2-byte block at %q", c)
			}
		case b == 3:
			if c != "main" {
				t.Errorf("3-byte block at %q", c)
			}
		}
	}
	// Calls: deep once from run, then from deep at every level: an
	// untimed frame takes no slot on the timed frames' stack, so no depth
	// is too deep (before ABI 2, levels beyond its 1<<20 slots were not
	// pushed).
	const depth = 1<<20 + 1000
	for _, n := range p.called() {
		switch c := n.Calls; chain(n) {
		case "run":
			if c != 1 {
				t.Errorf("run > deep called %d times", c)
			}
		case "deep<run":
			if c != depth {
				t.Errorf("deep > deep called %d times, want %d", c, depth)
			}
		}
	}
	m := regexp.MustCompile(`runtime: ([\d,]+) nodes`).FindStringSubmatch(r.stderr)
	if m == nil || atoi(t, strings.ReplaceAll(m[1], ",", "")) > 20 {
		t.Errorf("runtime stats:\n%s", r.stderr)
	}
	// Per level, the deep run may cost its C stack frame; a pseudo-stack
	// entry (16 bytes) or a calling-context node per level (32 bytes or
	// more) would exceed the 8 MiB of slack several times over.
	frame := stackUsage(t, "overdeep", "deep")
	deep, shallow := maxRSS(t, exe), maxRSS(t, exe, "10")
	limit := shallow + depth*frame/1024 + 8<<10
	if deep > limit {
		t.Errorf("peak RSS %d KiB at depth %d, %d KiB at depth 10: more than %d KiB (C frames of %d bytes and the pseudo-stack)",
			deep, depth, shallow, limit, frame)
	}
}

// stackUsage returns the bytes of C stack a call of function fn of
// testdata/<prog>.c takes (gcc -fstack-usage, return address included),
// compiled as build compiles it.
func stackUsage(t *testing.T, prog, fn string) int64 {
	t.Helper()
	dir := t.TempDir()
	obj := filepath.Join(dir, prog+".o")
	args := []string{"-std=gnu11", "-O1", "-g", "-I.", "-I../pseudostack", "-Itestdata", "-fstack-usage", "-c",
		filepath.Join("testdata", prog+".c"), "-o", obj}
	if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	su, err := os.ReadFile(filepath.Join(dir, prog+".su"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m):` + fn + `\t(\d+)\tstatic$`).FindSubmatch(su)
	if m == nil {
		t.Fatalf("no static stack usage of %s in:\n%s", fn, su)
	}
	n, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return n
}

// maxRSS runs exe and returns its peak resident set size in KiB.
func maxRSS(t *testing.T, exe string, args ...string) int64 {
	t.Helper()
	cmd := exec.Command(exe, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "WEAVE_OUT=", "WEAVE_SUMMARY=0")
	peak := testtool.WithPeakRSS(t, cmd)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", exe, err, out)
	}
	return peak()
}

// BenchmarkPairs runs testdata/bench.c and reports its ns per
// malloc+free pair, plain and through the runtime.
func BenchmarkPairs(b *testing.B) {
	exe := build(b, "gcc", "bench")
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(exe, "5000000", "1000000")
		// WEAVE_HIDDEN=0: the program's own malloc calls stay the baseline.
		cmd.Env = append(os.Environ(), "WEAVE_OUT=", "WEAVE_SUMMARY=0", "WEAVE_HIDDEN=0")
		out, err := cmd.Output()
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(l)
			v, _ := strconv.ParseFloat(f[1], 64)
			b.ReportMetric(v, f[0]+"-ns")
		}
	}
}

// TestProfileToDevice: WEAVE_OUT naming a character device (/dev/null)
// or a descriptor that is a stream (/dev/stdout, /dev/fd/N into a pipe)
// gets the profile written into it; nothing is created beside it, not
// even a trace's file, and the summary suggests no "weave report
// /dev/null". A descriptor that is a regular file or closed is refused.
// (A FIFO may be planted, and gets a name beside it:
// TestSecurityPlantedLinks.) Before, WEAVE_OUT=/dev/stdout made
// /dev/stdout.1 (as root; "permission denied" as a user), and a trace
// beside /dev/null went to /dev/null.trace.
func TestProfileToDevice(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "allfns")
	devFiles := func() []string {
		m, _ := filepath.Glob("/dev/null.*")
		n, _ := filepath.Glob("/dev/std*.*")
		o, _ := filepath.Glob("/dev/.weave-*")
		return slices.Concat(m, n, o)
	}
	before := devFiles()
	r := run(t, exe, []string{"WEAVE_OUT=/dev/null", "WEAVE_TRACE=alloc:*"})
	if !strings.Contains(r.stderr, "profile written to /dev/null\n") {
		t.Errorf("WEAVE_OUT=/dev/null:\n%s", r.stderr)
	}
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		t.Errorf("/dev/null is no longer a character device: %v %v", fi, err)
	}
	// stdout is a pipe here: the profile comes through it, after the
	// program's own output.
	for _, out := range []string{"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"} {
		r = run(t, exe, []string{"WEAVE_OUT=" + out})
		if !regexp.MustCompile(`(?s)weave profile 1\n.*\nE [0-9]+\n$`).MatchString(r.stdout) || !strings.Contains(r.stderr, "profile written to "+out+"\n") {
			t.Errorf("WEAVE_OUT=%s: stdout %.200q, stderr:\n%s", out, r.stdout, r.stderr)
		}
	}
	// A descriptor closed, or a regular file (maybe the program's own):
	// not written into, and the profile not lost (before, it was not
	// written at all): the default name, and a line says so.
	stdoutFile := filepath.Join(t.TempDir(), "stdout")
	f, err := os.Create(stdoutFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct{ out, why string }{{"/dev/fd/9", "Bad file descriptor"}, {"/dev/stdout", "Device not a stream"}} {
		wd := t.TempDir()
		cmd := exec.Command(exe)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), "WEAVE_OUT="+tc.out, "WEAVE_SUMMARY=1")
		var stderr strings.Builder
		cmd.Stdout, cmd.Stderr = f, &stderr
		err := cmd.Run()
		profs, _ := filepath.Glob(filepath.Join(wd, "weave-allfns.*.prof"))
		if err != nil || len(profs) != 1 || !strings.Contains(stderr.String(), "WEAVE_OUT="+tc.out+": "+tc.why+"; the profile goes to "+filepath.Base(profs[0])+"\n") {
			t.Errorf("WEAVE_OUT=%s: %v, profiles %v\n%s", tc.out, err, profs, stderr.String())
		}
	}
	if b, _ := os.ReadFile(stdoutFile); strings.Contains(string(b), "weave profile") {
		t.Errorf("a profile was written into the regular file behind /dev/stdout")
	}
	// WEAVE_LOG too: it made /dev/stderr.1 and /dev/null.1.
	if r = run(t, exe, []string{"WEAVE_LOG=/dev/stderr"}); !strings.Contains(r.stderr, "HEAP SUMMARY") || strings.Contains(r.stderr, "WEAVE_LOG") {
		t.Errorf("WEAVE_LOG=/dev/stderr:\n%s", r.stderr)
	}
	if r = run(t, exe, []string{"WEAVE_LOG=/dev/null"}); r.stderr != "" {
		t.Errorf("WEAVE_LOG=/dev/null: stderr\n%s", r.stderr)
	}
	if after := devFiles(); len(after) != len(before) {
		t.Errorf("files made in /dev: %v (before: %v)", after, before)
	}
}

// TestSummaryBrokenPipe: the summary written into a stderr whose reader
// is gone (prog 2>&1 | head, head done) fails quietly: the program exits
// as it would have. It died of SIGPIPE (exit 141) where the plain program
// exits 0; the summary, with nothing else to write there, is the only
// writer that hits the closed pipe.
func TestSummaryBrokenPipe(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "allfns")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	defer w.Close()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "WEAVE_SUMMARY=1", "WEAVE_OUT="+filepath.Join(t.TempDir(), "out.prof"))
	cmd.Stderr = w
	if err := cmd.Run(); err != nil {
		t.Errorf("with stderr a closed pipe: %v (want exit 0)", err)
	}
}
