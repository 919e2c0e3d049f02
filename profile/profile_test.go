package profile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/golden"
)

func readString(t *testing.T, s string) *Profile {
	t.Helper()
	p, err := Read(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func write(t *testing.T, p *Profile) string {
	t.Helper()
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func testdataProfiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*.prof")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.prof: %v", err)
	}
	return files
}

// TestGolden checks the String dump of each testdata profile.
func TestGolden(t *testing.T) {
	for _, file := range testdataProfiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			p, err := ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, strings.TrimSuffix(filepath.Base(file), ".prof")+".dump", p.String())
		})
	}
}

// TestRoundTrip writes each testdata profile and reads it back. Files in
// Write's canonical order must come back byte for byte; the others (with
// comments, unknown records, ids out of order) must keep their meaning.
func TestRoundTrip(t *testing.T) {
	notCanonical := map[string]bool{"forward.prof": true}
	for _, file := range testdataProfiles(t) {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			p := readString(t, string(in))
			out := write(t, p)
			if !notCanonical[filepath.Base(file)] && out != string(in) {
				t.Errorf("Write(Read(%s)) differs:\n%s", file, golden.Diff(string(in), out))
			}
			p2 := readString(t, out)
			if p.String() != p2.String() {
				t.Errorf("profile changed in a round trip:\n%s", golden.Diff(p.String(), p2.String()))
			}
			if out2 := write(t, p2); out2 != out {
				t.Errorf("second round trip differs:\n%s", golden.Diff(out, out2))
			}
		})
	}
}

// TestFormatDocExample reads the example in format.go's documentation, so
// the documentation and the reader cannot drift apart.
func TestFormatDocExample(t *testing.T) {
	src, err := os.ReadFile("format.go")
	if err != nil {
		t.Fatal(err)
	}
	var ex strings.Builder
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "// Example") {
			in = true
			continue
		}
		if in {
			body, ok := strings.CutPrefix(line, "//\t")
			if !ok {
				if ex.Len() > 0 {
					break
				}
				continue
			}
			ex.WriteString(body + "\n")
		}
	}
	p := readString(t, ex.String())
	if v, _ := p.MetaValue("pid"); v != "4242" {
		t.Errorf("pid = %q", v)
	}
	if len(p.Funcs) != 2 || p.Funcs[1].Name != "make_widget" || p.Funcs[1].File != "widgets.c" {
		t.Errorf("functions: %+v", p.Funcs)
	}
	s := p.Sites[0]
	if s.Func != p.Funcs[1] || s.Op != "malloc" || s.Type != "struct widget" || s.TypeSize != 40 || s.Line != 22 || s.Col != 12 {
		t.Errorf("site: %+v", s)
	}
	leaf := p.Nodes[3]
	if leaf.Kind != KindAlloc || leaf.Parent != p.Nodes[2] || leaf.Parent.Parent.Func.Name != "main" ||
		p.Threads[0].Root != p.Nodes[0] || p.Nodes[2].Calls != 1 {
		t.Errorf("tree:\n%s", p)
	}
	if leaf.Heap.Allocs[Medium] != 1 || leaf.Heap.TotalBytes() != 40 || leaf.Heap.TotalFrees() != 0 {
		t.Errorf("heap: %+v", leaf.Heap)
	}
	if len(p.Bins) != 1 || p.Bins[0] != (Bin{Size: 40, Allocs: 1, Bytes: 40}) {
		t.Errorf("bins: %+v", p.Bins)
	}
	if out := write(t, p); out != ex.String() {
		t.Errorf("the example does not round trip:\n%s", golden.Diff(ex.String(), out))
	}
}

const head = "weave profile 1\n"

// A minimal valid body: one thread, main, one malloc site.
const body = "S 0 main\nS 1 a.c\nS 2 malloc\nF 0 0 1 1\nA 0 0 1 2 3 2 -1 0\nT 0 1\nN 0 -1 0 R -1\nN 1 0 0 F 0\n"

func TestReadErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
		is             error
	}{
		{"garbage", "hello world\n", "not a weave profile", ErrNotProfile},
		{"binary", strings.Repeat("\x7fELF\x00", 2000), "not a weave profile", ErrNotProfile},
		{"other header", "weave profile one\n", "not a weave profile", ErrNotProfile},
		{"gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\n", "not a weave profile: gzip-compressed (gunzip it first)", ErrNotProfile},
		{"CRLF", "weave profile 1\r\nM a b\r\nE 1\r\n", "not a weave profile: its lines end in CR LF, as a copy converted for Windows (dos2unix restores it)", ErrNotProfile},
		{"newer", "weave profile 2\nM x y\nE 1\n", "1:15: profile version 2 is newer than this weave reads (1)", nil},
		{"version 0", "weave profile 0\n", "1:15: unsupported profile version 0", nil},
		{"empty", "", "truncated profile: empty file", ErrTruncated},
		{"cut header", "weave prof", "1:1: truncated profile: incomplete first line", ErrTruncated},
		{"no E", head + body, "9:1: truncated profile: no E record after this line", ErrTruncated},
		{"wrong count", head + body + "E 7\n", "10:1: truncated profile: E record counts 7 records, found 8", ErrTruncated},
		{"cut line", head + body + "N 2 1 0", "10:1: truncated profile: incomplete last line", ErrTruncated},
		{"bad count", head + body + "E x\n", "10:1: bad E record: \"x\" is not a count", nil},
		{"after E", head + body + "E 8\nM a b\n", "11:1: record after the E record", nil},
		{"empty line", head + body + "\nE 9\n", "10:1: empty line", nil},
		{"undefined parent", head + body + "N 2 40 0 A 0\nE 9\n", "10:1: bad N record: undefined parent 40", nil},
		{"bad kind", head + body + "N 2 1 0 Q 0\nE 9\n", "10:1: bad N record: kind \"Q\", want R, F or A", nil},
		{"N fields", head + body + "N 2 1 0 A\nE 9\n", "10:1: bad N record: 4 fields, want 5", nil},
		{"not a number", head + body + "N x 1 0 A 0\nE 9\n", "10:1: bad N record: id \"x\" is not a number", nil},
		{"second root", head + body + "N 2 -1 0 R -1\nE 9\n", "10:1: bad N record: thread 0 has a second root", nil},
		{"root with parent", head + body + "N 2 1 0 R -1\nE 9\n", "10:1: bad N record: a root has parent -1 and ref -1", nil},
		{"orphan", head + body + "N 2 -1 0 F 0\nE 9\n", "10:1: bad N record: a F node needs a parent", nil},
		{"child of leaf", head + body + "N 2 1 0 A 0\nN 3 2 0 F 0\nE 10\n", "11:1: bad N record: parent 2 is an allocation leaf", nil},
		{"other thread", head + body + "T 1 2\nN 2 1 1 F 0\nE 10\n", "11:1: bad N record: thread 1, but parent 1 is in thread 0", nil},
		{"twice", head + body + "N 1 0 0 F 0\nE 9\n", "10:1: bad N record: id 1 defined twice", nil},
		{"H on F", head + body + "H 1 1 0 0 0 8 0 0 0 0 0 0 0 0 0 0 0\nE 9\n", "10:1: bad H record: node 1 is not an allocation leaf", nil},
		{"H fields", head + body + "N 2 1 0 A 0\nH 2 1 0 0 0 8\nE 10\n", "11:1: bad H record: 6 fields, want 17", nil},
		{"two H", head + body + "N 2 1 0 A 0\nH 2 1 0 0 0 8 0 0 0 0 0 0 0 0 0 0 0\nH 2 1 0 0 0 8 0 0 0 0 0 0 0 0 0 0 0\nE 11\n",
			"12:1: bad H record: second H record for node 2", nil},
		{"C node", head + body + "C 9 1\nE 9\n", "10:1: bad C record: undefined node 9", nil},
		{"bin size", head + body + "B 2000 1 0 2000 0\nE 9\n", "10:1: bad B record: size 2000 is beyond the last bin (1025)", nil},
		{"escape", head + "S 0 a\\tb\nE 1\n", `2:1: bad S record: unknown escape \t`, nil},
		{"undefined string", head + "F 0 0 1 1\nE 1\n", "2:1: bad F record: undefined name string 0", nil},
		{"undefined function", head + body + "A 1 7 1 2 3 2 -1 0\nE 9\n", "10:1: bad A record: undefined function 7", nil},
		{"no key", head + "M\nE 1\n", "2:1: bad M record: no key", nil},
		{"huge id", head + "S 0 a\nS 99999999999 x\nE 2\n", "ids not dense: S record 1 is missing", ErrNotDense},
		{"out of order", head + "S 1 b\nS 0 a\nS 1 c\nE 3\n", "4:1: bad S record: id 1 defined twice", nil},
		{"not dense", head + "S 1 x\nE 1\n", "ids not dense: S record 0 is missing", ErrNotDense},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.in))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %q is not %v", err, tc.is)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}

func TestReadFileErrorNamesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "profile.prof")
	if err := os.WriteFile(path, []byte("garbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadFile(path)
	if want := path + ": not a weave profile"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	// An error at a place reads FILE:LINE:COL: what, as a compiler's.
	if err := os.WriteFile(path, []byte(head+body+"N 2 40 0 A 0\nE 9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = ReadFile(path)
	if want := path + ":10:1: bad N record: undefined parent 40"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	_, err = ReadNamed(strings.NewReader(head+"0 x\n"), "standard input")
	if want := "standard input:2:1: bad record tag \"0\" (want letters)"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestSkipsUnknown checks forward compatibility: unknown records count
// towards E and are otherwise ignored.
func TestSkipsUnknown(t *testing.T) {
	p := readString(t, head+body+"Z 1 2 3\nTT whatever\nE 10\n")
	if len(p.Nodes) != 2 {
		t.Errorf("nodes: %d", len(p.Nodes))
	}
}

func TestWriteRejectsInconsistent(t *testing.T) {
	p := readString(t, head+body+"E 8\n")
	p.Nodes[1].ID = 5
	if err := p.Write(&bytes.Buffer{}); err == nil {
		t.Error("Write accepted a node whose ID is not its index")
	}
	p = readString(t, head+body+"E 8\n")
	p.Meta = append(p.Meta, Meta{"argv", "a\nb"})
	if err := p.Write(&bytes.Buffer{}); err == nil {
		t.Error("Write accepted a metadata value with a newline")
	}
}

// TestBuild checks that a profile built in code, not read, is written in a
// form Read accepts, with strings interned on first use.
func TestBuild(t *testing.T) {
	p := &Profile{}
	fn := &Func{ID: 0, Name: "main", File: "m.c", Line: 3}
	site := &Site{ID: 0, Func: fn, File: "m.c", Line: 4, Col: 2, Op: "calloc", Type: "int", TypeSize: 4}
	th := &Thread{ID: 0, TID: 7}
	root := &Node{ID: 0, Thread: th, Kind: KindRoot}
	main := &Node{ID: 1, Thread: th, Kind: KindFunc, Func: fn, Parent: root, Calls: 1}
	leaf := &Node{ID: 2, Thread: th, Kind: KindAlloc, Site: site, Parent: main}
	leaf.Heap.Allocs[Small] = 1
	leaf.Heap.Bytes[Small] = 16
	root.Children = []*Node{main}
	main.Children = []*Node{leaf}
	th.Root = root
	p.Funcs, p.Sites, p.Threads, p.Nodes = []*Func{fn}, []*Site{site}, []*Thread{th}, []*Node{root, main, leaf}
	p.Bins = []Bin{{Size: 16, Allocs: 1, Bytes: 16}}
	out := write(t, p)
	want := head + "S 0 main\nS 1 m.c\nS 2 calloc\nS 3 int\nF 0 0 1 3\nA 0 0 1 4 2 2 3 4\nT 0 7\n" +
		"N 0 -1 0 R -1\nN 1 0 0 F 0\nN 2 1 0 A 0\nC 1 1\nH 2 1 0 0 0 16 0 0 0 0 0 0 0 0 0 0 0\nB 16 1 0 16 0\nE 13\n"
	if out != want {
		t.Errorf("Write:\n%s", golden.Diff(want, out))
	}
	if p2 := readString(t, out); p2.String() != p.String() {
		t.Errorf("read back:\n%s", golden.Diff(p.String(), p2.String()))
	}
}

func TestSizeClass(t *testing.T) {
	for n, want := range map[uint64]int{0: Small, 32: Small, 33: Medium, 256: Medium, 257: Large, 2048: Large, 2049: XLarge} {
		if got := SizeClass(n); got != want {
			t.Errorf("SizeClass(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestEscape(t *testing.T) {
	for _, s := range []string{"", "plain", `a\b`, "a\nb", `\n`, "\\\n\\"} {
		got, err := unescape(escape(s))
		if err != nil || got != s {
			t.Errorf("unescape(escape(%q)) = %q, %v", s, got, err)
		}
	}
}

// FuzzRead checks that Read never panics, and that what it accepts, Write
// writes in a form Read accepts with the same meaning.
func FuzzRead(f *testing.F) {
	for _, file := range []string{"testdata/widget.prof", "testdata/forward.prof"} {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
	f.Add(head + body + "E 8\n")
	f.Fuzz(func(t *testing.T, in string) {
		p, err := Read(strings.NewReader(in))
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			return
		}
		var b bytes.Buffer
		if err := p.Write(&b); err != nil {
			t.Fatalf("Write of a profile Read accepted: %v", err)
		}
		p2, err := Read(&b)
		if err != nil {
			t.Fatalf("Read of Write's output: %v\n%s", err, b.String())
		}
		if p.String() != p2.String() {
			t.Errorf("round trip changed the profile:\n%s", golden.Diff(p.String(), p2.String()))
		}
	})
}

// TestMemoryRecords checks the memory records of testdata/memory.prof
// through the model: snapshots, timeline, peak nodes, peak metadata.
func TestMemoryRecords(t *testing.T) {
	p, err := ReadFile("testdata/memory.prof")
	if err != nil {
		t.Fatal(err)
	}
	if pk, ok := p.HeapPeak(); !ok || pk != (HeapMark{1000, 3, 500}) {
		t.Errorf("HeapPeak = %+v, %v", pk, ok)
	}
	if s, tol, ok := p.PeakSnapshot(); !ok || s != (HeapMark{950, 2, 400}) || tol != 0.0625 {
		t.Errorf("PeakSnapshot = %+v, %g, %v", s, tol, ok)
	}
	if s := p.Snapshot("start"); s == nil || s.VM != 1000000 || strings.Count(s.Maps, "\n") != 2 {
		t.Errorf("start snapshot %+v", s)
	}
	if s := p.Snapshot("exit"); s == nil || s.RSS != -1 || s.Maps != "" {
		t.Errorf("exit snapshot %+v", s)
	}
	if len(p.Timeline) != 3 || p.Timeline[1].Bytes != 1000 || p.Timeline[2].RSS != -1 {
		t.Errorf("timeline %+v", p.Timeline)
	}
	if len(p.PeakHeap) != 1 || p.PeakHeap[0].Node != p.Nodes[2] || p.PeakHeap[0].Bytes != 950 {
		t.Errorf("peak nodes %+v", p.PeakHeap)
	}
	for _, bad := range []string{"L 5 1 1 0 0 -1 -1\nL 4 1 1 0 0 -1 -1\n", "V start x\n", "Y a 1 1 1 1 1\nY a 1 1 1 1 1\n", "P 0 1 1\n", "Y a 1 1 1 1 1\nV a \n"} {
		if _, err := Read(strings.NewReader(head + body + bad + "E 10\n")); err == nil || errors.Is(err, ErrTruncated) {
			t.Errorf("accepted %q (%v)", bad, err)
		}
	}
}
