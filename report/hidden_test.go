package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/golden"
)

// TestHidden: hidden allocations (by code that was not woven) are charged
// to the innermost woven function, or to "(unwoven)" below a thread's
// root, and marked in the totals, the leak table and the direct table.
func TestHidden(t *testing.T) {
	r := build(t, load(t, "hidden"), Options{Depth: DefaultDepth})
	for _, f := range []string{"text", "json"} {
		out := render(t, r, f)
		golden.Check(t, "hidden."+f, out)
		if f == "json" && !json.Valid([]byte(out)) {
			t.Errorf("invalid JSON")
		}
		if f == "text" {
			checkWidth(t, out)
			for _, want := range []string{"  of which hidden       5  4,864", "read_lines (hidden) <- main",
				"(unwoven) (hidden)", "main (hidden)"} {
				if !strings.Contains(out, want) {
					t.Errorf("text report lacks %q", want)
				}
			}
		}
	}
	if tt := r.Totals; tt.Allocs != 6 || tt.HiddenAllocs != 5 || tt.HiddenBytes != 4864 || tt.BytesInUse != 4744 {
		t.Errorf("totals %+v", tt)
	}
	type row struct {
		name   string
		hidden bool
	}
	leaks := map[row]uint64{}
	for _, l := range r.Leaks {
		leaks[row{l.Chain[0].Name, l.Hidden}] = l.BytesKept
	}
	if want := map[row]uint64{{"main", true}: 4096, {"(unwoven)", true}: 288, {"read_lines", true}: 360}; !mapsEqual(leaks, want) {
		t.Errorf("leaks %v, want %v", leaks, want)
	}
	direct := map[row]uint64{}
	for _, d := range r.Direct.Functions {
		direct[row{d.Func.Name, d.Hidden}] = d.Bytes
	}
	if want := map[row]uint64{{"main", true}: 4096, {"main", false}: 64, {"(unwoven)", true}: 288, {"read_lines", true}: 480}; !mapsEqual(direct, want) {
		t.Errorf("direct %v, want %v", direct, want)
	}
	// The call graph counts hidden allocations as their caller's own.
	for _, e := range r.Graph {
		if e.Name == "read_lines" && e.Self != 480 {
			t.Errorf("read_lines: self %d", e.Self)
		}
	}
	// With sites, a hidden leak names its operation.
	r = build(t, load(t, "hidden"), Options{Depth: DefaultDepth, Sites: true, Tables: []string{TableLeaks}})
	if out := render(t, r, "text"); !strings.Contains(out, "read_lines (hidden malloc)") || !strings.Contains(out, "read_lines (hidden realloc)") {
		t.Errorf("leaks with sites:\n%s", out)
	}
}

func mapsEqual[K comparable, V comparable](a, b map[K]V) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
