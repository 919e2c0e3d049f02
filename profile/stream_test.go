package profile

import (
	"strings"
	"testing"
)

// TestReadStream: a stream holding a program's output and its profile
// (WEAVE_OUT=/dev/stdout ./prog | weave report -) reads as the profile
// alone; two processes' profiles are summed; errors give the stream's
// line. Read refuses all of these streams.
func TestReadStream(t *testing.T) {
	one := head + body + "E 8\n"
	p1, err := Read(strings.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	want := write(t, p1)
	for _, in := range []string{one, "hello\nworld\n" + one, one + "done\n", "a\n" + one + "E 3\nweave said\n"} {
		p, n, err := ReadStream(strings.NewReader(in), "stdin")
		if err != nil || n != 1 {
			t.Errorf("%q: %d profiles, %v", in, n, err)
			continue
		}
		if got := write(t, p); got != want {
			t.Errorf("%q read as\n%s\nwant\n%s", in, got, want)
		}
	}
	if _, err := Read(strings.NewReader(one + "done\n")); err == nil {
		t.Errorf("Read took a profile followed by other text; ReadStream is the lenient one")
	}

	// A parent's and a fork child's profiles, the child's output between.
	run := func(pid string) string { return head + "M run " + pid + " 100\n" + body + "E 9\n" }
	p, n, err := ReadStream(strings.NewReader("parent says\n"+run("10")+"child says\n"+run("11")), "stdin")
	if err != nil || n != 2 {
		t.Fatalf("two processes: %d profiles, %v", n, err)
	}
	if runs, _ := p.MetaUint("merged"); runs != 2 {
		t.Errorf("two processes' profiles: merged %d runs, want 2", runs)
	}

	for _, tc := range []struct{ in, want string }{
		{"just output\n", "stdin: not a weave profile"},
		{"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", "stdin: not a weave profile: gzip-compressed (gunzip it first)"},
		{"out\n" + head + body, "stdin:10:1: truncated profile: no E record after this line"},
		{"out\n" + head + body + "N 2 40 0 A 0\nE 9\n", "stdin:11:1: bad N record: undefined parent 40"},
		{"out\n" + head + body + head + body + "E 8\n", "stdin:10:1: truncated profile: no E record after this line"},
	} {
		if _, _, err := ReadStream(strings.NewReader(tc.in), "stdin"); err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.want)
		}
	}
}
