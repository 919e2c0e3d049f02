package parse

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestRespaceColumns: each token of a line without a macro's expansion is
// at its byte in the source line, whatever blanks and comments were
// between them; from a macro's expansion on, the line is as gcc wrote it.
func TestRespaceColumns(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := "#define TWICE(x) ((x) + (x))\n" +
		"int f(int x)\n{\n" +
		"\tint a = x;      int   b;\t/* aligned */\n" +
		"\tint c = a; /* a\n\t   comment */ int d;\n" +
		"\tconst char *s = \"  a  string  \";    int e = TWICE(a);   int g;\n" +
		"\treturn a + L'x' + 1.5e+3f + u8\"  \"[0] + b + c + d + e + g + s[0];\n}\n"
	file := filepath.Join(dir, "s.c")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flags := range [][]string{nil, {"-C"}} {
		_, out := respaced(t, flags, file)
		for _, want := range []string{"\n int a = x;      int   b;", "\n const char *s = \"  a  string  \";    int e = ((a) + (a)); int g;",
			"\n return a + L'x' + 1.5e+3f + u8\"  \"[0] + b"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("%v: no %q in\n%s", flags, want, out[bytes.LastIndex(out, []byte("int f(")):])
			}
		}
	}
}

// TestRespaceSameCode: respaced, the preprocessed text of real units
// (the repository's test programs, sqlite3.c) compiles to the same
// object as gcc's text, and only blanks were added.
func TestRespaceSameCode(t *testing.T) {
	testtool.Need(t, "gcc")
	files, _ := filepath.Glob("../testdata/*.c")
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "modernc.org/ccorpus2").Output(); err == nil && !testing.Short() {
		files = append(files, filepath.Join(strings.TrimSpace(string(out)), "assets", "sqlite-amalgamation-3380100", "sqlite3.c"))
	}
	dir := t.TempDir()
	spaced := filepath.Join(dir, "spaced.c")
	if err := os.WriteFile(spaced, []byte("#include <stdio.h>\nint main(void)\n{\n\tint a = 1;      int   b = 2;\t/* aligned */\n"+
		"\tprintf(\"%d  %d\\n\", a,   b); /* x */ return   a - 1;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, spaced)
	moved := 0
	for _, src := range files {
		for _, flags := range [][]string{nil, {"-C"}} {
			text, out := respaced(t, flags, src)
			if bytes.Equal(out, text) {
				continue
			}
			moved++
			var objs [2][]byte
			for i, tx := range [][]byte{text, out} {
				in, obj := filepath.Join(dir, "u.i"), filepath.Join(dir, "u.o")
				if err := os.WriteFile(in, tx, 0o644); err != nil {
					t.Fatal(err)
				}
				if b, err := exec.Command("gcc", "-O1", "-c", "-x", "cpp-output", in, "-o", obj).CombinedOutput(); err != nil {
					t.Fatalf("%s %v: %v\n%s", src, flags, err, b)
				}
				objs[i], _ = os.ReadFile(obj)
			}
			if !bytes.Equal(objs[0], objs[1]) {
				t.Errorf("%s %v: the respaced text compiles to another object", src, flags)
			}
		}
	}
	if moved == 0 {
		t.Error("no unit had a token moved: the test tests nothing")
	}
}

// respaced returns gcc's preprocessed text of file and the text
// respaced, which it checks has only blanks added.
func respaced(t *testing.T, flags []string, file string) (text, out []byte) {
	t.Helper()
	var stderr bytes.Buffer
	text, err := Preprocess([]string{"gcc"}, flags, file, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	out = Respace(text, nil)
	checkOnlyBlanksAdded(t, text, out)
	return text, out
}

// checkOnlyBlanksAdded fails unless out is in with spaces inserted, line
// for line.
func checkOnlyBlanksAdded(t *testing.T, in, out []byte) {
	t.Helper()
	i, j := 0, 0
	for i < len(in) && j < len(out) {
		switch {
		case in[i] == out[j]:
			i, j = i+1, j+1
		case out[j] == ' ':
			j++
		default:
			t.Fatalf("byte %d of the respaced text is %q, not a blank (the text's byte %d: %q)", j, out[j], i, in[i])
		}
	}
	for ; j < len(out) && out[j] == ' '; j++ {
	}
	if i != len(in) || j != len(out) {
		t.Fatalf("respaced text ends at %d of %d, the text at %d of %d", j, len(out), i, len(in))
	}
}

// TestRespaceAsItComes: the output respaced as it comes, in pieces that
// split lines anywhere, is Respace's of the whole, with or without a
// last newline.
func TestRespaceAsItComes(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	file := filepath.Join(dir, "s.c")
	if err := os.WriteFile(file, []byte("#include <stddef.h>\nint a;      int   b;\t/* aligned */\nsize_t  c;\nint   d;"), 0o644); err != nil {
		t.Fatal(err)
	}
	text, want := respaced(t, nil, file)
	if bytes.Equal(text, want) {
		t.Fatal("nothing moved: the test tests nothing")
	}
	for _, whole := range [][]byte{text, bytes.TrimSuffix(text, []byte("\n"))} {
		want := Respace(whole, nil)
		for _, piece := range []int{1, 2, 7, 64, len(whole)} {
			s := startSpeculation(nil)
			s.rs = newLineRespacer(nil)
			for i := 0; i < len(whole); i += piece {
				if n, err := s.Write(whole[i:min(i+piece, len(whole))]); err != nil || n != min(piece, len(whole)-i) {
					t.Fatalf("Write: %d, %v", n, err)
				}
			}
			if got := s.finish(); !bytes.Equal(got, want) {
				t.Errorf("pieces of %d bytes: %q, want %q", piece, got, want)
			}
		}
	}
}
