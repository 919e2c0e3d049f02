package profile

import (
	"strings"
	"testing"
)

// TestBlocks: X records are read in address order, tied to allocation
// leaves, and written back.
func TestBlocks(t *testing.T) {
	const in = `weave profile 1
S 0 main
S 1 a.c
S 2 malloc
F 0 0 1 5
A 0 0 1 10 7 2 -1 0
T 0 99
N 0 -1 0 R -1
N 1 0 0 F 0
N 2 1 0 A 0
H 2 2 0 0 0 48 0 0 0 0 0 0 0 0 0 0 0
X 4096 16 2
X 1024 32 2
E 12
`
	p := readString(t, in)
	if len(p.Blocks) != 2 || p.Blocks[0].Addr != 1024 || p.Blocks[0].Size != 32 || p.Blocks[1].Addr != 4096 || p.Blocks[0].Node != p.Nodes[2] {
		t.Fatalf("blocks %+v", p.Blocks)
	}
	out := write(t, p)
	if !strings.Contains(out, "X 1024 32 2\nX 4096 16 2\n") {
		t.Errorf("written:\n%s", out)
	}
	for _, bad := range []string{"X 1 2 1", "X 1 2", "X 1 2 9", "X a 2 2"} {
		if _, err := Read(strings.NewReader(strings.Replace(in, "X 4096 16 2", bad, 1))); err == nil {
			t.Errorf("%q read", bad)
		}
	}
}
