package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestCC1SameText: the -E step run as cc1 itself (cc1Command's template,
// made by the first step of a flag set) writes the text and the
// diagnostics gcc's driver writes, for sources in other directories and
// with other names than the one the template was made from; flag sets
// the driver must see (dependency output) make no template.
func TestCC1SameText(t *testing.T) {
	testtool.Need(t, "gcc")
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Setenv("WEAVE_CACHE", "") // whatever the caller's environment says
	dir := t.TempDir()
	t.Chdir(dir)
	files := map[string]string{
		"inc/h.h":   "#define TWICE(x) ((x) * 2)\n#warning a warning from h.h\n",
		"a.c":       "#include <stdio.h>\n#include \"h.h\"\nint main(void) { printf(\"%d %s\\n\", TWICE(N), __FILE__); return 0; }\n",
		"sub/b.c":   "#include <string.h>\n#include \"h.h\"\n#ifdef __OPTIMIZE__\nint opt;\n#endif\nint f(const char *s) { return TWICE((int)strlen(s)) + __LINE__; }\n",
		"x y/c d.c": "#include \"h.h\"\nconst char *name = __FILE__; int n = TWICE(__STDC_VERSION__);\n",
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &Config{Compiler: []string{"gcc"}}
	driverText := func(flags []string, src string) (string, string) {
		var out, errb bytes.Buffer
		cmd := command("gcc", append(append([]string{}, flags...), "-E", "-x", "c", src)...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("gcc -E %s: %v\n%s", src, err, errb.String())
		}
		return out.String(), errb.String()
	}
	for _, flags := range [][]string{
		{"-O2", "-Iinc", "-DN=3"},
		{"-std=c99", "-g", "-Iinc", "-DN=a b", "-include", "stdlib.h", "-C"},
		{"-O0", "-I", "inc", "-DN=1", "-m32"},
	} {
		if flags[len(flags)-1] == "-m32" && exec32(t) {
			continue
		}
		for i, src := range []string{"a.c", "sub/b.c", "x y/c d.c", "a.c"} {
			var stderr bytes.Buffer
			text, err := cfg.preprocess(flags, src, nil, &stderr, func() {})
			asked.Wait()
			if err != nil {
				t.Fatalf("%q %s: %v\n%s", flags, src, err, stderr.String())
			}
			wantText, wantErr := driverText(flags, src)
			if string(text) != wantText || stderr.String() != wantErr {
				t.Errorf("%q %s (%d): the -E step's text or diagnostics differ from gcc -E's:\n%s\nwant:\n%s", flags, src, i, stderr.String(), wantErr)
			}
		}
		if cmd, _ := cfg.cc1Command(flags, "a.c"); cmd == nil || filepath.Base(cmd.Path) != "cc1" {
			t.Errorf("%q: no cc1 template", flags)
		}
	}
	for _, flags := range [][]string{{"-O2", "-MD", "-MF", "a.d"}, {"-O2", "-Wp,-DX"}, {"-v"}} {
		if cmd, ask := cfg.cc1Command(flags, "a.c"); cmd != nil || ask != nil {
			t.Errorf("%q: a cc1 command or template asked for", flags)
		}
	}
	if cmd, ask := cfg.cc1Command([]string{"-O2"}, "missing.c"); cmd != nil || ask != nil {
		t.Error("missing.c: a cc1 command or template asked for (the driver reports a missing source)")
	}
	t.Setenv("WEAVE_CACHE", "off")
	if cmd, ask := cfg.cc1Command([]string{"-O2", "-Iinc", "-DN=3"}, "a.c"); cmd != nil || ask != nil {
		t.Error("WEAVE_CACHE=off: a cc1 command or template asked for")
	}
}

// exec32 reports whether gcc cannot preprocess for -m32 here (no 32-bit
// headers): that flag set is then left out.
func exec32(t *testing.T) bool {
	t.Helper()
	out, err := command("gcc", "-m32", "-E", "-x", "c", "-", "-include", "stdio.h").CombinedOutput()
	return err != nil || strings.Contains(string(out), "error")
}
