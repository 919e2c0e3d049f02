package samefile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "prog.c")
	other := filepath.Join(dir, "other.c")
	for _, p := range []string{in, other} {
		if err := os.WriteFile(p, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hard := filepath.Join(dir, "hard.c")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	sym := filepath.Join(dir, "sym.c")
	if err := os.Symlink("prog.c", sym); err != nil {
		t.Fatal(err)
	}
	dotted := filepath.Join(dir, ".", "sub", "..", "prog.c")
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, out := range []string{in, dotted, hard, sym} {
		err := Check(out, other, in)
		if err == nil || !strings.Contains(err.Error(), "input file '"+in+"' is the same as output file") {
			t.Errorf("Check(%s, %s): %v, want the same-file error", out, in, err)
		}
	}
	for _, out := range []string{other, filepath.Join(dir, "new.c"), "", "-", os.DevNull} {
		if err := Check(out, in, os.DevNull); err != nil {
			t.Errorf("Check(%q, %s): %v, want nil", out, in, err)
		}
	}
}
