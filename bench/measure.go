package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one measured run.
type sample struct {
	Wall    time.Duration // wall-clock time from fork to wait4, in the helper
	CPU     time.Duration // user + system time of the process and the children it waited for
	RSS     int64         // peak RSS in bytes: the largest of the process and the children it waited for
	Profile int64         // bytes of the profile written, -1 if none
	Runtime int64         `json:",omitempty"` // the runtime's own maps at their largest, resident bytes (M runtime_resident: WEAVE_STATS=1), 0 if not said
	Err     string        `json:",omitempty"`
}

// runSpec is a command to measure.
type runSpec struct {
	dir   string // run directory: emptied before the run
	args  []string
	env   []string
	stdin string
	out   string // profile path (a glob) whose size is measured, or ""
}

// interrupted is cancelled by SIGINT or SIGTERM: the command being
// measured is then killed with its process group.
var interrupted context.Context = context.Background()

// rusageHelper is the helper that runs and measures a command
// (helper/rusage.c, built by setup).
var rusageHelper string

// measure runs a command once and measures it: wall time, CPU time and peak
// RSS as the helper reports them, and the size of the profile written.
func measure(r runSpec, timeout time.Duration) sample {
	s := sample{Profile: -1}
	if err := os.RemoveAll(r.dir); err != nil {
		s.Err = err.Error()
		return s
	}
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		s.Err = err.Error()
		return s
	}
	ctx, cancel := context.WithTimeout(interrupted, timeout)
	defer cancel()
	report := filepath.Join(r.dir, "rusage.txt")
	cmd := exec.CommandContext(ctx, rusageHelper, append([]string{report}, r.args...)...)
	cmd.Dir = r.dir
	cmd.Env = append(cleanEnv(), r.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	if r.stdin != "" {
		f, err := os.Open(r.stdin)
		if err != nil {
			s.Err = err.Error()
			return s
		}
		defer f.Close()
		cmd.Stdin = f
	}
	errPath := filepath.Join(r.dir, "stderr.txt")
	ef, err := os.Create(errPath)
	if err != nil {
		s.Err = err.Error()
		return s
	}
	cmd.Stderr = ef // standard output goes to /dev/null
	err = cmd.Run()
	ef.Close()
	var wall, user, sys, rss int64
	if b, rerr := os.ReadFile(report); rerr == nil {
		if _, rerr := fmt.Sscan(string(b), &wall, &user, &sys, &rss); rerr == nil {
			s.Wall = time.Duration(wall)
			s.CPU = time.Duration(user+sys) * time.Microsecond
			s.RSS = rss * 1024
		}
	}
	switch {
	case interrupted.Err() != nil:
		s.Err = "interrupted"
	case ctx.Err() != nil:
		s.Err = "timeout"
	case err != nil:
		msg, _ := os.ReadFile(errPath)
		s.Err = fmt.Sprintf("%v: %s", err, tail(string(msg), 5))
	case s.Wall == 0:
		s.Err = "no report from the rusage helper"
	}
	if r.out != "" && s.Err == "" {
		s.Profile = globSize(r.out)
		s.Runtime = runtimeResident(r.out)
	}
	return s
}

// runtimeResident is a weave profile's M runtime_resident, or 0. The M
// records come first: only the start of the file is read.
func runtimeResident(path string) int64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	b := make([]byte, 1<<16)
	n, _ := io.ReadFull(f, b)
	for _, line := range strings.Split(string(b[:n]), "\n") {
		if v, ok := strings.CutPrefix(line, "M runtime_resident "); ok {
			r, _ := strconv.ParseInt(v, 10, 64)
			return r
		}
	}
	return 0
}

// globSize is the total size of the files and directory trees matching
// a glob.
func globSize(glob string) int64 {
	matches, _ := filepath.Glob(glob)
	var n int64
	for _, m := range matches {
		filepath.WalkDir(m, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if fi, err := d.Info(); err == nil {
					n += fi.Size()
				}
			}
			return nil
		})
	}
	if matches == nil {
		return -1
	}
	return n
}

// results holds every measurement of a harness run.
type results struct {
	env      *env
	size     string
	sz       sizes
	runs     int
	configs  []*config
	programs []*program
	command  string
	elapsed  time.Duration

	cells   map[string]map[string][]sample // program -> config -> runs
	stats   map[string]*weaveStats         // program -> the runtime's numbers
	report  *toolRun                       // weave report on the largest profile
	merge   *toolRun                       // weave merge of a generated test suite's profiles
	weaving []*toolRun                     // weave and gcc -O0 -c on sqlite3.c
	failed  []string                       // plain or weave runs that failed
}

// toolRun is a command run several times, interleaved with others.
type toolRun struct {
	name, what string
	samples    []sample
}

