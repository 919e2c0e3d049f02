package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

// deepC recurses argv[1] levels through deep and, every other level,
// through odd (mutual recursion), allocating and freeing a block at each
// level; the innermost level's block leaks.
const deepC = `#include <stdlib.h>
static void *keep;
static long odd(long n);
__attribute__((noinline)) static long deep(long n)
{
	char *p = malloc(8);
	long r;
	if (!n) {
		keep = p;
		return 0;
	}
	r = (n % 2 ? odd(n - 1) : deep(n - 1)) + 1;
	free(p);
	return r;
}
__attribute__((noinline)) static long odd(long n) { return deep(n) + 1; }
int main(int argc, char **argv) { return deep(atol(argv[1])) > 0 ? 0 : 1; }
`

// TestDeepRecursionReports: an exact-mode profile keeps a node per depth,
// and every report once walked whole paths per context: 1.1 million
// levels made folded, pprof and HTML run for hours and JSON overflow Go's
// stack. The reports fold deep recursion (profile.FoldDepth activations
// of a function on a path at most): here 3,000 levels give stacks, tree
// paths and leak chains of at most FoldDepth activations, with every
// total the JSON report's and the program's.
func TestDeepRecursionReports(t *testing.T) {
	t.Parallel()
	const levels = 3000
	dir := t.TempDir()
	src := filepath.Join(dir, "deep.c")
	if err := os.WriteFile(src, []byte(deepC), 0o644); err != nil {
		t.Fatal(err)
	}
	exe, prof := filepath.Join(dir, "deep"), filepath.Join(dir, "deep.prof")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O1", "-g", src, "-o", exe)
	mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TIME=exact"}, exe, strconv.Itoa(levels))
	if p, err := profile.ReadFile(prof); err != nil || len(p.Nodes) < levels {
		t.Fatalf("the exact-mode profile should keep a node per level: %v", err)
	}
	want := jsonExportTotals(t, prof)
	// deep runs levels+1 times, odd levels/2 times, main once.
	if calls := int64(levels + 1 + levels/2 + 1); want.Allocs != levels+1 || want.Calls != calls {
		t.Fatalf("JSON totals %+v, want %d allocations and %d calls", want, levels+1, calls)
	}
	activations := func(frames []string) int {
		n := 0
		for _, f := range frames {
			if f == "deep" {
				n++
			}
		}
		return n
	}

	for q, n := range map[string]int64{"calls": want.Calls, "allocs": want.Allocs, "time": want.TimeNS} {
		out := mustRun(t, "", nil, weaveBin, "report", "--format", "folded", "--quantity", q, prof).stdout
		var sum int64
		for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
			i := strings.LastIndexByte(line, ' ')
			v, _ := strconv.ParseInt(line[i+1:], 10, 64)
			sum += v
			if a := activations(strings.Split(line[:i], ";")); a > profile.FoldDepth {
				t.Fatalf("folded %s: a stack with %d activations of deep", q, a)
			}
		}
		if sum != n {
			t.Errorf("folded %s: total %d, JSON report %d", q, sum, n)
		}
	}

	pb := filepath.Join(dir, "deep.pb.gz")
	mustRun(t, "", nil, weaveBin, "report", "--format", "pprof", "-o", pb, prof)
	pp := readPprof(t, pb)
	var calls int64
	for _, s := range pp.Sample {
		var frames []string
		for _, l := range s.Location {
			frames = append(frames, l.Line[0].Function.Name)
		}
		if a := activations(frames); a > profile.FoldDepth {
			t.Fatalf("pprof: a sample with %d activations of deep", a)
		}
		calls += s.Value[4]
	}
	if calls != want.Calls || len(pp.Sample) > 4*profile.FoldDepth {
		t.Errorf("pprof: %d calls in %d samples, want %d calls in few samples", calls, len(pp.Sample), want.Calls)
	}

	var rep struct {
		Leaks []struct {
			Chain []struct{ Name string } `json:"chain"`
		} `json:"leaks"`
		Time struct {
			TotalNS int64     `json:"total_ns"`
			Tree    *treeNode `json:"tree"`
		} `json:"time"`
	}
	out := mustRun(t, "", nil, weaveBin, "report", "--format", "json", "--tables", "leaks,tree", "--depth", "0", "--threshold", "0", prof).stdout
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, l := range rep.Leaks {
		var frames []string
		for _, f := range l.Chain {
			frames = append(frames, f.Name)
		}
		if a := activations(frames); a > profile.FoldDepth || a < profile.FoldDepth/2 {
			t.Errorf("a whole leak chain with %d activations of deep", a)
		}
	}
	if rep.Time.Tree == nil {
		t.Fatal("no tree")
	}
	// Along any path, deep at most FoldDepth times; totals add up.
	var walk func(n *treeNode, deep int) int64
	walk = func(n *treeNode, deep int) int64 {
		if n.Name == "deep" {
			deep++
		}
		if deep > profile.FoldDepth {
			t.Fatalf("a tree path with %d activations of deep", deep)
		}
		sum := n.SelfNS
		for _, c := range n.Children {
			sum += walk(c, deep)
		}
		if sum != n.TotalNS {
			t.Fatalf("%s: total %d, self and children %d", n.Name, n.TotalNS, sum)
		}
		return sum
	}
	if got := walk(rep.Time.Tree, 0); got != rep.Time.TotalNS {
		t.Errorf("tree total %d, time total %d", got, rep.Time.TotalNS)
	}

	html := filepath.Join(dir, "deep.html")
	mustRun(t, "", nil, weaveBin, "report", "--format", "html", "-o", html, prof)
	if b, err := os.ReadFile(html); err != nil || strings.Count(string(b), "deep \\u003c- deep") > 2*profile.FoldDepth {
		t.Errorf("the HTML report holds whole unfolded chains (%v)", err)
	}
}

// treeNode is a node of the JSON report's time tree.
type treeNode struct {
	Name     string      `json:"name"`
	SelfNS   int64       `json:"self_ns"`
	TotalNS  int64       `json:"total_ns"`
	Children []*treeNode `json:"children"`
}
