package parse

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSpeculation checks that Parse gives the same unit whether it takes
// over the speculative parse or not, and falls back where it must; and
// that a small unit is not parsed speculatively but pruned.
func TestSpeculation(t *testing.T) {
	dir := t.TempDir()
	good, bad, small := filepath.Join(dir, "good.c"), filepath.Join(dir, "bad.c"), filepath.Join(dir, "small.c")
	var fns strings.Builder // enough of the unit's own code to be parsed as it comes
	for i := 0; fns.Len() < specStart; i++ {
		fmt.Fprintf(&fns, "static int f%d(int x) { return x * %d + f%d(x - 1); }\n", i+1, i, i)
	}
	for name, text := range map[string]string{
		good:  "#include <stdlib.h>\nint main(void)\n{\n\tvoid *p = malloc(3);\n\tfree(p);\n\treturn 0;\n}\nstatic int f0(int x) { return x; }\n" + fns.String(),
		bad:   "#include <stdio.h>\nint main(void)\n{\n\tint x = ;\n\treturn 0;\n}\n",
		small: "#include <stdlib.h>\nint main(void)\n{\n\tvoid *p = malloc(3);\n\tfree(p);\n\treturn 0;\n}\n",
	} {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spaced := filepath.Join(dir, "spaced.c") // good, with lines respaced (Respace)
	if err := os.WriteFile(spaced, []byte("int  a;      int   b;\t/* aligned */\n"+fns.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	gcc := []string{"gcc"}
	d := NewDialect(gcc, nil)
	preprocess := func(src string, flags ...string) []byte {
		t.Helper()
		var stderr bytes.Buffer
		text, err := Preprocess(gcc, flags, src, &stderr)
		if err != nil {
			t.Fatalf("%v: %s", err, stderr.String())
		}
		return text
	}
	speculative := func(u *Unit) bool {
		_, ok := u.sources[specName(0)]
		return ok
	}
	// calls of malloc and free, where Location puts them
	calls := func(u *Unit) (r []Location) {
		for _, off := range regexp.MustCompile(`\b(malloc|free)\(`).FindAllIndex(u.Text, -1) {
			line, _ := u.Lines.LineCol(off[0])
			r = append(r, u.Lines.Lookup(line))
		}
		return r
	}

	text := preprocess(good)
	u, err := Parse("good.i", text, d)
	if err != nil || !speculative(u) {
		t.Fatalf("Parse after Preprocess: speculative %v, %v", u != nil && speculative(u), err)
	}
	copied := append([]byte(nil), text...)
	v, err := Parse("good.i", copied, d)
	if err != nil || speculative(v) {
		t.Fatalf("Parse of a copy: speculative %v, %v", v != nil && speculative(v), err)
	}
	if a, b := calls(u), calls(v); len(a) != 2 || a[0] != b[0] || a[1] != b[1] {
		t.Errorf("calls at %v and %v", a, b)
	}

	// Another Preprocess abandons the first one's speculation.
	first := preprocess(good)
	preprocess(good)
	if u, err := Parse("good.i", first, d); err != nil || speculative(u) {
		t.Errorf("Parse of an older text: speculative %v, %v", u != nil && speculative(u), err)
	}

	// -dD's #define lines are blanked for cc/v4 (parseable): the text is
	// parsed as it comes, its calls where they are without them.
	if w, err := Parse("good.i", preprocess(good, "-dD"), d); err != nil || !speculative(w) {
		t.Errorf("Parse of -dD output: speculative %v, %v", w != nil && speculative(w), err)
	} else if a, b := calls(u), calls(w); len(b) < 2 || a[0] != b[len(b)-2] || a[1] != b[len(b)-1] {
		t.Errorf("-dD output: calls at %v, without -dD at %v", b, a)
	}

	// A syntax error is reported at its place in the source.
	_, err = Parse("bad.i", preprocess(bad), d)
	if err == nil || !regexp.MustCompile(`^.*bad\.c:4:\d+: error: `).MatchString(err.Error()) {
		t.Errorf("error %v, want one at bad.c:4", err)
	}

	// The compiler fails: no text, and the next Parse is not confused.
	var stderr bytes.Buffer
	if _, err := Preprocess(gcc, nil, filepath.Join(dir, "missing.c"), &stderr); err == nil {
		t.Error("Preprocess of a missing file did not fail")
	}
	if u, err := Parse("good.i", preprocess(good), d); err != nil || !speculative(u) {
		t.Errorf("Parse after a failed Preprocess: speculative %v, %v", u != nil && speculative(u), err)
	}

	// PreprocessRespaced respaces the text as it comes: Respace's text,
	// whose parse Parse takes over (before, weave -o of sqlite3.c
	// respaced Preprocess's text and parsed the unit a second time).
	plain := preprocess(spaced)
	text, err = PreprocessRespaced(gcc, nil, spaced, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if want := Respace(plain, nil); !bytes.Equal(text, want) || bytes.Equal(want, plain) {
		t.Errorf("PreprocessRespaced's text is Respace's: %v; Respace moved a token: %v", bytes.Equal(text, want), !bytes.Equal(want, plain))
	}
	if u, err := Parse("spaced.i", text, d); err != nil || !speculative(u) {
		t.Errorf("Parse after PreprocessRespaced: speculative %v, %v", u != nil && speculative(u), err)
	}

	// A small unit is parsed pruned once it is all there.
	if u, err := Parse("small.i", preprocess(small), d); err != nil || speculative(u) || !u.Pruned {
		t.Errorf("Parse of a small unit: speculative %v, pruned %v, %v", u != nil && speculative(u), u != nil && u.Pruned, err)
	}
}
