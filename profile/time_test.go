package profile

import (
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/golden"
)

// TestTimeRecords: D records (self time per node) are read onto Node.Time
// and written back in canonical order; wrong ones are rejected.
func TestTimeRecords(t *testing.T) {
	in := head + "M time_mode exact\n" + body + "C 1 3\nD 0 12\nD 1 3400\nE 12\n"
	p := readString(t, in)
	if p.Nodes[0].Time != 12 || p.Nodes[1].Time != 3400 {
		t.Errorf("times %d %d", p.Nodes[0].Time, p.Nodes[1].Time)
	}
	if v, _ := p.MetaValue("time_mode"); v != "exact" {
		t.Errorf("time_mode %q", v)
	}
	if out := write(t, p); out != in {
		t.Errorf("written back:\n%s", golden.Diff(in, out))
	}
	if s := p.String(); !strings.Contains(s, "#1 main a.c:1 calls 3 self 3400ns") {
		t.Errorf("dump:\n%s", s)
	}
	for _, tc := range []struct{ name, in, want string }{
		{"leaf", head + body + "N 2 1 0 A 0\nD 2 5\nE 10\n", "11:1: bad D record: node 2 is an allocation leaf"},
		{"twice", head + body + "D 1 5\nD 1 6\nE 10\n", "11:1: bad D record: second D record for node 1"},
		{"fields", head + body + "D 1\nE 9\n", "10:1: bad D record: 1 fields, want 2"},
		{"undefined", head + body + "D 7 1\nE 9\n", "10:1: bad D record: undefined node 7"},
		{"negative", head + body + "D 1 -1\nE 9\n", `10:1: bad D record: ns "-1" is not a number`},
	} {
		if _, err := Read(strings.NewReader(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
