package main

// Tests of the counts of a function framed at its calls (--frames auto)
// outside the report's tables: weave diff's rows, --fail-if budgets and
// the pprof export mark them, and only them.

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	pprof "github.com/google/pprof/profile"

	"github.com/weave-profiler/weave/internal/testtool"
)

// atCallsProfiles weaves atcalls.c under frames policy (auto, all), runs
// it, and returns its profile.
func atCallsProfiles(t *testing.T, dir string, policies ...string) []string {
	t.Helper()
	src, _ := filepath.Abs("../../testdata/timing/atcalls.c")
	var profs []string
	for _, fr := range policies {
		exe := filepath.Join(dir, "atcalls-"+fr)
		mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--frames="+fr, "-O2", src, "-o", exe)
		prof := exe + ".prof"
		mustRun(t, dir, []string{"WEAVE_TIME=exact", "WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, exe)
		profs = append(profs, prof)
	}
	return profs
}

// TestDiffCallsAtCalls: diffing atcalls.c woven with --frames all (base)
// and auto (new), apply's calls, 1,010 then 10 of them, are marked in its
// function and chain rows (JSON calls_at_calls, "calls*" and the legend in
// the text), the totals too; no other row is, and the base's unmarked
// counts are uftrace's. A budget on calls(apply) is refused naming the
// ways to count them all; on the totals it says what it sums. Before, the
// diff printed 1,010 -> 10 as a drop of calls, and the budget checked 10.
func TestDiffCallsAtCalls(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	profs := atCallsProfiles(t, dir, "all", "auto")
	base, new := profs[0], profs[1]
	want := uftraceCalls(t, dir, "atcalls")

	out := diffOf(t, base, new, "--fail-if", "calls > 1000000", "--fail-if", "calls(main) > 1")
	d := out.Diff
	if !d.Totals.AtCalls {
		t.Errorf("totals: calls not marked as including a function framed at its calls")
	}
	for _, r := range d.Functions {
		if r.AtCalls != (r.Key == "apply") {
			t.Errorf("function %s: calls_at_calls %v, want it for apply alone", r.Key, r.AtCalls)
		}
		if r.Base.Calls != int64(want[r.Key]) {
			t.Errorf("function %s: base (--frames all) %d calls, uftrace %d", r.Key, r.Base.Calls, want[r.Key])
		}
		if r.Key == "apply" && (r.Base.Calls != 1010 || r.New.Calls != 10) {
			t.Errorf("apply: %d -> %d calls, want 1010 -> 10", r.Base.Calls, r.New.Calls)
		}
	}
	for _, r := range d.Chains {
		if inner := strings.Split(r.Key, " <- ")[0]; r.AtCalls != (inner == "apply") {
			t.Errorf("chain %s: calls_at_calls %v, want it for apply's chains alone", r.Key, r.AtCalls)
		}
	}
	if len(out.Budgets) != 2 || !out.Budgets[0].AtCalls || out.Budgets[1].AtCalls {
		t.Errorf("budgets %+v: want the totals' calls marked, main's not", out.Budgets)
	}

	text := mustRun(t, "", nil, weaveBin, "diff", base, new).stdout
	marked := regexp.MustCompile(`(?m)^(\S.*)\n(?:    .*\n)*?    calls\*\s`).FindAllStringSubmatch(text, -1)
	var keys []string
	for _, m := range marked {
		keys = append(keys, m[1])
	}
	if strings.Join(keys, "|") != "apply|apply <- main" || !regexp.MustCompile(`(?m)^calls\*\s+2,021\s+11\s`).MatchString(text) {
		t.Errorf("rows with calls*: %q, want apply's function and chain rows (and the totals, 2,021 -> 11):\n%s", keys, text)
	}
	if n := strings.Count(text, "*: a function framed at its calls"); n != 2 {
		t.Errorf("the legend of * is under %d tables, want 2 (functions, chains):\n%s", n, text)
	}

	r := run(t, "", nil, weaveBin, "diff", "--fail-if", "calls(apply) > 5", base, new)
	if r.code != 2 || !strings.Contains(r.stderr, "apply is framed at its calls") || !strings.Contains(r.stderr, "--frames all or --frame apply") {
		t.Errorf("calls(apply) budget on a count of its calls that may allocate: exit %d, want 2 and a message naming --frames all and --frame apply\n%s", r.code, r.stderr)
	}
	// Fully framed on both sides: checked, exact, unmarked.
	ok := mustRun(t, "", nil, weaveBin, "diff", "--fail-if", "calls(apply) > 1010", "--fail-if", "calls > 2021", base, base).stdout
	if !strings.Contains(ok, "ok     calls(apply) > 1010: 1010 -> 1010") || strings.Contains(ok, "*") {
		t.Errorf("budgets on --frames all profiles:\n%s", ok)
	}
}

// TestDiffCallsNotCounted: under --frames auto atcalls.c's keep is woven
// without a frame, in the profile only through its allocation site (F
// flag 1), its calls not counted. Diffing it with the --frames all build,
// keep's rows (its chains too) are marked calls_not_counted and their
// calls not compared, so the text lists no change of them; a budget on
// calls(keep) is refused naming the ways to count them; a whole-profile
// calls rule says its sum leaves them out. Before, the diff printed
// keep's 10 -> 0 as a drop and the budget checked the 0. twice, frameless
// without an allocation site, is named by the unit's registration (F flag
// 1): before, it had no F record and the diff printed 1,000 -> 0.
func TestDiffCallsNotCounted(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	profs := atCallsProfiles(t, dir, "all", "auto")
	base, new := profs[0], profs[1]
	out := diffOf(t, base, new, "--fail-if", "calls > 1000000")
	// keep and twice are frameless: keep allocates, twice does not (its
	// F record comes from the unit's registration, not from the tree).
	frameless := map[string]bool{"keep": true, "twice": true}
	seen := map[string]bool{}
	for _, r := range append(out.Diff.Functions, out.Diff.Chains...) {
		inner := strings.Split(r.Key, " <- ")[0]
		seen[inner] = true
		if r.NotCounted != frameless[inner] || r.NotCounted && r.Change.Calls != 0 {
			t.Errorf("%s: calls_not_counted %v, calls change %d; want the mark, and no change, for keep's and twice's rows alone",
				r.Key, r.NotCounted, r.Change.Calls)
		}
	}
	if !seen["keep"] || !seen["twice"] || !seen["apply"] || !out.Diff.Totals.NotCounted || len(out.Budgets) != 1 || !out.Budgets[0].NotCounted {
		t.Errorf("rows of %v, totals marked %v, budgets %+v: want keep's, twice's and apply's rows, and the totals and their calls rule marked",
			seen, out.Diff.Totals.NotCounted, out.Budgets)
	}
	text := mustRun(t, "", nil, weaveBin, "diff", base, new).stdout
	if regexp.MustCompile(`(?m)^(keep|twice)( <- .*)?\n`).MatchString(text) || !strings.Contains(text, "leaves out the calls of functions woven without a frame") {
		t.Errorf("keep's or twice's rows listed as changed (only their calls, not counted, differ), or the totals' calls not explained:\n%s", text)
	}
	r := run(t, "", nil, weaveBin, "diff", "--fail-if", "calls(keep) > 5", base, new)
	if r.code != 2 || !strings.Contains(r.stderr, "keep is woven without a frame") || !strings.Contains(r.stderr, "--frames all or --frame keep") {
		t.Errorf("calls(keep) budget on calls not counted: exit %d, want 2 and a message naming --frames all and --frame keep\n%s", r.code, r.stderr)
	}
}

// TestExportPprofCallsAtCalls: in the pprof export of atcalls.c woven
// with --frames auto, apply's calls samples carry the label
// calls_at_calls, and no other sample does; go tool pprof -top shows the
// comment that names apply. Under --frames all, neither.
func TestExportPprofCallsAtCalls(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	profs := atCallsProfiles(t, dir, "auto", "all")
	for i, prof := range profs {
		pb := prof + ".pb.gz"
		mustRun(t, "", nil, weaveBin, "report", "--format", "pprof", "-o", pb, prof)
		p := readPprof(t, pb)
		calls := slices.IndexFunc(p.SampleType, func(v *pprof.ValueType) bool { return v.Type == "calls" })
		var labelled, applyCalls int64
		for _, s := range p.Sample {
			leaf := s.Location[0].Line[0].Function.Name
			if l := s.Label["calls_at_calls"]; len(l) > 0 {
				if leaf != "apply" || s.Value[calls] == 0 {
					t.Errorf("%s: calls_at_calls on a sample of %s, %d calls", pb, leaf, s.Value[calls])
				}
				labelled += s.Value[calls]
			}
			if leaf == "apply" {
				applyCalls += s.Value[calls]
			}
		}
		top, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=calls", pb).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, top)
		}
		commented := strings.Contains(string(top), "calls of apply: framed at their calls")
		if i == 0 && (labelled != 10 || applyCalls != 10 || !commented) {
			t.Errorf("--frames auto: %d of apply's %d calls labelled calls_at_calls, want 10 of 10; comment shown %v:\n%s", labelled, applyCalls, commented, top)
		}
		if i == 1 && (labelled != 0 || applyCalls != 1010 || commented) {
			t.Errorf("--frames all: %d of apply's %d calls labelled, want 0 of 1010; comment shown %v:\n%s", labelled, applyCalls, commented, top)
		}
	}
}

// TestModulesOfChainFunctions: the O records (a function's object file,
// for leak:module suppressions) are written for the functions a leak
// chain can name, those of the tree's F nodes and of the allocation
// sites, and not for a frameless function that allocates nothing (twice,
// in atcalls.c under --frames auto), whose F record only says it is
// frameless. Before, every F record had an O record: 32,735 of a woven
// git's 32,741 F records were such functions, 36% of each profile.
func TestModulesOfChainFunctions(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	prof := atCallsProfiles(t, dir, "auto")[0]
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	named := map[string]bool{} // F ids a chain can name
	fnName := map[string]string{}
	strs := map[string]string{}
	var modules []string
	for _, l := range strings.Split(text, "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) >= 3 && f[0] == "S":
			strs[f[1]] = strings.SplitN(l, " ", 3)[2]
		case len(f) >= 3 && f[0] == "F":
			fnName[f[1]] = strs[f[2]]
		case len(f) == 6 && f[0] == "N" && f[4] == "F":
			named[f[5]] = true
		case len(f) >= 3 && f[0] == "A":
			named[f[2]] = true
		case len(f) == 3 && f[0] == "O":
			modules = append(modules, f[1])
		}
	}
	var got []string
	for _, id := range modules {
		got = append(got, fnName[id])
		if !named[id] {
			t.Errorf("O record of %s (F %s): no node or site names it", fnName[id], id)
		}
	}
	slices.Sort(got)
	if !slices.Contains(got, "keep") || !slices.Contains(got, "apply") || !slices.Contains(got, "main") || slices.Contains(got, "twice") ||
		!slices.Contains(slices.Collect(maps.Values(fnName)), "twice") {
		t.Errorf("O records of %v, F records of %v: want keep's (frameless, a site), apply's and main's, and twice's F record without an O record", got, fnName)
	}
}