// measureProgram runs every configuration of a program o.runs times,
// round by round, each round in an order rotated by one.
func (res *results) measureProgram(b *builder, p *program, o *options) {
	var cfgs []*config
	for _, c := range res.configs {
		if b.binary(p, c.variant) != "" && p.runs(c) {
			cfgs = append(cfgs, c)
		}
	}
	if res.cells == nil {
		res.cells = map[string]map[string][]sample{}
	}
	cells := map[string][]sample{}
	res.cells[p.name] = cells
	runDir := filepath.Join(res.env.work, "run")
	start := time.Now()
	for r := 0; r < o.runs; r++ {
		for i := range cfgs {
			c := cfgs[(i+r)%len(cfgs)]
			dir := filepath.Join(runDir, c.name)
			argv := append([]string{b.binary(p, c.variant)}, p.args...)
			args, env, out := c.wrap(dir, argv)
			s := measure(runSpec{dir: dir, args: args, env: env, stdin: p.stdin, out: out}, o.timeout)
			if s.Err != "" {
				logf("%s %s: %s", p.name, c.name, s.Err)
				if !c.peer {
					res.failed = append(res.failed, p.name+" "+c.name)
				}
			}
			cells[c.name] = append(cells[c.name], s)
			if c.name == "weave" && s.Err == "" {
				os.MkdirAll(filepath.Join(res.env.work, "profiles"), 0o755)
				os.Rename(out, res.profile(p))
			}
		}
		logf("%s: round %d/%d done (%s)", p.name, r+1, o.runs, time.Since(start).Round(time.Second))
	}
	os.RemoveAll(runDir)
}

// runs says whether configuration c runs on the program.
func (p *program) runs(c *config) bool {
	return !c.peer || p.peers == nil || slices.Contains(p.peers, c.name)
}

// profile is where the weave profile of a program's last run is kept.
func (res *results) profile(p *program) string {
	return filepath.Join(res.env.work, "profiles", p.name+".prof")
}

// weaveStats are the runtime's own numbers for a program (WEAVE_STATS=1)
// and the totals of its profile.
type weaveStats struct {
	Line         string // the runtime's stats line
	Nodes        int64
	NodeBytes    int64
	TableBytes   int64
	LiveBlocks   int64
	PerBlock     float64 // side table bytes per live block, as the runtime prints it
	Allocs       int64
	Frees        int64
	BlocksInUse  int64
	ProfileBytes int64
	Err          string `json:",omitempty"`
}

var statsLine = regexp.MustCompile(`==weave \d+== (runtime: .*)`)

// measureStats runs each program's weave build once more with WEAVE_STATS=1.
func (res *results) measureStats(b *builder, o *options) {
	res.stats = map[string]*weaveStats{}
	for _, p := range res.programs {
		bin := b.binary(p, vWeave)
		if bin == "" {
			continue
		}
		dir := filepath.Join(res.env.work, "run", "stats")
		prof := filepath.Join(dir, "weave.prof")
		s := measure(runSpec{dir: dir, args: append([]string{bin}, p.args...), env: []string{"WEAVE_STATS=1", "WEAVE_SUMMARY=1", "WEAVE_OUT=" + prof}, stdin: p.stdin, out: prof}, o.timeout)
		st := &weaveStats{ProfileBytes: s.Profile}
		res.stats[p.name] = st
		if s.Err != "" {
			st.Err = s.Err
			res.failed = append(res.failed, p.name+" weave (WEAVE_STATS=1)")
			continue
		}
		msg, _ := os.ReadFile(filepath.Join(dir, "stderr.txt"))
		if m := statsLine.FindStringSubmatch(string(msg)); m != nil {
			st.Line = m[1]
		}
		st.parse()
		out, err := exec.Command(res.env.weave, "report", "--format", "json", prof).Output()
		if err != nil {
			st.Err = fmt.Sprintf("weave report --format json: %v", err)
			res.failed = append(res.failed, p.name+" weave report")
			continue
		}
		var rep struct {
			Totals struct {
				Allocs      int64 `json:"allocs"`
				Frees       int64 `json:"frees"`
				BlocksInUse int64 `json:"blocks_in_use"`
			} `json:"totals"`
		}
		if err := json.Unmarshal(out, &rep); err != nil {
			st.Err = fmt.Sprintf("weave report --format json: %v", err)
			continue
		}
		st.Allocs, st.Frees, st.BlocksInUse = rep.Totals.Allocs, rep.Totals.Frees, rep.Totals.BlocksInUse
	}
	os.RemoveAll(filepath.Join(res.env.work, "run"))
}

