package merge

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

func read(t *testing.T, s string) *profile.Profile {
	t.Helper()
	p, err := profile.Read(strings.NewReader("weave profile 1\n" + s + "E " + strconv.Itoa(strings.Count(s, "\n")) + "\n"))
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

// mergeWritten merges pa and pb (as a.prof and b.prof) and reads back
// what the merged profile writes.
func mergeWritten(t *testing.T, pa, pb *profile.Profile) *profile.Profile {
	t.Helper()
	m, err := Profiles([]*profile.Profile{pa, pb}, []string{"a.prof", "b.prof"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := profile.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

func TestProfiles(t *testing.T) {
	back := mergeWritten(t, read(t, a), read(t, b))
	want := `weave profile 1
meta merged="2"
meta source="a.prof ./a"
meta source="b.prof ./b x"
meta complete="0"
meta hidden="0"
meta start_ns="50"
meta end_ns="200"
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
	if _, err := Profiles(nil, nil); err == nil {
		t.Error("merging nothing succeeds")
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

func TestProfilesMarks(t *testing.T) {
	pa := read(t, withMarks(a, 3, 100, 1, 40, "end"))
	pb := read(t, withMarks(b, 4, 300, 2, 80, "end"))
	back := mergeWritten(t, pa, pb)
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
	if n := end.Live[0].Node; n.Kind != profile.KindAlloc || n.Parent.Func.Name != "make" || n.Parent.Parent.Func.Name != "main" {
		t.Errorf("live blocks charged to node %d", n.ID)
	}

	// Other labels: the marks are the runs' own, dropped.
	pc := read(t, withMarks(b, 4, 300, 2, 80, "finish"))
	m, err := Profiles([]*profile.Profile{pa, pc}, []string{"a.prof", "c.prof"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Marks) != 0 {
		t.Errorf("marks with other labels merged: %d", len(m.Marks))
	}
}
