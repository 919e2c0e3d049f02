package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

func TestParseCmdline(t *testing.T) {
	for _, tc := range []struct {
		args       string
		stage      stage
		output     string
		pass       bool
		inputs     string // name:kind, kind c, i or o(ther)
		pre, comp  string // preprocessFlags, compileFlags
		linkRelate bool
	}{
		{args: "-O2 -c a.c -o a.o -I inc -DX=1", stage: stageCompile, output: "a.o", inputs: "a.c:c",
			pre: "-O2 -I inc -DX=1", comp: "-O2"},
		{args: "-S -x c a.txt -x none b.s -lm", stage: stageAsm, inputs: "a.txt:c b.s:o",
			pre: "", comp: ""},
		{args: "-E a.c", pass: true, inputs: "a.c:c", pre: "", comp: ""},
		{args: "-c -g3 -dM -dDI -fdirectives-only -dumpbase x a.c", stage: stageCompile, inputs: "a.c:c",
			pre: "-g3 -dumpbase x", comp: "-g3 -dM -dDI -dumpbase x"},
		{args: "-M a.c", pass: true, inputs: "a.c:c", pre: "", comp: ""},
		{args: "--version", pass: true, pre: "--version", comp: "--version"},
		{args: "-print-prog-name=ld", pass: true, pre: "-print-prog-name=ld", comp: "-print-prog-name=ld"},
		{args: "a.c b.o -lm -Wl,-E -o prog -include cfg.h -MD -MF a.d", output: "prog", inputs: "a.c:c b.o:o",
			pre: "-include cfg.h", comp: ""},
		{args: "-xc - -xcpp-output x.i", inputs: "-:c x.i:i", pre: "", comp: ""},
		{args: "-c -Wp,-MD,a.d -Wall -Werror -std=c99 -P a.c", stage: stageCompile, inputs: "a.c:c",
			pre: "-Wp,-MD,a.d -Wall -Werror -std=c99", comp: "-Wall -Werror -std=c99"},
		{args: "-c --param max-inline-insns-single=5 -fno-such-flag a.c", stage: stageCompile, inputs: "a.c:c",
			pre: "--param max-inline-insns-single=5 -fno-such-flag", comp: "--param max-inline-insns-single=5 -fno-such-flag"},
	} {
		t.Run(tc.args, func(t *testing.T) {
			c := parseCmdline(strings.Fields(tc.args))
			var ins []string
			for _, in := range c.inputs {
				ins = append(ins, in.name+":"+[]string{"o", "c", "i"}[in.kind])
			}
			if c.stage != tc.stage || c.output != tc.output || c.passthrough != tc.pass || strings.Join(ins, " ") != tc.inputs {
				t.Errorf("stage %d output %q passthrough %v inputs %q", c.stage, c.output, c.passthrough, ins)
			}
			if got := strings.Join(c.preprocessFlags(), " "); got != tc.pre {
				t.Errorf("preprocessFlags %q, want %q", got, tc.pre)
			}
			if got := strings.Join(c.compileFlags(), " "); got != tc.comp {
				t.Errorf("compileFlags %q, want %q", got, tc.comp)
			}
		})
	}
}

// TestTargetFlags: the flags the runtime is built with select its ABI;
// x86's instruction set extensions do not.
func TestTargetFlags(t *testing.T) {
	c := parseCmdline(strings.Fields("-O2 -m32 -msse4.2 -mavx2 -mavx512bw -mcrc32 -mtune=native -march=x86-64-v2 " +
		"-mno-sse -mno-red-zone -mllvm -x -pthread -fsanitize=thread -DWEAVE_SECURE_PROFILE -DX a.c -o a"))
	want := []string{"-m32", "-march=x86-64-v2", "-mno-sse", "-mno-red-zone", "-pthread", "-fsanitize=thread", "-DWEAVE_SECURE_PROFILE"}
	if got := c.targetFlags(); !reflect.DeepEqual(got, want) {
		t.Errorf("targetFlags: got %q, want %q", got, want)
	}
}