// parse reads the runtime's stats line, e.g. "runtime: 10 nodes (48 bytes
// each), side table 9,961,472 bytes for 499,850 live blocks (19.92 bytes
// per block), 1 threads".
func (st *weaveStats) parse() {
	num := func(re string) string {
		if m := regexp.MustCompile(re).FindStringSubmatch(st.Line); m != nil {
			return strings.ReplaceAll(m[1], ",", "")
		}
		return ""
	}
	st.Nodes, _ = strconv.ParseInt(num(`([\d,]+) nodes`), 10, 64)
	st.NodeBytes, _ = strconv.ParseInt(num(`\((\d+) bytes each\)`), 10, 64)
	st.TableBytes, _ = strconv.ParseInt(num(`side table ([\d,]+) bytes`), 10, 64)
	st.LiveBlocks, _ = strconv.ParseInt(num(`([\d,]+) live blocks`), 10, 64)
	st.PerBlock, _ = strconv.ParseFloat(num(`([\d.]+) bytes per block`), 64)
}

// measureReport times weave report (all tables, text) on the largest
// profile the weave runs wrote.
func (res *results) measureReport(o *options) {
	var best string
	var size int64 = -1
	for _, p := range res.programs {
		if fi, err := os.Stat(res.profile(p)); err == nil && fi.Size() > size {
			best, size = p.name, fi.Size()
		}
	}
	if best == "" {
		return
	}
	prof := filepath.Join(res.env.work, "profiles", best+".prof")
	t := &toolRun{name: "weave report", what: fmt.Sprintf("`weave report` (text, all four tables) on the %s profile, %s bytes", best, commas(size))}
	for r := 0; r < o.runs; r++ {
		s := measure(runSpec{dir: filepath.Join(res.env.work, "run", "report"), args: []string{res.env.weave, "report", prof}}, o.timeout)
		s.Profile = size
		if s.Err != "" {
			res.failed = append(res.failed, "weave report "+best)
		}
		t.samples = append(t.samples, s)
	}
	res.report = t
}

// measureMerge times weave merge of a test suite's profiles, generated
// (mergegen.go) once per size under the work directory.
func (res *results) measureMerge(o *options) {
	n := res.sz.suiteRuns
	dir := filepath.Join(res.env.work, fmt.Sprintf("suite-%d", n))
	files, _ := filepath.Glob(filepath.Join(dir, "*.prof"))
	if len(files) != n {
		logf("generating %d profiles in %s", n, dir)
		os.RemoveAll(dir)
		if _, err := genSuite(dir, n); err != nil {
			res.failed = append(res.failed, "weave merge: generating the profiles: "+err.Error())
			return
		}
		files, _ = filepath.Glob(filepath.Join(dir, "*.prof"))
	}
	var size int64
	for _, f := range files {
		if fi, err := os.Stat(f); err == nil {
			size += fi.Size()
		}
	}
	t := &toolRun{name: "weave merge", what: fmt.Sprintf("`weave merge` of %s generated profiles of a test suite's runs, %s bytes", commas(int64(n)), commas(size))}
	args := append([]string{res.env.weave, "merge", "-o", "merged.prof"}, files...)
	for r := 0; r < o.runs; r++ {
		s := measure(runSpec{dir: filepath.Join(res.env.work, "run", "merge"), args: args}, o.timeout)
		if s.Err != "" {
			res.failed = append(res.failed, "weave merge")
		}
		t.samples = append(t.samples, s)
	}
	res.merge = t
}

// measureWeaveTime times weaving sqlite3.c against compiling it with
// gcc -O0 -c, interleaved.
func (res *results) measureWeaveTime(b *builder, o *options) {
	src := filepath.Join(res.env.corpus, "assets/sqlite-amalgamation-3380100/sqlite3.c")
	dir := filepath.Join(res.env.work, "run", "weaving")
	ts := []*toolRun{
		{name: "weave", what: "`weave -o sqlite3.woven.c sqlite3.c` (preprocessing with gcc included)"},
		{name: "gcc -O0 -c", what: "`gcc -O0 -c sqlite3.c`"},
	}
	specs := []runSpec{
		{dir: dir, args: []string{res.env.weave, "-o", filepath.Join(dir, "sqlite3.woven.c"), src}, env: []string{"WEAVE_CC=gcc"}},
		{dir: dir, args: []string{"gcc", "-O0", "-c", "-o", filepath.Join(dir, "sqlite3.o"), src}},
	}
	for r := 0; r < o.runs; r++ {
		for i := range ts {
			k := (i + r) % len(ts)
			s := measure(specs[k], o.timeout)
			if s.Err != "" {
				res.failed = append(res.failed, ts[k].name+" sqlite3.c")
			}
			ts[k].samples = append(ts[k].samples, s)
		}
	}
	res.weaving = ts
	os.RemoveAll(filepath.Join(res.env.work, "run"))
}

// failure is the error of a run whose plain or weave measurements failed.
func (res *results) failure() error {
	if len(res.failed) == 0 {
		return nil
	}
	sort.Strings(res.failed)
	return errors.New("failed: " + strings.Join(res.failed, ", "))
}
