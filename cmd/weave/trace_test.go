package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/tracepoints"
)

// traceCounts are a trace's events per function and per allocation site
// line, checked for nesting on the way.
type traceCounts struct {
	enters, exits map[string]int // by function name
	allocs, frees map[int]int    // by site line
	sizes         map[uint64]int // alloc sizes
}

// readTrace reads prof's trace file and checks that each thread's function
// events nest (every exit closes the innermost open enter, of the same
// node at the same depth) and that every free is of a block an alloc
// event of the trace gave.
func readTrace(t *testing.T, prof string) (*profile.Profile, traceCounts) {
	t.Helper()
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(prof + ".trace")
	if err != nil {
		t.Fatalf("no trace file: %v", err)
	}
	defer f.Close()
	c := traceCounts{map[string]int{}, map[string]int{}, map[int]int{}, map[int]int{}, map[uint64]int{}}
	type open struct{ node, depth uint32 }
	stacks := map[uint32][]open{}
	live := map[uint64]bool{}
	err = tracepoints.Read(f, func(e tracepoints.Event) error {
		n := p.TraceNodes[e.Node]
		if n == nil {
			return fmt.Errorf("event of unmapped node %d", e.Node)
		}
		switch e.Kind {
		case tracepoints.Enter:
			c.enters[n.Func.Name]++
			stacks[e.Thread] = append(stacks[e.Thread], open{e.Node, e.Depth})
		case tracepoints.Exit:
			c.exits[n.Func.Name]++
			s := stacks[e.Thread]
			if len(s) == 0 || s[len(s)-1] != (open{e.Node, e.Depth}) {
				return fmt.Errorf("thread %d: exit of %s at depth %d does not close the innermost enter (%v)", e.Thread, n.Func.Name, e.Depth, s)
			}
			stacks[e.Thread] = s[:len(s)-1]
		case tracepoints.Alloc:
			c.allocs[n.Site.Line]++
			c.sizes[e.Size]++
			live[e.Addr] = true
		case tracepoints.Free:
			c.frees[n.Site.Line]++
			if !live[e.Addr] {
				return fmt.Errorf("free of %#x, which no alloc event gave", e.Addr)
			}
			delete(live, e.Addr)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// calls sums the calls of fn over the profile's contexts; allocs and
// frees those of the allocation sites at line.
func calls(p *profile.Profile, fn string) (n int) {
	for _, x := range p.Nodes {
		if x.Kind == profile.KindFunc && x.Func.Name == fn {
			n += int(x.Calls)
		}
	}
	return n
}

func siteCounts(p *profile.Profile, line int) (allocs, frees int) {
	for _, x := range p.Nodes {
		if x.Kind == profile.KindAlloc && !x.Site.Hidden && x.Site.Line == line {
			for i := range profile.NumClasses {
				allocs += int(x.Heap.Allocs[i])
				frees += int(x.Heap.Frees[i])
			}
		}
	}
	return allocs, frees
}

// itemLine is the line of the allocation marked ITEM in traceloop.c.
func itemLine(t *testing.T) int {
	b, err := os.ReadFile("../../testdata/hardening/traceloop.c")
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "/* ITEM */") {
			return i + 1
		}
	}
	t.Fatal("no ITEM line")
	return 0
}

func TestTraceFromStart(t *testing.T) {
	testtool.Need(t, "gcc")
	t.Setenv("WEAVE_FRAMES", "all") // depth_sum, a leaf, gets a frame only so
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "traceloop", nil, nil)
	want := run(t, dir, nil, plain, "40")
	line := itemLine(t)
	for _, mode := range []string{"sampled", "exact", "off"} {
		t.Run(mode, func(t *testing.T) {
			prof := filepath.Join(dir, mode+".prof")
			env := []string{"WEAVE_OUT=" + prof, "WEAVE_TIME=" + mode,
				"WEAVE_TRACE=work,depth_*,alloc:traceloop.c:" + strconv.Itoa(line)}
			got := run(t, dir, env, woven, "40")
			sameRun(t, "traced run", want, got)
			p, c := readTrace(t, prof)
			for _, fn := range []string{"work", "depth_sum"} {
				if n := calls(p, fn); c.enters[fn] != n || c.exits[fn] != n || n == 0 {
					t.Errorf("%s: %d calls in the profile, %d enter and %d exit events", fn, n, c.enters[fn], c.exits[fn])
				}
			}
			if c.enters["run"] != 0 || c.enters["make_item"] != 0 {
				t.Errorf("untraced functions in the trace: %v", c.enters)
			}
			allocs, frees := siteCounts(p, line)
			if allocs != 3*40*20 || c.allocs[line] != allocs || c.frees[line] != frees || frees != allocs/2 {
				t.Errorf("site %d: profile %d allocs %d frees; trace %d allocs %d frees (want %d allocs, half freed)",
					line, allocs, frees, c.allocs[line], c.frees[line], 3*40*20)
			}
			if len(c.sizes) != 1 || c.sizes[24] != allocs {
				t.Errorf("alloc sizes %v, want all 24 (sizeof(struct item))", c.sizes)
			}
			meta := map[string]string{}
			for _, m := range p.Meta {
				meta[m.Key] = m.Value
			}
			if meta["trace_dropped"] != "0" {
				t.Errorf("dropped events: %s", meta["trace_dropped"])
			}
		})
	}
	t.Run("perfetto", func(t *testing.T) {
		prof := filepath.Join(dir, "sampled.prof")
		out := filepath.Join(dir, "trace.json")
		mustRun(t, dir, nil, weaveBin, "report", "--format", "perfetto", "-o", out, prof)
		checkTraceEventFormat(t, out)
	})
}

// TestTraceBesideProfile: the trace file goes beside the profile and the
// summary names both as they are, when WEAVE_OUT names a directory (no
// trailing slash) the run writes a profile of its own name in. Before,
// the trace was created in the working directory, from WEAVE_OUT's text
// taken as a file's name, while the summary named it in the directory.
func TestTraceBesideProfile(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "traceloop", nil, nil)
	run := filepath.Join(dir, "run")
	profs := filepath.Join(run, "profs")
	if err := os.MkdirAll(profs, 0o755); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, run, []string{"WEAVE_OUT=profs", "WEAVE_SUMMARY=1", "WEAVE_TRACE=work"}, woven, "10")
	named := func(what string) string {
		m := regexp.MustCompile(`(?m)^==weave \d+== ` + what + ` written to (\S+)`).FindStringSubmatch(r.stderr)
		if m == nil {
			t.Fatalf("the summary names no %s:\n%s", what, r.stderr)
		}
		return filepath.Join(run, m[1])
	}
	prof, trace := named("profile"), named("trace")
	if filepath.Dir(prof) != profs || trace != prof+".trace" {
		t.Errorf("profile written to %s, trace to %s; want a profile in %s and its trace beside it", prof, trace, profs)
	}
	found, _ := filepath.Glob(filepath.Join(run, "*", "*.trace"))
	top, _ := filepath.Glob(filepath.Join(run, "*.trace"))
	if len(found) != 1 || found[0] != trace || len(top) != 0 {
		t.Errorf("trace files %v %v, want only %s", top, found, trace)
	}
	if p, c := readTrace(t, prof); c.enters["work"] == 0 || c.enters["work"] != calls(p, "work") {
		t.Errorf("the trace has %d entries of work, the profile %d calls", c.enters["work"], calls(p, "work"))
	}
}

