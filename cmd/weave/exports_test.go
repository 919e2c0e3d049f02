package main

// Tests of the exports (weave report --format pprof|folded): read back by
// pprof's own library and by go tool pprof, they give the JSON report's
// totals.

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// widgetsProfile weaves mprof's widgets example, runs it with n widgets
// and timing mode WEAVE_TIME=timeMode, and returns its profile.
func widgetsProfile(t *testing.T, dir, n, timeMode string) string {
	t.Helper()
	src, _ := filepath.Abs("../../testdata/widgets.c")
	exe := filepath.Join(dir, "widgets")
	if _, err := os.Stat(exe); err != nil {
		mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", src, "-o", exe)
	}
	prof := filepath.Join(dir, "widgets-"+n+"-"+timeMode+".prof")
	mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TIME=" + timeMode}, exe, n)
	return prof
}

// exportTotals is the JSON report's totals, with the time model's call and
// time sums.
type exportTotals struct {
	Allocs, BytesAllocated, BytesInUse, BlocksInUse, Calls, TimeNS int64
}

func jsonExportTotals(t *testing.T, prof string) exportTotals {
	t.Helper()
	var rep struct {
		Totals totals `json:"totals"`
		Time   struct {
			TotalNS   int64 `json:"total_ns"`
			Functions []struct {
				Calls int64 `json:"calls"`
			} `json:"functions"`
		} `json:"time"`
	}
	out := mustRun(t, "", nil, weaveBin, "report", "--format", "json", "--time", "--memory", prof).stdout
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	e := exportTotals{Allocs: rep.Totals.Allocs, BytesAllocated: rep.Totals.BytesAllocated,
		BytesInUse: rep.Totals.BytesInUse, BlocksInUse: rep.Totals.BlocksInUse, TimeNS: rep.Time.TotalNS}
	for _, f := range rep.Time.Functions {
		e.Calls += f.Calls
	}
	return e
}

func TestExportPprof(t *testing.T) {
	dir := t.TempDir()
	prof := widgetsProfile(t, dir, "100000", "exact")
	want := jsonExportTotals(t, prof)
	if want.Allocs != 100000 || want.TimeNS == 0 || want.Calls == 0 {
		t.Fatalf("unexpected JSON totals %+v", want)
	}
	pb := filepath.Join(dir, "widgets.pb.gz")
	mustRun(t, "", nil, weaveBin, "report", "--format", "pprof", "-o", pb, prof)

	p := readPprof(t, pb)
	wantBy := map[string]int64{
		"alloc_objects": want.Allocs, "alloc_space": want.BytesAllocated,
		"inuse_objects": want.BlocksInUse, "inuse_space": want.BytesInUse,
		"calls": want.Calls, "cpu": want.TimeNS,
	}
	if len(p.SampleType) != len(wantBy) {
		t.Errorf("sample types %v, want %d of them", p.SampleType, len(wantBy))
	}
	for i, st := range p.SampleType {
		var sum int64
		for _, s := range p.Sample {
			sum += s.Value[i]
		}
		if sum != wantBy[st.Type] {
			t.Errorf("pprof %s total %d, JSON report %d", st.Type, sum, wantBy[st.Type])
		}
	}

	// The allocations are at malloc's line in make_widget, under main.
	src, _ := os.ReadFile("../../testdata/widgets.c")
	mallocLine := 1 + strings.Count(string(src[:strings.Index(string(src), "malloc(sizeof(widget))")]), "\n")
	var atLine int64
	for _, s := range p.Sample {
		leaf := s.Location[0].Line[0]
		if s.Value[1] > 0 && leaf.Function.Name == "make_widget" && leaf.Line == int64(mallocLine) &&
			strings.HasSuffix(leaf.Function.Filename, "widgets.c") &&
			s.Location[len(s.Location)-1].Line[0].Function.Name == "main" {
			atLine += s.Value[1]
		}
	}
	if atLine != want.BytesAllocated {
		t.Errorf("bytes at widgets.c:%d in make_widget under main: %d, want all %d", mallocLine, atLine, want.BytesAllocated)
	}

	// go tool pprof reads the same totals.
	total := regexp.MustCompile(`Total samples = (\d+)`)
	for typ, n := range wantBy {
		unit := "-unit=byte" // shows counts and bytes as plain numbers
		if typ == "cpu" {
			unit = "-unit=ns"
		}
		out, err := exec.Command("go", "tool", "pprof", "-top", unit, "-sample_index="+typ, pb).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		m := total.FindSubmatch(out)
		if m == nil {
			t.Fatalf("go tool pprof -sample_index=%s: no total in\n%s", typ, out)
		}
		if got, _ := strconv.ParseInt(string(m[1]), 10, 64); got != n {
			t.Errorf("go tool pprof -sample_index=%s: total %d, JSON report %d", typ, got, n)
		}
		if typ == "alloc_space" && !strings.Contains(string(out), "make_widget") {
			t.Errorf("go tool pprof -top does not name make_widget:\n%s", out)
		}
	}
}

