package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputIsInput: every command that writes refuses an output that is
// the same file as one of its inputs, named as given, through ./, a hard
// link or a symbolic link, with gcc's message and exit 1, leaving the
// input as it was; an output that does not exist yet is written.
func TestOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("prog.c", "#include <stdlib.h>\nint main(void) { void *p = malloc(10); return p == 0; }\n")
	write("m.go", "package main\n\nfunc main() { _ = make([]byte, 10) }\n")
	write("importcfg", "")
	mustRun(t, dir, nil, weaveBin, "cc", "-o", "prog", "prog.c")
	mustRun(t, dir, []string{"WEAVE_OUT=a.prof"}, "./prog")
	mustRun(t, dir, []string{"WEAVE_OUT=b.prof"}, "./prog")
	tooldir, err := exec.Command("go", "env", "GOTOOLDIR").Output()
	if err != nil {
		t.Fatal(err)
	}
	compile := filepath.Join(strings.TrimSpace(string(tooldir)), "compile")

	// Each command writes OUT, which the test makes the same file as in.
	cases := []struct {
		in   string
		args []string
	}{
		{"prog.c", []string{"-o", "OUT", "prog.c"}},
		{"prog.c", []string{"cc", "-o", "OUT", "prog.c"}},
		{"prog.c", []string{"cc", "-c", "-o", "OUT", "prog.c"}},
		{"prog.c", []string{"cc", "-S", "-oOUT", "prog.c"}},
		{"m.go", []string{"-o", "OUT", "m.go"}},
		{"a.prof", []string{"report", "-o", "OUT", "a.prof"}},
		{"a.prof", []string{"report", "--format", "json", "--output", "OUT", "a.prof"}},
		{"a.prof", []string{"merge", "-o", "OUT", "b.prof", "a.prof"}},
		{"m.go", []string{"toolexec", compile, "-o", "OUT", "-p", "main", "-importcfg", "importcfg", "m.go"}},
	}
	for _, c := range cases {
		before, err := os.ReadFile(filepath.Join(dir, c.in))
		if err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"./", "hard", "sym"} {
			out := "./" + c.in
			switch how {
			case "hard":
				out = "hard-" + c.in
				if err := os.Link(filepath.Join(dir, c.in), filepath.Join(dir, out)); err != nil {
					t.Fatal(err)
				}
			case "sym":
				out = "sym-" + c.in
				if err := os.Symlink(c.in, filepath.Join(dir, out)); err != nil {
					t.Fatal(err)
				}
			}
			argv := []string{weaveBin}
			for _, a := range c.args {
				argv = append(argv, strings.ReplaceAll(a, "OUT", out))
			}
			r := run(t, dir, nil, argv...)
			want := "weave: error: input file '" + c.in + "' is the same as output file\n"
			if r.code != 1 || r.stderr != want {
				t.Errorf("%s: exit %d, stderr %q; want 1, %q", strings.Join(argv[1:], " "), r.code, r.stderr, want)
			}
			if after, err := os.ReadFile(filepath.Join(dir, c.in)); err != nil || string(after) != string(before) {
				t.Errorf("%s changed its input %s", strings.Join(argv[1:], " "), c.in)
				write(c.in, string(before)) // for the next cases
			}
			if how != "./" {
				if fi, err := os.Lstat(filepath.Join(dir, out)); err != nil || (how == "sym") != (fi.Mode()&os.ModeSymlink != 0) {
					t.Errorf("%s replaced the %s link %s", strings.Join(argv[1:], " "), how, out)
				}
				os.Remove(filepath.Join(dir, out))
			}
		}
		if c.args[0] == "toolexec" {
			continue // a fresh output needs a real build's importcfg
		}
		argv := []string{weaveBin}
		for _, a := range c.args {
			argv = append(argv, strings.ReplaceAll(a, "OUT", "fresh"))
		}
		mustRun(t, dir, nil, argv...)
		os.Remove(filepath.Join(dir, "fresh"))
	}
}