// TestTraceExportBudget exports a trace of over a million events: the
// JSON is several times larger than anything weave report may hold, and
// every event of the trace is in it. The program's trace is repeated
// (its blocks are self-contained) up to that size, so that events dropped
// on a loaded machine do not shrink the test.
func TestTraceExportBudget(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "traceloop", nil, nil)
	prof := filepath.Join(dir, "big.prof")
	mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_FRAMES=all", "WEAVE_TRACE=*,alloc:*"}, woven, "2000")
	_, c := readTrace(t, prof)
	events := 0
	for _, m := range []map[string]int{c.enters, c.exits} {
		for _, n := range m {
			events += n
		}
	}
	for _, m := range []map[int]int{c.allocs, c.frees} {
		for _, n := range m {
			events += n
		}
	}
	if events == 0 {
		t.Fatal("no events traced")
	}
	trace, err := os.ReadFile(prof + ".trace")
	if err != nil {
		t.Fatal(err)
	}
	copies := (1_100_000 + events - 1) / events
	if err := os.WriteFile(prof+".trace", bytes.Repeat(trace, copies), 0o600); err != nil {
		t.Fatal(err)
	}
	events *= copies
	out := filepath.Join(dir, "big.json")
	// The Go heap, from the collector's trace: the process's own peak RSS
	// cannot be had from here, as a child started by os/exec shares the
	// test's memory until it execs, and ru_maxrss counts that.
	cmd := exec.Command(weaveBin, "report", "--format", "perfetto", "-o", out, prof)
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("weave report: %v\n%s", err, b)
	}
	var heap int64
	gcs := regexp.MustCompile(`(\d+)->(\d+)->\d+ MB`).FindAllSubmatch(b, -1)
	for _, m := range gcs {
		for _, v := range m[1:] {
			n, _ := strconv.ParseInt(string(v), 10, 64)
			heap = max(heap, n<<20)
		}
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	const budget = 64 << 20
	t.Logf("%d events: %d MB of JSON exported with a Go heap of at most %d MB (%d collections)", events, fi.Size()>>20, heap>>20, len(gcs))
	if len(gcs) == 0 || heap > budget || fi.Size() < 2*heap {
		t.Errorf("exporting %d MB of JSON took a %d MB heap (%d collections): not streamed (budget %d MB)", fi.Size()>>20, heap>>20, len(gcs), budget>>20)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// One event a line (the export's layout), each checked alone: decoding
	// the whole document would hold hundreds of megabytes here.
	got := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := bytes.TrimSuffix(sc.Bytes(), []byte(","))
		if !bytes.HasPrefix(line, []byte(`{"ph"`)) {
			continue // the document's head and tail
		}
		var e struct {
			Ph string `json:"ph"`
		}
		if err := json.Unmarshal(line, &e); err != nil {
			t.Fatalf("event %q: %v", line, err)
		}
		if e.Ph == "B" || e.Ph == "E" || e.Ph == "i" {
			got++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if got != events {
		t.Errorf("%d events in the JSON, %d in the trace", got, events)
	}
}

// checkTraceEventFormat checks a Trace Event Format file: valid JSON, the
// fields every event needs, and B/E events nested per thread.
func checkTraceEventFormat(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	stacks := map[float64][]string{}
	kinds := map[string]int{}
	for i, e := range doc.TraceEvents {
		ph, _ := e["ph"].(string)
		kinds[ph]++
		for _, k := range []string{"ph", "name", "pid", "tid"} {
			if _, ok := e[k]; !ok {
				t.Fatalf("event %d has no %q: %v", i, k, e)
			}
		}
		if _, ok := e["ts"].(float64); !ok && ph != "M" {
			t.Fatalf("event %d has no numeric ts: %v", i, e)
		}
		tid := e["tid"].(float64)
		switch ph {
		case "B":
			stacks[tid] = append(stacks[tid], e["name"].(string))
		case "E":
			s := stacks[tid]
			if len(s) == 0 || s[len(s)-1] != e["name"] {
				t.Fatalf("event %d: E %v does not close the innermost B on tid %v (%v)", i, e["name"], tid, s)
			}
			stacks[tid] = s[:len(s)-1]
		}
	}
	for tid, s := range stacks {
		if len(s) != 0 {
			t.Errorf("tid %v: slices left open: %v", tid, s)
		}
	}
	if kinds["B"] == 0 || kinds["i"] == 0 || kinds["C"] == 0 || kinds["M"] == 0 {
		t.Errorf("missing event kinds: %v", kinds)
	}
}

// startLoop builds testdata/hardening/traceloop.c woven and starts it for
// about 2 s, writing its profile to prof in dir; it returns once the
// program runs, with its pid and its stderr (complete after cmd.Wait).
func startLoop(t *testing.T, dir, prof string) (cmd *exec.Cmd, pid string, stderr *strings.Builder) {
	t.Helper()
	testtool.Need(t, "gcc")
	_, woven := hbuild(t, dir, "traceloop", nil, nil)
	return startLoopBin(t, dir, woven, prof)
}

// TestSnapshotRelative: a process whose WEAVE_OUT is relative, snapshot
// from another directory: weave snapshot names the profile so that its
// user can open it (it was "rel.prof", relative to the process's
// directory).
func TestSnapshotRelative(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	cmd, pid, stderr := startLoop(t, dir, "rel.prof")
	r := mustRun(t, elsewhere, nil, weaveBin, "snapshot", pid)
	if want := "profile written to " + filepath.Join(dir, "rel.prof") + "\n"; !strings.HasSuffix(r.stdout, want) {
		t.Errorf("weave snapshot from another directory: %q, want ...%q", r.stdout, want)
	}
	if r := mustRun(t, dir, nil, weaveBin, "snapshot", pid); !strings.HasSuffix(r.stdout, " rel.prof\n") {
		t.Errorf("weave snapshot from the process's directory: %q, want rel.prof", r.stdout)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
}

// TestSnapshotIntoStream: weave snapshot of a process whose profile goes
// into a stream (WEAVE_OUT=/dev/stdout) is refused, exit 1: it would be
// a second profile in the stream. The process goes on and writes its
// one profile at exit.
func TestSnapshotIntoStream(t *testing.T) {
	dir := t.TempDir()
	cmd, pid, stderr := startLoop(t, dir, "/dev/stdout")
	r := run(t, dir, nil, weaveBin, "snapshot", pid)
	if r.code != 1 || !strings.Contains(r.stderr, "the profile goes into a stream") {
		t.Errorf("weave snapshot: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(stderr.String(), "profile written to /dev/stdout") {
		t.Fatalf("%v\n%s", err, stderr)
	}
}

func TestTraceLive(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "live.prof")
	cmd, pid, stderr := startLoop(t, dir, prof)
	r := mustRun(t, dir, nil, weaveBin, "trace", pid, "work")
	if !strings.Contains(r.stdout, "tracing work") {
		t.Errorf("weave trace: %q", r.stdout)
	}
	// Patterns that match nothing are refused and tracing stays as it
	// was (work goes on being traced, checked below); it said "tracing
	// nosuchfn", exit 0, and traced nothing.
	for _, pats := range [][]string{{"nosuchfn"}, {"work", "file:nosuch.c"}, {"dir:nosuch"}, {"alloc:nosuch.c"}, {"alloc:nosuch.c:18"}} {
		r := run(t, dir, nil, append([]string{weaveBin, "trace", pid}, pats...)...)
		if want := " no woven function or allocation site: tracing unchanged\n"; r.code != 1 || !strings.HasSuffix(r.stderr, want) || !strings.Contains(r.stderr, "'"+pats[len(pats)-1]+"' match") {
			t.Errorf("weave trace %s: exit %d, stderr %q; want exit 1 naming %s and ending %q", pats, r.code, r.stderr, pats[len(pats)-1], want)
		}
	}
	for _, pats := range []string{"alloc:traceloop.c:9999", "alloc:*"} { // a site not seen yet, any site
		if r := run(t, dir, nil, weaveBin, "trace", pid, "work", pats); r.code != 0 {
			t.Errorf("weave trace work %s: exit %d, stderr %q", pats, r.code, r.stderr)
		}
	}
	mustRun(t, dir, nil, weaveBin, "trace", pid, "work")
	time.Sleep(300 * time.Millisecond)
	mustRun(t, dir, nil, weaveBin, "trace", pid, "--off")
	r = mustRun(t, dir, nil, weaveBin, "snapshot", pid)
	if !strings.Contains(r.stdout, prof) {
		t.Errorf("weave snapshot: %q", r.stdout)
	}
	snap, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatalf("the snapshot is not a readable profile: %v", err)
	}
	if v := metaValue(snap, "end"); v != "snapshot" {
		t.Errorf("snapshot's M end %q", v)
	}
	// Bad requests: the process goes on.
	if r := run(t, dir, nil, weaveBin, "trace", pid, "bogus:x"); r.code == 0 || !strings.Contains(r.stderr, "unknown pattern kind") {
		t.Errorf("unknown pattern kind: exit %d %s", r.code, r.stderr)
	}
	conn, err := net.Dial("unixpacket", tracepoints.Socket(controlDir(t), cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("launch the missiles\n"))
	ans := make([]byte, 100)
	n, _ := conn.Read(ans)
	conn.Close()
	if string(ans[:n]) != "error unknown request" {
		t.Errorf("malformed request answered %q", ans[:n])
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the traced process failed: %v\n%s", err, stderr.String())
	}
	if n := strings.Count(stderr.String(), "malformed request ignored"); n != 1 {
		t.Errorf("want one line on the malformed request, got %d:\n%s", n, stderr.String())
	}
	p, c := readTrace(t, prof)
	if metaValue(p, "end") != "exit" {
		t.Errorf("final profile's M end %q", metaValue(p, "end"))
	}
	if c.enters["work"] == 0 || c.enters["work"] >= calls(p, "work") || c.enters["work"] != c.exits["work"] {
		t.Errorf("work: %d enters, %d exits while traced, of %d calls", c.enters["work"], c.exits["work"], calls(p, "work"))
	}
}

func metaValue(p *profile.Profile, key string) string {
	for _, m := range p.Meta {
		if m.Key == key {
			return m.Value
		}
	}
	return ""
}

func TestTraceRefusals(t *testing.T) {
	testtool.Need(t, "sleep")
	sleep := exec.Command("sleep", "5")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer sleep.Process.Kill()
	r := run(t, ".", nil, weaveBin, "trace", strconv.Itoa(sleep.Process.Pid), "main")
	if r.code == 0 || !strings.Contains(r.stderr, "not a woven program") {
		t.Errorf("non-woven process: exit %d %s", r.code, r.stderr)
	}
	if err := sleep.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	sleep.Wait()
	r = run(t, ".", nil, weaveBin, "snapshot", strconv.Itoa(sleep.Process.Pid))
	if r.code == 0 || !strings.Contains(r.stderr, "no process") {
		t.Errorf("gone process: exit %d %s", r.code, r.stderr)
	}
	if os.Getuid() == 0 && testtool.Has("setpriv") {
		other := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "sleep", "5")
		if err := other.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { other.Process.Kill(); other.Wait() }()
		time.Sleep(100 * time.Millisecond)
		r = run(t, ".", nil, weaveBin, "trace", strconv.Itoa(other.Process.Pid), "main")
		if r.code == 0 || !strings.Contains(r.stderr, "only its own user") {
			t.Errorf("another user's process: exit %d %s", r.code, r.stderr)
		}
	}
}

// TestTraceFork: a fork child writes its own trace beside its own
// profile, and each trace holds its process's events only (as many enters
// as its profile's calls). Before, the child took the parent's trace
// file: it named it after its own profile, with the parent's events in
// it, and the parent's profile had none.
func TestTraceFork(t *testing.T) {
	testtool.Need(t, "gcc")
	t.Setenv("WEAVE_FRAMES", "all") // work, a leaf, gets a frame only so
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "forktrace", nil, nil)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	sameRun(t, "traced fork", run(t, dir, nil, plain, "300"), run(t, dir, []string{"WEAVE_OUT=" + out + "/", "WEAVE_TRACE=work"}, woven, "300"))
	profs, _ := filepath.Glob(filepath.Join(out, "*.prof"))
	if len(profs) != 2 {
		t.Fatalf("profiles %v, want the parent's and the child's", profs)
	}
	var callsSeen []int
	for _, prof := range profs {
		p, c := readTrace(t, prof)
		n := calls(p, "work")
		if c.enters["work"] != n || c.exits["work"] != n {
			t.Errorf("%s: %d calls of work in the profile, %d enter and %d exit events in its trace", filepath.Base(prof), n, c.enters["work"], c.exits["work"])
		}
		callsSeen = append(callsSeen, n)
	}
	if slices.Sort(callsSeen); callsSeen[0] != 300 || callsSeen[1] != 600 {
		t.Errorf("calls of work %v, want the child's 300 and the parent's 600", callsSeen)
	}
}

// TestTraceWithoutProfile: a trace whose profile is not written (none
// wanted: WEAVE_OUT empty; or the write fails: here a file size limit)
// leaves no temporary file behind. Before, ".weave-HEX.tmp" stayed in the
// directory, as large as the trace.
func TestTraceWithoutProfile(t *testing.T) {
	testtool.Need(t, "gcc")
	testtool.Need(t, "prlimit")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "traceloop", nil, nil)
	for _, tc := range []struct {
		name string
		argv []string
		out  string
	}{
		{"WEAVE_OUT empty", []string{woven, "200"}, ""},
		// SIGXFSZ ignored, so that a write past the limit fails (EFBIG).
		{"write fails", []string{"sh", "-c", `trap "" XFSZ; exec prlimit --fsize=4096 "$0" 200`, woven}, "t.prof"},
	} {
		sub := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		r := run(t, sub, []string{"WEAVE_OUT=" + tc.out, "WEAVE_TRACE=work,alloc:*"}, tc.argv...)
		if r.code != 0 {
			t.Errorf("%s: exit %d\n%s", tc.name, r.code, r.stderr)
		}
		ents, _ := os.ReadDir(sub)
		for _, e := range ents {
			t.Errorf("%s: %s left in the directory; stderr:\n%s", tc.name, e.Name(), r.stderr)
		}
	}
}

// TestTraceKilled: a traced run killed by SIGKILL leaves nothing in the
// profile's directory. Before, its trace's temporary file (as large as
// the trace) stayed there, named ".weave-HEX.tmp"; now it has no name
// until the exit writer gives it one (O_TMPFILE).
func TestTraceKilled(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "traceloop", nil, nil)
	sub := filepath.Join(dir, "out")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(woven, "1000000", "1000")
	cmd.Dir = sub
	cmd.Env = append(os.Environ(), "WEAVE_TRACE=work,alloc:*", "WEAVE_OUT="+sub+"/")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// Wait until the trace file is open (a descriptor into sub), or the
	// test would kill the run before there is anything to leave.
	open := false
	for deadline := time.Now().Add(20 * time.Second); !open && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", cmd.Process.Pid))
		for _, fd := range fds {
			l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", cmd.Process.Pid, fd.Name()))
			open = open || strings.HasPrefix(l, sub+"/")
		}
	}
	if !open {
		t.Fatal("the traced run opened no trace file in its directory within 20 s")
	}
	time.Sleep(100 * time.Millisecond) // events written
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	ents, _ := os.ReadDir(sub)
	for _, e := range ents {
		t.Errorf("%s left in the directory by a killed run", e.Name())
	}
}
