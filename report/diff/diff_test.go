package diff

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

func read(t *testing.T, s string) *profile.Profile {
	t.Helper()
	lines := strings.Count(s, "\n")
	p, err := profile.Read(strings.NewReader("weave profile 1\n" + s + "E " + strconv.Itoa(lines) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// base: main -> make -> malloc(40) x1 at line 22, main called once,
// make twice; parse -> malloc hidden x3 (10 bytes each, 1 freed).
const base = `S 0 main
S 1 /build/a/w.c
S 2 make
S 3 malloc
S 4 struct widget
S 5 parse
S 6 (hidden)
F 0 0 1 70
F 1 2 1 20
F 2 5 1 40
A 0 1 1 22 12 3 4 40
A 1 -1 6 0 0 3 -1 0 1
T 0 4242
N 0 -1 0 R -1
N 1 0 0 F 0
N 2 1 0 F 1
N 3 2 0 A 0
N 4 1 0 F 2
N 5 4 0 A 1
C 1 1
C 2 2
C 4 1
H 3 0 1 0 0 0 40 0 0 0 0 0 0 0 0 0 0
H 5 3 0 0 0 30 0 0 0 1 0 0 0 10 0 0 0
`

// same counts, other ids, another build directory, children in another
// order.
const baseShuffled = `S 0 main
S 1 /elsewhere/w.c
S 2 parse
S 3 malloc
S 4 (hidden)
S 5 make
S 6 struct widget
F 0 0 1 70
F 1 2 1 40
F 2 5 1 20
A 0 -1 4 0 0 3 -1 0 1
A 1 2 1 22 12 3 6 40
T 0 99
N 0 -1 0 R -1
N 1 0 0 F 0
N 2 1 0 F 1
N 3 2 0 A 0
N 4 1 0 F 2
N 5 4 0 A 1
C 1 1
C 2 1
C 4 2
H 5 0 1 0 0 0 40 0 0 0 0 0 0 0 0 0 0
H 3 3 0 0 0 30 0 0 0 1 0 0 0 10 0 0 0
`

func TestIdentical(t *testing.T) {
	d := Compare(read(t, base), read(t, baseShuffled), DefaultDepth, "")
	if !d.Identical {
		t.Fatalf("not identical: %+v", d)
	}
	for _, rows := range [][]Row{d.Functions, d.Chains, d.Sites, d.Types} {
		for _, r := range rows {
			if r.Change != (Counts{}) || r.Base == (Counts{}) {
				t.Errorf("row %+v", r)
			}
		}
	}
	if len(d.Functions) != 3 || len(d.Sites) != 2 || len(d.Types) != 2 {
		t.Errorf("functions %v sites %v types %v", d.Functions, d.Sites, d.Types)
	}
	var out bytes.Buffer
	d.WriteText(&out, "a", "b", 0, nil)
	if !strings.Contains(out.String(), "No change") {
		t.Errorf("text does not say so:\n%s", out.String())
	}
	// Time is measured: it may differ when every count is the same, and
	// the line says so in the quantity's name (it once printed the Go
	// constant's, "profile.QuantityTime differs by").
	d.HasTime, d.Totals.Change.TimeNS = true, 1414000
	out.Reset()
	d.WriteText(&out, "a", "b", 0, nil)
	if !strings.Contains(out.String(), "\ntime differs by +1.414 ms (measured") {
		t.Errorf("identical counts, time +1.414 ms:\n%s", out.String())
	}
}

func TestChanges(t *testing.T) {
	// new: make allocates 3 times (120 bytes, one freed), calls make 4 times.
	nw := strings.Replace(strings.Replace(base, "C 2 2", "C 2 4", 1),
		"H 3 0 1 0 0 0 40 0 0 0 0 0 0 0 0 0 0", "H 3 0 3 0 0 0 120 0 0 0 1 0 0 0 40 0 0", 1)
	d := Compare(read(t, base), read(t, nw), DefaultDepth, "")
	if d.Identical {
		t.Fatal("identical")
	}
	want := Counts{Allocs: 2, Bytes: 80, InUse: 40, Calls: 2}
	if d.Totals.Change != want {
		t.Errorf("totals change %+v, want %+v", d.Totals.Change, want)
	}
	if r := d.Functions[0]; r.Key != "make" || r.Change != want || r.New.Bytes != 120 {
		t.Errorf("first function row %+v", r)
	}
	if r := d.Chains[0]; r.Key != "make <- main" || r.Change.Bytes != 80 {
		t.Errorf("first chain %+v", r)
	}
	if r := d.Sites[0]; r.Key != "make w.c:22 malloc" || r.Change.Allocs != 2 {
		t.Errorf("first site %+v", r)
	}
	if r := d.Types[0]; r.Key != "struct widget" || r.Change.InUse != 40 {
		t.Errorf("first type %+v", r)
	}
	for _, c := range []struct {
		rule   string
		broken bool
		value  float64
	}{
		{"bytes_in_use > +5%", true, 100 * 40.0 / 60},
		{"bytes_in_use > +67%", false, 100 * 40.0 / 60},
		{"allocs(make) > 2", true, 3},
		{"allocs(main) >= 7", false, 6},
		{"allocs(main) >= 6", true, 6},
		{"calls(make) <= 4", true, 4},
		{"calls(main) > 1", false, 1},
		{"bytes > +1K", false, 80},
		{"bytes_allocated < -1", false, 80},
		{"allocs(parse) > 3", false, 3},
	} {
		r, err := ParseRule(c.rule)
		if err != nil {
			t.Fatal(err)
		}
		v, err := r.Check(d)
		if err != nil {
			t.Fatal(err)
		}
		if v.Broken != c.broken || v.Value != c.value {
			t.Errorf("%s: broken %v value %g, want %v %g (%s)", c.rule, v.Broken, v.Value, c.broken, c.value, v)
		}
	}
	r, _ := ParseRule("allocs(nosuch) > 1")
	if _, err := r.Check(d); err == nil {
		t.Error("a rule on an unknown function checks")
	}
}

func TestParseRule(t *testing.T) {
	for s, want := range map[string]Rule{
		"bytes_in_use > +5%":    {Quantity: profile.QuantityInUse, Op: ">", Limit: 5, Change: true, Percent: true},
		" allocs( f ) <= 12 ":   {Quantity: profile.QuantityAllocs, Func: "f", Op: "<=", Limit: 12},
		"bytes > -2M":           {Quantity: profile.QuantityBytes, Op: ">", Limit: -2 << 20, Change: true},
		"time(main) >= 1.5ms":   {Quantity: profile.QuantityTime, Func: "main", Op: ">=", Limit: 1.5e6},
		"calls < 3":             {Quantity: profile.QuantityCalls, Op: "<", Limit: 3},
		"bytes_allocated > 10K": {Quantity: profile.QuantityBytes, Op: ">", Limit: 10240},
	} {
		r, err := ParseRule(s)
		if err != nil {
			t.Errorf("%q: %v", s, err)
			continue
		}
		want.Text = strings.TrimSpace(s)
		if *r != want {
			t.Errorf("%q: %+v, want %+v", s, *r, want)
		}
	}
	for _, s := range []string{"", "bytes", "frees > 1", "bytes > 5%", "bytes > 1ms", "bytes => 1", "allocs(f > 1", "bytes > 1 2"} {
		if _, err := ParseRule(s); err == nil {
			t.Errorf("%q parses", s)
		}
	}
}
