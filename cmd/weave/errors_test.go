package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBadInput checks that bad input gets one clear, positioned error, a
// non-zero exit and leaves no output behind.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	syntax := write("syntax.c", "#include <stdio.h>\nint main(void)\n{\n\tint x = ;\n\treturn 0;\n}\n")
	garbage := write("garbage.prof", "this is not a profile\n")
	out := filepath.Join(dir, "out.c")

	for _, tc := range []struct {
		name string
		args []string
		want string   // regexp the first stderr line must match
		env  []string // extra environment
	}{
		{"syntax error", []string{"-o", out, syntax}, `^.*syntax\.c:4:\d+: error: .+`, nil},
		{"missing input", []string{"-o", out, filepath.Join(dir, "nope.c")}, `^weave: .*nope\.c: no such file$`, nil},
		{"unknown flag", []string{"--frobnicate", "-o", out, syntax}, `^weave: unknown flag --frobnicate`, nil},
		{"no input", []string{"-o", out}, `^weave: no input file`, nil},
		{"bad --frames", []string{"--frames=some", "-o", out, syntax}, `^weave: unknown frame policy "some" \(want auto or all\)$`, nil},
		{"bad WEAVE_FRAMES", []string{"cc", "-c", syntax, "-o", out}, `^weave: WEAVE_FRAMES: unknown frame policy "x"`, []string{"WEAVE_FRAMES=x"}},
		{"garbage profile", []string{"report", garbage}, `^weave: .*garbage\.prof: not a weave profile`, nil},
		{"missing profile", []string{"report", filepath.Join(dir, "none.prof")}, `^weave: .*none\.prof`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := run(t, dir, tc.env, append([]string{weaveBin}, tc.args...)...)
			if r.code == 0 {
				t.Fatalf("exit 0, want failure; stderr:\n%s", r.stderr)
			}
			first := strings.SplitN(r.stderr, "\n", 2)[0]
			if !regexp.MustCompile(tc.want).MatchString(first) {
				t.Errorf("stderr first line %q does not match %q; all:\n%s", first, tc.want, r.stderr)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("%s left behind", out)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, ".out.c*")); len(m) > 0 {
				t.Errorf("temporary files left behind: %v", m)
			}
		})
	}
}
