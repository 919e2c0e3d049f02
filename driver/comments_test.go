package driver

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFallthroughComment: what the -E step's -C is decided on, against
// gcc's own reading where gcc is there: each source's switch falls
// through after the text given, and gcc -Wextra warns unless the text has
// a comment gcc takes for a fallthrough comment. fallthroughComment may
// find more (a word gcc's level 3 does not take), never fewer.
func TestFallthroughComment(t *testing.T) {
	for _, c := range []struct {
		text string
		want bool // fallthroughComment's answer
		more bool // gcc does not take it, but it matches fallthroughWord
	}{
		{"/* FALLTHROUGH */", true, false},
		{"/* fall through */", true, false},
		{"// Falls through.", true, false},
		{"/* FALLTHRU */", true, false},
		{"/* intentionally fall-through */", true, false},
		{"/*\n * then fallthru\n */", true, true},
		{"", false, false},
		{"/* fallback */", false, false},
		{"x += sizeof \"/* FALLTHROUGH */\";", false, false},
		{"x += '\"'; /* FALLTHROUGH */", true, false},
		{"x += '\\''; /* FALLTHROUGH */", true, false},
		{"x += sizeof \"\\\" /* FALLTHROUGH */\";", false, false},
		{"/* a */ x++; // the fall\\\nthrough", true, true},
		{"#define FALLTHROUGH_NOTE 1\nx += FALLTHROUGH_NOTE;", false, false},
		{"x += 1'000 + 0xff'ff; /* FALLTHROUGH */", true, false},
		{"x += L'\"' + u8'x' + 'y'; /* FALLTHROUGH */", true, false},
		{"x += u8\"/* FALLTHROUGH */\"[0];", false, false},
	} {
		src := "int f(int x)\n{\n\tswitch (x) {\n\tcase 1:\n\t\tx++;\n\t\t" + c.text + "\n\tcase 2:\n\t\tx++;\n\t\tbreak;\n\t}\n\treturn x;\n}\n"
		if got := fallthroughComment([]byte(src)); got != c.want {
			t.Errorf("%q: fallthroughComment %v, want %v", c.text, got, c.want)
		}
		if _, err := exec.LookPath("gcc"); err != nil {
			continue
		}
		f := filepath.Join(t.TempDir(), "ft.c")
		os.WriteFile(f, []byte(src), 0o644)
		out, err := exec.Command("gcc", "-std=c2x", "-Wextra", "-c", "-o", os.DevNull, f).CombinedOutput()
		if err != nil {
			t.Fatalf("gcc %q: %v\n%s", c.text, err, out)
		}
		if warns := strings.Contains(string(out), "may fall through"); warns == (c.want && !c.more) {
			t.Errorf("%q: gcc warns: %v (fallthroughComment %v)", c.text, warns, c.want)
		}
	}
}

// TestHeaderFallthrough: the headers of a preprocessed text are looked at
// for fallthrough comments, but for system headers and the main file; a
// name from a #line that is no file is passed over.
func TestHeaderFallthrough(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(text), 0o644)
		return f
	}
	main := write("m.c", "/* FALLTHROUGH */")
	ft := write("ft.h", "/* fall through */")
	plain := write("plain.h", "/* fallback */")
	sys := write("sys.h", "/* FALLTHRU */")
	text := func(files ...string) []byte {
		var b strings.Builder
		for i, f := range files {
			flags := ""
			if f == sys {
				flags = " 3"
			}
			fmt.Fprintf(&b, "# %d %q 1%s\nint x%d;\n", i+1, f, flags, i)
		}
		return []byte(b.String())
	}
	missing := filepath.Join(dir, "gram.y")
	for _, c := range []struct {
		files []string
		want  bool
	}{
		{[]string{main, plain}, false},
		{[]string{main, plain, sys}, false},
		{[]string{main, missing, plain}, false},
		{[]string{main, plain, ft}, true},
	} {
		if got := headerFallthrough(text(c.files...), main); got != c.want {
			t.Errorf("%v: %v, want %v", c.files, got, c.want)
		}
	}
}
