package parse

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"modernc.org/cc/v4"

	"github.com/weave-profiler/weave/internal/testtool"
)

func TestDropSystemComments(t *testing.T) {
	const sys, user = "# 1 \"/usr/include/x.h\" 1 3 4\n", "# 2 \"a.c\" 2\n"
	for _, tc := range []struct{ name, in, want string }{
		{"user comments stay", user + "int a; /* x */ // y\n", user + "int a; /* x */ // y\n"},
		{"one line", sys + "int a; /* x */ int b; // y\nint c;\n", sys + "int a;         int b;  \nint c;\n"},
		{"ends a line", sys + "int a; /* x */\t\nint c;\n", sys + "int a;  \t\nint c;\n"},
		{"several lines", sys + "int a; /* x\ny\n*/ int b;\n", sys + "int a; /*\n\n*/ int b;\n"},
		{"two after another", sys + "/* a\nb */ /* c\nd */ int e;\n", sys + "/*\n  */ /*\n  */ int e;\n"},
		{"keeps the width", sys + "/* a\n\tb \u00e9 */ int x;\n", sys + "/*\n\t  \u00e9 */ int x;\n"},
		{"in a directive", sys + "#pragma pack(push, /* a\nb */ 4)\n", sys + "#pragma pack(push, /*\n  */ 4)\n"},
		{"back to the user", sys + "/* a */\n" + user + "/* b */\n", sys + " \n" + user + "/* b */\n"},
		{"in literals", sys + "char *s = \"/* x */ // y\", c = '\"'; /* z */\n", sys + "char *s = \"/* x */ // y\", c = '\"';  \n"},
		{"escaped quote", sys + "char *s = \"\\\"/*\"; /* z */\n", sys + "char *s = \"\\\"/*\";  \n"},
		{"digit separator", sys + "int n = 1'000; /* z */ char c = u8'/';\n", sys + "int n = 1'000;         char c = u8'/';\n"},
		{"exponent", sys + "double d = 1e+1'0; /* z */\n", sys + "double d = 1e+1'0;  \n"},
		{"nothing to drop", sys + "int a;\n", sys + "int a;\n"},
		{"open literal", sys + "char c = 'a; /* x */\n", sys + "char c = 'a; /* x */\n"},
		{"unclosed comment", sys + "int a; /* x\n", sys + "int a; /* x\n"},
		{"splice", sys + "int a; /* x */ \\\nint b;\n", sys + "int a; /* x */ \\\nint b;\n"},
		{"splice in a comment", sys + "/* x \\\n*/ int b;\n", sys + "/* x \\\n*/ int b;\n"},
		{"carriage return", sys + "int a; /* x */\r\n", sys + "int a; /* x */\r\n"},
	} {
		if got := string(DropSystemComments([]byte(tc.in))); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestDropSystemCommentsGCC: gcc -E -C output of programs with the C
// library's headers and a system header of comments in every place
// (literals, a directive, a macro, several lines), without its system
// headers' comments, compiles with -g to the same object with the same
// diagnostics (the same code at the same lines), is half the size, and
// parses to the same tree, every token at the same file:line:col.
func TestDropSystemCommentsGCC(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	inc := filepath.Join(dir, "inc")
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("inc/tricky.h", `/* a system header with comments
   over several lines */
#pragma pack(push, /* a comment
   in a pragma */ 4)
struct s { int a; /* one line */ char b; }; // line comment
#pragma pack(pop)
static const char *tricky_s = "/* not a comment */ // nor this";
static const char tricky_c = '"'; /* after a quote char */
static const double tricky_d = 0x1p-3 /* hex float */ + 1e+1;
#define M(x) /* in a macro */ ((x) + 1)
static inline int tricky_f(int x) { return M(x) /* multi
 line */ + 2; } int tricky_g; /* a
 b */ /* c
 d */ int tricky_h;
`)
	files, _ := filepath.Glob("../testdata/*.c")
	files = append(files, write("libc.c", `#include <tricky.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
int main(void) {
	char *p = malloc(3); /* user comment */
	switch (tricky_f(1)) {
	case 3:
		p[0] = 1;
		/* FALLTHROUGH */
	case 4:
		p[1] = 2; // a user comment
	}
	free(p);
	return tricky_c + (int)sqrt(tricky_d) + (int)sizeof(struct s) + tricky_g + tricky_h;
}
`))
	flags := []string{"-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-isystem", inc}
	var before, after int
	for _, src := range files {
		out, err := exec.Command("gcc", append(append([]string{}, flags...), "-E", "-C", src)...).Output()
		if err != nil {
			t.Fatalf("%s: gcc -E -C: %v", src, err)
		}
		dropped := DropSystemComments(out)
		before, after = before+len(out), after+len(dropped)
		if a, b := bytes.Count(out, []byte("\n")), bytes.Count(dropped, []byte("\n")); a != b {
			t.Errorf("%s: %d lines, %d without the comments", src, a, b)
		}
		compile := func(name string, text []byte) (obj, diags []byte) {
			i := write(name+".i", string(text))
			o := filepath.Join(dir, name+".o")
			cmd := exec.Command("gcc", append(append([]string{}, flags...), "-x", "cpp-output", "-c", i, "-o", o)...)
			diags, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", src, err, diags)
			}
			obj, err = os.ReadFile(o)
			if err != nil {
				t.Fatal(err)
			}
			return obj, bytes.ReplaceAll(diags, []byte(name+".i"), nil)
		}
		objA, diagA := compile("with", out)
		objB, diagB := compile("without", dropped)
		if !bytes.Equal(bytes.ReplaceAll(objA, []byte("with.i"), nil), bytes.ReplaceAll(objB, []byte("without.i"), nil)) {
			t.Errorf("%s: the objects differ", src)
		}
		if !bytes.Equal(diagA, diagB) {
			t.Errorf("%s: diagnostics\n%s\nwithout the comments\n%s", src, diagA, diagB)
		}
		d := NewDialect([]string{"gcc"}, flags)
		ua, err := Parse("x.i", out, d)
		if err != nil {
			t.Fatal(err)
		}
		ub, err := Parse("x.i", dropped, d)
		if err != nil {
			t.Fatal(err)
		}
		tokens := 0
		sameToken := func(a, b cc.Token) error {
			if a.SrcStr() != b.SrcStr() {
				return fmt.Errorf("token %q vs %q", a.SrcStr(), b.SrcStr())
			}
			if a.Position().Filename != "x.i" && ua.sources[a.Position().Filename] == 0 {
				return nil // cc/v4's own sources
			}
			tokens++
			la, ca := ua.Location(a)
			lb, cb := ub.Location(b)
			if la != lb || ca != cb {
				return fmt.Errorf("token %q at %v:%d vs %v:%d", a.SrcStr(), la, ca, lb, cb)
			}
			return nil
		}
		if err := sameAST(reflect.ValueOf(ua.AST.TranslationUnit), reflect.ValueOf(ub.AST.TranslationUnit), sameToken); err != nil {
			t.Errorf("%s: %v", src, err)
		}
		if tokens == 0 {
			t.Errorf("%s: no tokens compared", src)
		}
	}
	if after*2 > before+before/5 {
		t.Errorf("%d bytes, %d without the system headers' comments: expected about half", before, after)
	}
}

// TestReplaceWords: parseable's replacements are the regexps' they stand
// for.
func TestCommentedDirective(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     bool
	}{
		{"comment before a define", "int a;\n/* x */ #define N 5\n", true},
		{"comment from lines above", "/*\n*\n*/ # /*\n*/\n  define\n", true},
		{"a dropped system comment", "# 1 \"/usr/include/x.h\" 1 3 4\n        #define N 5\n", true},
		{"after a line comment's splice", "// a \\\n b */ #define N\n", false},
		{"after an unclosed literal", "char c = 'a;\n  # x\n", true},
		{"markers and pragmas", "# 1 \"a.c\"\n#pragma weak f\n#line 3\nint a;\n", false},
		{"in literals", "char *s = \" #x\", c = '#';\n", false},
		{"in comments", "/* # */\n// #\n  /* a\n # b */ int x;\n", false},
		{"after a token", "int a; # x\n", false},
		{"digit separator", "int n = 1'000; char *s = \"'\"; /* x */ #define\n", false},
		{"unclosed comment", "/* x\n #define\n", false},
	} {
		if got := CommentedDirective([]byte(tc.in)); got != tc.want {
			t.Errorf("%s: %q: got %v, want %v", tc.name, tc.in, got, tc.want)
		}
	}
}