func TestDepGenFlags(t *testing.T) {
	for _, tc := range []struct{ args, src, want string }{
		{"-c -MD a/b.c", "a/b.c", "-MD -MF b.d -MT b.o"},
		{"-c -MMD b.c -o obj/b.obj", "b.c", "-MMD -MF obj/b.d -MT obj/b.obj"},
		{"-c -MMD -MP -MT t -MF x.d b.c", "b.c", "-MMD -MP -MT t -MF x.d"},
		{"-MD b.c c.c -o prog", "c.c", "-MD -MF prog.d -MT prog"},
		{"-MD b.c c.c", "c.c", "-MD -MF a-c.d -MT c.o"},
		{"-c|-MD|b.c|-o|x y$.o", "b.c", `-MD -MF x y$.d -MT x\ y$$.o`},
		{"-c b.c", "b.c", ""},
	} {
		args := strings.Fields(tc.args)
		if strings.Contains(tc.args, "|") {
			args = strings.Split(tc.args, "|")
		}
		c := parseCmdline(args)
		out := c.output
		if out == "" && c.stage == stageCompile {
			out = outputName(tc.src, ".o")
		}
		if got := strings.Join(c.depGenFlags(tc.src, out), " "); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.args, got, tc.want)
		}
	}
}

func TestAddGlobal(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{ global: f; local: *; };", "{ global: __weave_*; f; local: *; };"},
		{"V_1 {\n global :\n f;\n local: *;\n};\n", "V_1 {\n global : __weave_*;\n f;\n local: *;\n};\n"},
		{"/* { */ # {\nV { local: *; };", "/* { */ # {\nV { global: __weave_*; local: *; };"},
		{"{ f; g; };", "{ global: __weave_*; f; g; };"},
		{"garbage", ""},
	} {
		got, ok := addGlobal(tc.in, "__weave_*")
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("addGlobal(%q) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
}

func TestExportRuntime(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "lib.map")
	os.WriteFile(m, []byte("V { global: f; local: *; };\n"), 0o644)
	args := []string{"-shared", "-Wl,-soname,libx.so.1,--version-script," + m, "-Xlinker", "--version-script=" + m,
		"-Wl,-version-script", "-Wl," + m, "-o", "libx.so"}
	got := exportRuntime(args, dir)
	if got[1] != "-Wl,-soname,libx.so.1,--version-script,"+filepath.Join(dir, "version-1.map") ||
		got[3] != "--version-script="+filepath.Join(dir, "version-2.map") ||
		got[5] != "-Wl,"+filepath.Join(dir, "version-3.map") {
		t.Fatalf("exportRuntime: %q", got)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "version-1.map"))
	if string(data) != "V { global: __weave_*; f; local: *; };\n" {
		t.Errorf("rewritten script: %q", data)
	}
}

func TestResponseFiles(t *testing.T) {
	args := []string{"-DX=\"a b\"", "it's", `back\slash`, "", "plain"}
	var lines []string
	for _, a := range args {
		lines = append(lines, quoteResponse(a))
	}
	if got := SplitWords(strings.Join(lines, "\n")); !reflect.DeepEqual(got, args) {
		t.Errorf("round trip: %q, want %q", got, args)
	}
	long := []string{"gcc"}
	for i := 0; i < 20000; i++ {
		long = append(long, fmt.Sprintf("obj/file%d.o", i))
	}
	argv, cleanup, err := responseFileIfLong(append([]string{"ccache"}, long...))
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if len(argv) != 3 || argv[0] != "ccache" || argv[1] != "gcc" || argv[2][0] != '@' {
		t.Fatalf("argv %q", argv)
	}
	if got := expandResponseFiles(argv[2:]); !reflect.DeepEqual(got, long[1:]) {
		t.Errorf("response file holds %d args, want %d", len(got), len(long)-1)
	}
}

func TestNameMainFile(t *testing.T) {
	text := []byte("typedef int __weave_t;\nextern int x;\n# 0 \"a.c\"\n# 0 \"<built-in>\"\nint y;\n")
	got := string(nameMainFile(text, mainFile([]byte("# 0 \"a.c\"\n# 0 \"<built-in>\"\n")), ""))
	want := "# 0 \"a.c\"\n# 1 \"<weave>\" 1 3\n" + weaveIdent() + "typedef int __weave_t;\nextern int x;\n# 1 \"a.c\" 2\n# 0 \"a.c\"\n# 0 \"<built-in>\"\nint y;\n"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if !regexp.MustCompile(`^#ident "weave [^"]+"\n$`).MatchString(weaveIdent()) {
		t.Errorf("weaveIdent %q", weaveIdent())
	}
}