func TestExportFolded(t *testing.T) {
	dir := t.TempDir()
	prof := widgetsProfile(t, dir, "10000", "exact")
	want := jsonExportTotals(t, prof)
	for q, n := range map[string]int64{"bytes_allocated": want.BytesAllocated, "bytes_in_use": want.BytesInUse,
		"allocs": want.Allocs, "calls": want.Calls, "time": want.TimeNS} {
		out := mustRun(t, "", nil, weaveBin, "report", "--format", "folded", "--quantity", q, prof).stdout
		var sum int64
		stacks := map[string]bool{}
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			i := strings.LastIndexByte(line, ' ')
			v, err := strconv.ParseInt(line[i+1:], 10, 64)
			if i < 0 || err != nil || stacks[line[:i]] {
				t.Fatalf("--quantity %s: bad or repeated line %q", q, line)
			}
			stacks[line[:i]] = true
			sum += v
		}
		if sum != n {
			t.Errorf("folded %s: total %d, JSON report %d", q, sum, n)
		}
		if q == "allocs" && (!stacks["main;make_red_widget;make_widget"] || !stacks["main;make_blue_widget;make_widget"] || len(stacks) != 2) {
			t.Errorf("folded allocs: stacks %v, want main;make_{red,blue}_widget;make_widget", stacks)
		}
	}
	if r := run(t, "", nil, weaveBin, "report", "--format", "folded", "--quantity", "bogus", prof); r.code == 0 || !strings.Contains(r.stderr, "unknown quantity") {
		t.Errorf("--quantity bogus: exit %d, %s", r.code, r.stderr)
	}
}

// TestProfileStdin: "-" names standard input for weave report, check and
// diff (a profile piped in, as from ssh host cat x.prof): the same output
// as from the file; something else piped in is one error line.
func TestProfileStdin(t *testing.T) {
	dir := t.TempDir()
	prof := widgetsProfile(t, dir, "100", "off")
	piped := func(file string, args ...string) result {
		t.Helper()
		cmd := exec.Command(weaveBin, args...)
		in, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		var stdout, stderr strings.Builder
		cmd.Stdin, cmd.Stdout, cmd.Stderr = in, &stdout, &stderr
		code := 0
		if err := cmd.Run(); err != nil {
			ee, ok := err.(*exec.ExitError)
			if !ok {
				t.Fatal(err)
			}
			code = ee.ExitCode()
		}
		return result{stdout.String(), stderr.String(), code}
	}
	for _, args := range [][]string{{"report", "--format", "json"}, {"check"}} {
		want := run(t, dir, nil, append(append([]string{weaveBin}, args...), prof)...)
		got := piped(prof, append(args, "-")...)
		if got.code != want.code || strings.ReplaceAll(want.stdout, prof, "-") != got.stdout {
			t.Errorf("weave %s -: exit %d\n%s\nwant exit %d\n%s", strings.Join(args, " "), got.code, got.stdout, want.code, want.stdout)
		}
	}
	// widgets leaks along one chain: "1 leak", not "1 leaks"
	if r := run(t, dir, nil, weaveBin, "check", prof); !strings.HasPrefix(r.stdout, prof+": 1 leak, ") {
		t.Errorf("weave check of one leak: %q", r.stdout)
	}
	if r := piped(prof, "diff", prof, "-"); r.code != 0 || !strings.Contains(r.stdout, "No change") {
		t.Errorf("weave diff FILE - (the same profile): exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	src, _ := filepath.Abs("../../testdata/widgets.c")
	if r := piped(src, "report", "-"); r.code != 1 || r.stderr != "weave: standard input: not a weave profile\n" {
		t.Errorf("weave report - < widgets.c: exit %d, stderr %q", r.code, r.stderr)
	}
}