// TestCommentedDirectiveGCC: gcc -E -C leaves a directive after a comment
// as text, which CommentedDirective finds; the C library's headers, with
// or without their comments, have none.
func TestCommentedDirectiveGCC(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	const headers = "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include <math.h>\n#include <pthread.h>\n#include <signal.h>\n#include <wchar.h>\n"
	for _, tc := range []struct {
		body string
		want bool
	}{
		{"int main(void) { return 0; }\n", false},
		{"/* the size */ #define N 5\nint a[N];\n", true},
	} {
		src := filepath.Join(dir, "a.c")
		if err := os.WriteFile(src, []byte(headers+tc.body), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("gcc", "-E", "-C", src).Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := CommentedDirective(out); got != tc.want {
			t.Errorf("%q: gcc -E -C: got %v, want %v", tc.body, got, tc.want)
		}
		if got := CommentedDirective(DropSystemComments(out)); got != tc.want {
			t.Errorf("%q: without the system headers' comments: got %v, want %v", tc.body, got, tc.want)
		}
	}
}

func TestReplaceWords(t *testing.T) {
	floatN := regexp.MustCompile(`\b_Float(32|64|32x|64x|128)\b`)
	float16 := regexp.MustCompile(`\b(_Float16|__bf16)\b`)
	short := func(w []byte) []byte { return append([]byte("short"), bytes.Repeat([]byte(" "), len(w)-5)...) }
	rename := func(w []byte) []byte { // as parseable's
		r := append([]byte("__wf"), w[6:]...)
		for len(r) < len(w) {
			r = append(r, '_')
		}
		return r
	}
	for _, in := range []string{
		"", "_Float16", "x_Float16", "_Float16x", "_Float16 __bf16 _Float16_Float16 (_Float16)",
		"_Float32 _Float32x _Float64x _Float128 _Float128x _Float12 _Float _Float32;_Float64",
		"a__bf16 __bf16_ __bf16\n__bf16", strings.Repeat("typedef float _Float32; _Float64x y;", 3),
	} {
		want16 := float16.ReplaceAllFunc([]byte(in), short)
		got16 := replaceWords(replaceWords([]byte(in), "_Float16", nil, short), "__bf16", nil, short)
		if !bytes.Equal(got16, want16) {
			t.Errorf("%q: _Float16, __bf16: got %q, want %q", in, got16, want16)
		}
		wantN := floatN.ReplaceAllFunc([]byte(in), rename)
		gotN := replaceWords([]byte(in), "_Float", map[string]bool{"32": true, "64": true, "32x": true, "64x": true, "128": true}, rename)
		if !bytes.Equal(gotN, wantN) {
			t.Errorf("%q: _FloatN: got %q, want %q", in, gotN, wantN)
		}
	}
}