// TestForExecutable: the local-exec guard (weave.Options.Executable) only
// for units that certainly go into an executable: never for a -shared or
// -r link, nor for a -c with the compiler's default PIE alone.
func TestForExecutable(t *testing.T) {
	for args, want := range map[string]bool{
		"-o prog prog.c":                true,
		"-shared -o lib.so lib.c":       false,
		"-shared -fPIE -o lib.so lib.c": false,
		"-r -o part.o a.c":              false,
		"-c lib.c":                      false,
		"-c -fPIE lib.c":                true,
		"-c -fno-pie lib.c":             true,
		"-c -fPIE -fPIC lib.c":          false,
		"-c -fPIC -fpie lib.c":          true,
		"-S -fno-pic lib.c":             true,
	} {
		if got := parseCmdline(strings.Fields(args)).forExecutable(); got != want {
			t.Errorf("forExecutable(%q) = %v, want %v", args, got, want)
		}
	}
}

// TestRuntimeFlags: the runtime of a link is compiled for a library
// (-DWEAVE_SHARED_OBJECT) or for an executable, whose thread-locals are
// local-exec (-DWEAVE_EXECUTABLE), which a library's link would reject.
func TestRuntimeFlags(t *testing.T) {
	for args, want := range map[string]string{
		"-o prog prog.c":                "-DWEAVE_EXECUTABLE",
		"-O2 -static -o prog prog.c":    "-DWEAVE_EXECUTABLE",
		"-shared -o lib.so lib.c":       "-DWEAVE_SHARED_OBJECT",
		"-shared -fPIE -o lib.so lib.c": "-DWEAVE_SHARED_OBJECT",
	} {
		got := parseCmdline(strings.Fields(args)).runtimeFlags()
		n := 0
		for _, f := range got {
			if strings.HasPrefix(f, "-DWEAVE_") {
				n++
				if f != want {
					t.Errorf("%q: runtime flags %q, want %s", args, got, want)
				}
			}
		}
		if n != 1 {
			t.Errorf("%q: runtime flags %q, want %s once", args, got, want)
		}
	}
}

// TestExportsDynamic: which links export every symbol already (no
// dynamic list for the runtime then).
func TestExportsDynamic(t *testing.T) {
	for args, want := range map[string]bool{
		"-o p a.o":           false,
		"-o p a.o -rdynamic": true,
		"-o p a.o -Wl,-E":    true,
		"-o p a.o -Wl,--as-needed,--export-dynamic": true,
		"-o p a.o -Xlinker -E":                      true,
		"-o p a.o -Xlinker --export-dynamic":        true,
		"-o p a.o -Wl,-E -Wl,--no-export-dynamic":   false,
		"-o p a.o -Wl,-soname,-E":                   false,
		"-o p a.o -Xlinker -soname -Xlinker -E":     false,
		"-o p a.o -E":                               false, // the compiler's -E
	} {
		if got := parseCmdline(strings.Fields(args)).exportsDynamic(); got != want {
			t.Errorf("%s: exports every symbol: %v, want %v", args, got, want)
		}
	}
}

// TestSymbolic: how a -shared link binds the library's own references
// (the runtime's names are then listed to stay preemptible).
func TestSymbolic(t *testing.T) {
	for args, want := range map[string]string{
		"-shared -o l.so a.o":                                         "",
		"-shared -o l.so a.o -Wl,-Bsymbolic":                          "all",
		"-shared -o l.so a.o -symbolic":                               "all",
		"-shared -o l.so a.o -Xlinker -Bsymbolic-functions":           "functions",
		"-shared -o l.so a.o -Wl,--as-needed,-Bsymbolic-functions":    "functions",
		"-shared -o l.so a.o -Wl,-Bsymbolic -Wl,-Bsymbolic-functions": "functions",
		"-shared -o l.so a.o -Wl,-Bsymbolic,-Bno-symbolic":            "",
		"-shared -o l.so a.o -Wl,-soname,-Bsymbolic":                  "",
	} {
		if got := parseCmdline(strings.Fields(args)).symbolic(); got != want {
			t.Errorf("%s: symbolic %q, want %q", args, got, want)
		}
	}
}
