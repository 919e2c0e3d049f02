package profile

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func readText(t *testing.T, s string) *Profile {
	t.Helper()
	p, err := Read(strings.NewReader("weave profile 1\n" + s + "E " + strconv.Itoa(strings.Count(s, "\n")) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// a: main -> make -> malloc 40 (kept); b: main -> make (called twice) ->
// malloc 40 (one freed) and main -> other, with other ids and times.
const a = `M argv ./a
M complete 1
M start_ns 100
M end_ns 200
M time_mode exact
S 0 main
S 1 w.c
S 2 make
S 3 malloc
F 0 0 1 70
F 1 2 1 20
A 0 1 1 22 12 3 -1 0
T 0 7
N 0 -1 0 R -1
N 1 0 0 F 0
N 2 1 0 F 1
N 3 2 0 A 0
C 1 1
C 2 1
D 2 500
H 3 0 1 0 0 0 40 0 0 0 0 0 0 0 0 0 0
B 40 1 0 40 0
`

const b = `M argv ./b x
M complete 0
M start_ns 50
M end_ns 150
M time_mode sampled
S 0 other
S 1 w.c
S 2 main
S 3 make
S 4 malloc
F 0 0 1 10
F 1 2 1 70
F 2 3 1 20
A 0 2 1 22 12 4 -1 0
T 0 8
N 0 -1 0 R -1
N 1 0 0 F 1
N 2 1 0 F 0
N 3 1 0 F 2
N 4 3 0 A 0
C 1 1
C 2 5
C 3 2
D 3 700
H 4 0 2 0 0 0 80 0 0 0 1 0 0 0 40 0 0
B 40 2 1 80 40
`

// mergeWritten merges ps (from files names) and reads back what the
// merged profile writes.
func mergeWritten(t *testing.T, ps []*Profile, names []string) *Profile {
	t.Helper()
	m, err := Merge(ps, names)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Read(strings.NewReader(write(t, m)))
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestMergeTrees(t *testing.T) {
	back := mergeWritten(t, []*Profile{readText(t, a), readText(t, b)}, []string{"a.prof", "b.prof"})
	want := `weave profile 1
meta merged="2"
meta source="a.prof ./a"
meta source="b.prof ./b x"
meta complete="0"
meta hidden="0"
meta start_ns="50"
meta run_ns="200"
thread 0 tid 7
  #0 root
    #1 main w.c:70 calls 2
      #2 make w.c:20 calls 3 self 1200ns
        #3 malloc at w.c:22:12 in make allocs [0 3 0 0] bytes [0 120 0 0] frees [0 1 0 0] freed [0 40 0 0]
      #4 other w.c:10 calls 5
bin 40 allocs 3 frees 1 bytes 120 freed 40
`
	if got := back.String(); got != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	if _, err := Merge(nil, nil); err == nil {
		t.Error("merging nothing succeeds")
	}
}

// scanned is a run with a leak scan: main -> malloc (a woven site, in
// main of w.c, linked into the executable) and a hidden malloc called
// from libfoo.so, with their leak kinds.
func scanned(pid int) string {
	return "M pid " + strconv.Itoa(pid) + `
M argv ./t
M start_ns 1000
M end_ns 1500
M complete 1
M leak_scan 30
S 0 main
S 1 /build/w.c
S 2 malloc
S 3 (hidden)
S 4 /build/t
S 5 /usr/lib/libfoo.so
F 0 0 1 5
A 0 0 1 7 3 2 -1 0
A 1 -1 3 0 0 2 -1 0 1
R 1 4096 5
O 0 4
T 0 1
N 0 -1 0 R -1
N 1 0 0 F 0
N 2 1 0 A 0
N 3 1 0 A 1
H 2 2 0 0 0 64 0 0 0 0 0 0 0 0 0 0 0
H 3 1 0 0 0 16 0 0 0 0 0 0 0 0 0 0 0
K 2 1 32 0 0 0 0 1 32
K 3 0 0 1 16 0 0 0 0
`
}

// TestMergeLeaks: the leak kinds, objects and modules of the runs are the
// merged profile's, so that weave check and its suppressions read it as
// they read the runs; the header counts the runs and sums their times.
func TestMergeLeaks(t *testing.T) {
	var ps []*Profile
	var names []string
	for i := range MergeSources + 2 {
		ps = append(ps, readText(t, scanned(100+i)))
		names = append(names, "run"+strconv.Itoa(i)+".prof")
	}
	ps = append(ps, readText(t, a)) // no scan
	names = append(names, "a.prof")
	back := mergeWritten(t, ps, names)
	runs := uint64(len(ps))
	if n, _ := back.MetaUint("merged"); n != runs {
		t.Errorf("merged %d, want %d", n, runs)
	}
	if ns, _ := back.MetaUint("run_ns"); ns != (runs-1)*500+100 {
		t.Errorf("run_ns %d, want the sum of the run times %d", ns, (runs-1)*500+100)
	}
	var sources int
	for _, md := range back.Meta {
		if md.Key == "source" {
			sources++
		}
	}
	if sources != MergeSources {
		t.Errorf("%d sources listed, want %d", sources, MergeSources)
	}
	if ns, _ := back.MetaUint("leak_scan"); !back.Scanned() || ns != 30*(runs-1) {
		t.Errorf("scanned %v, leak_scan %d", back.Scanned(), ns)
	}
	if n, _ := back.MetaUint("leak_scan_runs"); n != runs-1 {
		t.Errorf("leak_scan_runs %d, want %d", n, runs-1)
	}
	var woven, hidden *Node
	for _, n := range back.Nodes {
		if n.Kind == KindAlloc && n.Site.Hidden {
			hidden = n
		} else if n.Kind == KindAlloc && n.Site.Func.Name == "main" {
			woven = n
		}
	}
	k := runs - 1
	if woven == nil || woven.Leaks == nil || woven.Leaks[Definite] != (LeakCount{k, 32 * k}) || woven.Leaks[Reachable] != (LeakCount{k, 32 * k}) {
		t.Fatalf("woven leaf's leaks: %+v", woven)
	}
	if woven.Site.Func.Module != "/build/t" {
		t.Errorf("main's module %q", woven.Site.Func.Module)
	}
	if hidden == nil || hidden.Leaks[Indirect] != (LeakCount{k, 16 * k}) || back.HiddenObject(hidden.Site) != "/usr/lib/libfoo.so" {
		t.Errorf("hidden leaf: %+v", hidden)
	}

	// A merged input counts its runs.
	again, err := Merge([]*Profile{back, readText(t, scanned(1))}, []string{"merged.prof", "one.prof"})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := again.MetaUint("merged"); n != runs+1 {
		t.Errorf("merged of a merged profile and one more: %d runs, want %d", n, runs+1)
	}
	if n, _ := again.MetaUint("leak_scan_runs"); n != runs {
		t.Errorf("leak_scan_runs %d, want %d", n, runs)
	}

	// A run merged twice is refused: its counts would be summed twice
	// (weave merge -o all.prof *.prof beside an earlier all.prof).
	for _, tc := range []struct {
		ps    []*Profile
		names []string
	}{
		{[]*Profile{readText(t, scanned(1)), readText(t, scanned(1))}, []string{"one.prof", "again.prof"}},
		{[]*Profile{back, readText(t, scanned(101))}, []string{"merged.prof", "run1.prof"}},
		{[]*Profile{readText(t, scanned(101)), back}, []string{"run1.prof", "merged.prof"}},
	} {
		want := tc.names[0] + " and " + tc.names[1] + " hold the same run (pid "
		if _, err := Merge(tc.ps, tc.names); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("merge of %v: %v, want an error starting %q", tc.names, err, want)
		}
	}
	// A file named twice is summed twice, as asked.
	if m, err := Merge([]*Profile{readText(t, scanned(1)), readText(t, scanned(1))}, []string{"one.prof", "one.prof"}); err != nil {
		t.Errorf("merge of one.prof twice: %v", err)
	} else if n, _ := m.MetaUint("merged"); n != 2 {
		t.Errorf("merge of one.prof twice: %d runs, want 2", n)
	}
}

// TestMergeFiles: the files merged, read several at a time, give what
// Merge gives of the profiles read one by one, whatever the workers; a
// bad file is an error naming it.
func TestMergeFiles(t *testing.T) {
	dir := t.TempDir()
	var files []string
	var ps []*Profile
	for i := range 20 {
		text := scanned(100 + i)
		switch i % 3 {
		case 1:
			text = withMarks(a, 3, 100, 1, 40, "end")
		case 2: // the caller object named by the maps only
			text = strings.Replace(text, "R 1 4096 5\n", "R 1 4096 -1\n", 1) +
				"Y exit 0 0 0 -1 -1\nV exit 1000-2000 r-xp 00000000 fd:01 1 /usr/lib/libbar.so\n"
		}
		f := filepath.Join(dir, "p"+strconv.Itoa(i)+".prof")
		os.WriteFile(f, []byte("weave profile 1\n"+text+"E "+strconv.Itoa(strings.Count(text, "\n"))+"\n"), 0o644)
		files = append(files, f)
		ps = append(ps, readText(t, text))
	}
	want, err := Merge(ps, files)
	if err != nil {
		t.Fatal(err)
	}
	objects := map[string]bool{}
	for _, st := range want.Sites {
		objects[want.HiddenObject(st)] = st.Hidden
	}
	if !objects["/usr/lib/libfoo.so"] || !objects["/usr/lib/libbar.so"] {
		t.Errorf("hidden sites' objects: %v", objects)
	}
	for _, workers := range []int{1, 2, 7} {
		got, err := MergeFiles(files, workers)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := write(t, got), write(t, want); g != w {
			t.Errorf("%d workers:\n%s\nwant:\n%s", workers, g, w)
		}
	}
	os.WriteFile(files[13], []byte("weave profile 1\nM pid 1\n"), 0o644)
	if _, err := MergeFiles(files, 2); err == nil || !strings.Contains(err.Error(), files[13]) {
		t.Errorf("a truncated input: %v", err)
	}
}

// withMarks adds marks "begin" (gen 1) and "end" (gen 2) to profile text s,
// where node leaf is an allocation leaf: at "end", blocks of leaf born
// after "begin" are live.
func withMarks(s string, leaf, ns, blocks, bytes int, second string) string {
	n := strconv.Itoa
	return s + "G 1 " + n(ns) + " 0 0 0 0 0 begin\n" +
		"G 2 " + n(2*ns) + " " + n(bytes) + " " + n(blocks) + " 1 0 0 " + second + "\n" +
		"W 2 " + n(leaf) + " 1 " + n(blocks) + " " + n(bytes) + "\n"
}

func TestMergeMarks(t *testing.T) {
	pa := readText(t, withMarks(a, 3, 100, 1, 40, "end"))
	pb := readText(t, withMarks(b, 4, 300, 2, 80, "end"))
	back := mergeWritten(t, []*Profile{pa, pb}, []string{"a.prof", "b.prof"})
	if len(back.Marks) != 2 {
		t.Fatalf("%d marks merged, want 2", len(back.Marks))
	}
	end := back.Marks[1]
	if end.Label != "end" || end.Gen != 2 || end.NS != 400 || end.Bytes != 120 || end.Blocks != 3 || end.Allocs != 2 || end.Thread == nil {
		t.Errorf("merged end mark: %+v", *end)
	}
	// Both runs' leaves are main -> make -> malloc: one live entry.
	if len(end.Live) != 1 || end.Live[0].Blocks != 3 || end.Live[0].Bytes != 120 || end.Live[0].Gen != 1 {
		t.Fatalf("merged live blocks: %+v", end.Live)
	}
	if n := end.Live[0].Node; n.Kind != KindAlloc || n.Parent.Func.Name != "make" || n.Parent.Parent.Func.Name != "main" {
		t.Errorf("live blocks charged to node %d", n.ID)
	}

	// Other labels: the marks are the runs' own, dropped.
	pc := readText(t, withMarks(b, 4, 300, 2, 80, "finish"))
	m, err := Merge([]*Profile{pa, pc}, []string{"a.prof", "c.prof"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Marks) != 0 {
		t.Errorf("marks with other labels merged: %d", len(m.Marks))
	}
}
