package main

// weave cc on text the compilers accept that weave's own steps must cope
// with: comments kept by the -E step, C23 syntax, warnings the compiler
// leaves out in macro expansions.

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestFallthroughComments: the -E step keeps comments when the command
// line may warn about implicit fallthrough, so /* FALLTHROUGH */ still
// silences gcc's -Wextra warning, as without weave; a missing one still
// warns.
func TestFallthroughComments(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := func(comment string) string {
		return "#include <stdlib.h>\nint f(int x)\n{\n\tchar *p = malloc(4);\n\tswitch (x) {\n\tcase 1:\n\t\tx++;\n\t\t" + comment +
			"\n\tcase 2:\n\t\tx++;\n\t\tbreak;\n\t}\n\tfree(p);\n\treturn x;\n}\n"
	}
	os.WriteFile(filepath.Join(dir, "ft.c"), []byte(src("/* FALLTHROUGH */")), 0o644)
	os.WriteFile(filepath.Join(dir, "nocomment.c"), []byte(src("")), 0o644)
	env := []string{"WEAVE_CC=gcc"}
	for _, flags := range [][]string{{"-Wextra"}, {"-Werror=implicit-fallthrough"}, {"-Wimplicit-fallthrough=3"}} {
		args := append(append([]string{weaveBin, "cc", "-O2", "-Werror"}, flags...), "-c", "ft.c")
		r := run(t, dir, env, args...)
		if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, "ft.o")) {
			t.Errorf("%q: exit %d, stderr %q (want a woven ft.o, no warning)", args[2:], r.code, r.stderr)
		}
		args = append(append([]string{weaveBin, "cc", "-O2", "-Werror"}, flags...), "-c", "nocomment.c")
		w := run(t, dir, env, args...)
		p := run(t, dir, nil, append([]string{"gcc"}, args[2:]...)...)
		if w.code == 0 || p.code == 0 || !strings.Contains(w.stderr, "this statement may fall through") {
			t.Errorf("%q: weave cc exit %d, gcc %d, stderr %q (want gcc's warning)", args[2:], w.code, p.code, w.stderr)
		}
	}
}

// TestFallthroughCommentHeader: the -E step keeps the comments only
// where the unit has a fallthrough comment (comments.go): one in a header
// of the program, not in the source file, still silences the warning (the
// -E step runs again with -C), and a unit without one is preprocessed
// without its comments (-save-temps' text has none), as with no -Wextra.
func TestFallthroughCommentHeader(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ft.h"), []byte("/* a header */\nstatic inline int g(int x)\n{\n\tswitch (x) {\n\tcase 1:\n\t\tx++;\n"+
		"\t\t/* falls through */\n\tcase 2:\n\t\tx++;\n\t\tbreak;\n\t}\n\treturn x;\n}\n"), 0o644)
	body := "#include <stdlib.h>\n/* the marker comment */\nint f(int x)\n{\n\tchar *p = malloc(4); /* fallback */\n\tfree(p);\n\treturn %s;\n}\n"
	os.WriteFile(filepath.Join(dir, "h.c"), []byte("#include \"ft.h\"\n"+fmt.Sprintf(body, "g(x)")), 0o644)
	os.WriteFile(filepath.Join(dir, "plain.c"), []byte(fmt.Sprintf(body, "x")), 0o644)
	env := []string{"WEAVE_CC=gcc", "WEAVE_CACHE=off"}
	for _, unit := range []string{"h", "plain"} {
		r := run(t, dir, env, weaveBin, "cc", "-O2", "-Wextra", "-Werror", "-save-temps", "-c", unit+".c")
		if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, unit+".o")) {
			t.Errorf("%s.c: exit %d, stderr %q (want a woven %s.o, no warning)", unit, r.code, r.stderr, unit)
		}
		text, err := os.ReadFile(filepath.Join(dir, unit+".i"))
		if err != nil {
			t.Fatal(err)
		}
		// h.c's text has its header's comments, so its own too.
		if kept := strings.Contains(string(text), "the marker comment"); kept != (unit == "h") {
			t.Errorf("%s.c: the -E step kept the comments: %v, want %v", unit, kept, unit == "h")
		}
	}
}

// TestCommentedDirective: where the -E step keeps comments (-Wextra, a
// fallthrough comment in the unit), a
// directive after a comment on its line (which -C makes text) is still
// obeyed, as the compiler obeys it: the unit is woven, without a
// diagnostic, and runs as gcc's build does.
func TestCommentedDirective(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := "#include <stdio.h>\n#include <stdlib.h>\n/* no fallthrough: -C all the same */\n/* how many */ #define N 3\n/*\n * the exit code\n */ # /* splice\n*/ define CODE 7\n" +
		"int main(void)\n{\n\tint *p = malloc(N * sizeof *p);\n\tfor (int i = 0; i < N; i++)\n\t\tp[i] = i * i;\n" +
		"\tprintf(\"%d %d\\n\", N, p[N - 1]);\n\tfree(p);\n\treturn CODE;\n}\n"
	os.WriteFile(filepath.Join(dir, "cd.c"), []byte(src), 0o644)
	env := []string{"WEAVE_CC=gcc", "WEAVE_SUMMARY=0"}
	r := run(t, dir, env, weaveBin, "cc", "-O2", "-Wextra", "-Werror", "-c", "cd.c")
	if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, "cd.o")) {
		t.Errorf("weave cc -Wextra -Werror -c cd.c: exit %d, stderr %q (want a woven cd.o, no diagnostic)", r.code, r.stderr)
	}
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-Wextra", "-o", "woven", "cd.c")
	mustRun(t, dir, nil, "gcc", "-O2", "-Wextra", "-o", "plain", "cd.c")
	w, p := run(t, dir, env, "./woven"), run(t, dir, nil, "./plain")
	if w != p || p.code != 7 || p.stdout != "3 4\n" {
		t.Errorf("woven %+v, plain %+v (want the same, exit 7, \"3 4\")", w, p)
	}
}

// TestCommentedRedefinition: where the -E step keeps comments (-Wextra,
// a fallthrough comment in the unit), a macro defined again with the
// same body but for a comment (zstd's "#define FSE_STATIC_LINKING_ONLY
// /* FSE_MIN_TABLELOG */", then the same without in huf.h) is no
// redefinition, as for gcc: -CC's warning at each unit was weave's
// alone. A real one still warns as gcc does.
func TestCommentedRedefinition(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "h.h"), []byte("#define LINKING_ONLY\n"), 0o644)
	body := "#include <stdlib.h>\n#define LINKING_ONLY  /* the comment */\n#include \"h.h\"\n%s" +
		"int f(int x)\n{\n\tchar *p = malloc(4);\n\tswitch (x) {\n\tcase 1:\n\t\tx++;\n\t\t/* fall through */\n\tcase 2:\n\t\tx++;\n\t}\n\tfree(p);\n\treturn x;\n}\n"
	os.WriteFile(filepath.Join(dir, "same.c"), []byte(fmt.Sprintf(body, "")), 0o644)
	os.WriteFile(filepath.Join(dir, "real.c"), []byte(fmt.Sprintf(body, "#define N 1 /* one */\n#define N 2\n")), 0o644)
	env := []string{"WEAVE_CC=gcc", "WEAVE_CACHE=off"}
	for _, werror := range []string{"-Werror", "-Wall"} {
		r := run(t, dir, env, weaveBin, "cc", "-O2", "-Wextra", werror, "-c", "same.c")
		if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, "same.o")) {
			t.Errorf("same.c %s: exit %d, stderr %q (want a woven same.o, no warning)", werror, r.code, r.stderr)
		}
	}
	w := run(t, dir, env, weaveBin, "cc", "-O2", "-Wextra", "-c", "real.c")
	p := run(t, dir, nil, "gcc", "-O2", "-Wextra", "-c", "real.c")
	if w.code != p.code || w.stderr != p.stderr || !strings.Contains(p.stderr, `"N" redefined`) {
		t.Errorf("real.c: weave cc exit %d, stderr %q; gcc exit %d, stderr %q", w.code, w.stderr, p.code, p.stderr)
	}
}

// TestCommentedMacros: where the -E step keeps comments (-Wextra, a
// fallthrough comment in the unit), a comment in a stringized macro
// argument (an assertion's message) or in a macro's body is not in the
// string, as gcc compiling the source leaves it out; a fallthrough
// comment in a macro's body (expat's xmltok_impl.c) still silences the
// warning; a comment in an argument pasted with ## (an error under -C)
// leaves the unit woven. The woven program prints what gcc's does.
func TestCommentedMacros(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := "#include <stdio.h>\n#include <stdlib.h>\n#define S(x) #x\n#define T(x) S(x)\n#define M a /* in M */ b // and here\n" +
		"#define CHECK(e) printf(\"%s: %s\\n\", (e) ? \"ok\" : \"failed\", #e)\n#define CAT(a, b) a##b\n" +
		"#define CASES(x) \\\n\tcase 1: \\\n\t\tx += 10; \\\n\t\t/* fall through */ \\\n\tcase 2: \\\n\t\tx += 20; \\\n\t\tbreak;\n" +
		"static int f(int c)\n{\n\tint x = 0;\n\tswitch (c) {\n\tCASES(x)\n\tdefault:\n\t\tx = -1;\n\t}\n\treturn x;\n}\n" +
		"int main(int argc, char **argv)\n{\n\tchar *p = malloc(4);\n\tputs(S(a /* the comment */ b));\n\tputs(T(M));\n\tputs(S(c // line\n\t\td));\n" +
		"\tputs(\"/* a string's own */\");\n\tCHECK(f(argc) == 30 /* one argument */);\n\tfree(p);\n\treturn 0;\n}\n"
	os.WriteFile(filepath.Join(dir, "cm.c"), []byte(src), 0o644)
	pasted := "#include <stdlib.h>\n#define CAT(a, b) a##b\nint f(int c)\n{\n\tint CAT(x, /* q */ y) = c;\n\tchar *p = malloc(4);\n" +
		"\tswitch (c) {\n\tcase 1:\n\t\txy++;\n\t\t/* FALLTHROUGH */\n\tdefault:\n\t\txy++;\n\t}\n\tfree(p);\n\treturn xy;\n}\n"
	os.WriteFile(filepath.Join(dir, "paste.c"), []byte(pasted), 0o644)
	env := []string{"WEAVE_CC=gcc", "WEAVE_SUMMARY=0", "WEAVE_CACHE=off"}
	w := run(t, dir, env, weaveBin, "cc", "-O2", "-Wextra", "-o", "woven", "cm.c")
	p := run(t, dir, nil, "gcc", "-O2", "-Wextra", "-o", "plain", "cm.c")
	if w.code != 0 || p.code != 0 || w.stderr != p.stderr || !isWoven(t, filepath.Join(dir, "woven")) {
		t.Fatalf("weave cc: exit %d, stderr %q; gcc: exit %d, stderr %q (want a woven program, gcc's diagnostics)", w.code, w.stderr, p.code, p.stderr)
	}
	wr, pr := run(t, dir, env, "./woven"), run(t, dir, nil, "./plain")
	if wr != pr || !strings.Contains(pr.stdout, "a b\na b\nc d\n/* a string's own */\nok: f(argc) == 30\n") {
		t.Errorf("woven printed %q, plain %q (want the same)", wr.stdout, pr.stdout)
	}
	r := run(t, dir, env, weaveBin, "cc", "-O2", "-Wextra", "-c", "paste.c")
	if r.code != 0 || strings.Contains(r.stderr, "not woven") || !isWoven(t, filepath.Join(dir, "paste.o")) {
		t.Errorf("weave cc -c paste.c: exit %d, stderr %q (want a woven paste.o)", r.code, r.stderr)
	}
}

// c23Source uses the C23 syntax gcc and clang accept in older modes,
// which gnulib's headers write (sed 4.9 had 16 units built unwoven):
// attributes and message-less static assertions (one of a system
// header's macros, which -E writes with linemarkers inside), with "[["
// in strings.
// Its [[gnu::noreturn]] must stay on die, or pick's end warns.
const c23Source = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
_Static_assert (sizeof (int) == 4);
_Static_assert (MB_LEN_MAX <= SCHAR_MAX);
struct pair { int a; _Static_assert (sizeof (int) == 4); [[__maybe_unused__]] int b; };
static int twice ([[__maybe_unused__]] int unused, int x) { return 2 * x; }
[[__nodiscard__]] int three (void) { return 3; }
[[gnu::noreturn]] static void die (int code) { fprintf (stderr, "die %d\n", code); exit (code); }
[[gnu::cold, deprecated ("not [[this]]")]] int four (void);
int four (void) { return 4; }
static int pick (int x) { if (x > 0) return x; die (5); }
int main (int argc, char **argv)
{
  [[__maybe_unused__]] int z = 1;
  int grid[2][2] = { [0][1] = 7 };
  _Static_assert (1);
  switch (argc) { case 1: z++; [[__fallthrough__]]; case 2: z++; break; }
  char *p = malloc (10);
  strcpy (p, "[[x]]");
  printf ("%d %d %d %s %s\n", twice (0, 1) + three () + pick (argc), z, grid[0][1], p, "[[y]]");
  free (p);
  pick (argc - 2);
  return 0;
}
`

// TestC23Syntax: a unit with C23 attributes and static assertions is
// woven, with no diagnostic under -Werror=return-type (a declaration
// weave inserts before a function goes before its attributes), and runs
// as the plain build does.
func TestC23Syntax(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "c23.c"), []byte(c23Source), 0o644)
			flags := []string{"-O2", "-Wall", "-Werror=return-type", "-Wno-deprecated-declarations"}
			if cc == "clang" {
				flags = append(flags, "-fdouble-square-bracket-attributes", "-Wno-c2x-extensions")
			}
			env := []string{"WEAVE_CC=" + cc, "WEAVE_SUMMARY=0"}
			r := run(t, dir, env, append(append([]string{weaveBin, "cc"}, flags...), "-o", "woven", "c23.c")...)
			if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, "woven")) {
				t.Fatalf("weave cc: exit %d, stderr %q (want woven, no diagnostic)", r.code, r.stderr)
			}
			mustRun(t, dir, nil, append(append([]string{cc}, flags...), "-o", "plain", "c23.c")...)
			for _, args := range [][]string{nil, {"x"}, {"x", "y"}} {
				w, p := run(t, dir, env, append([]string{"./woven"}, args...)...), run(t, dir, nil, append([]string{"./plain"}, args...)...)
				if w != p || !strings.Contains(p.stdout, "[[x]] [[y]]") {
					t.Errorf("args %q: woven %+v, plain %+v", args, w, p)
				}
			}
		})
	}
}

const macroWarnSource = `#include <stdio.h>
#include <stdlib.h>
struct item { int tt; double v; };
static double set(struct item *o, double v) { o->v = v; return v; }
#define SET(o, v) ((o != NULL) ? set(o, v) : (v))
int main(int argc, char **argv)
{
	struct item it[1] = {{0, 0}};
	struct item *p = malloc(sizeof *p);
	SET(it, 2.5);
	p->tt = argc;
	printf("%g %d\n", it[0].v, p->tt);
	free(p);
	return 4;
}
`

// TestMacroWarnings: under -Werror, a unit whose woven text draws only
// warnings the compiler leaves out in macro expansions (the plain
// compile passes under the same flags) is woven, with no diagnostic
// (cJSON's print_number.c and misc_tests.c were built unwoven); the
// same warning outside a macro is the user's error, as without weave.
func TestMacroWarnings(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "mw.c"), []byte(macroWarnSource), 0o644)
			os.WriteFile(filepath.Join(dir, "real.c"), []byte("#include <stdlib.h>\nint main(void)\n{\n\tint a[1] = {0};\n\tif (a != NULL)\n\t\treturn a[0];\n\treturn 1;\n}\n"), 0o644)
			env := []string{"WEAVE_CC=" + cc, "WEAVE_SUMMARY=0", "WEAVE_CACHE=off"}
			r := run(t, dir, env, weaveBin, "cc", "-O2", "-Wall", "-Werror", "-c", "mw.c")
			if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, "mw.o")) {
				t.Errorf("weave cc -Wall -Werror -c mw.c: exit %d, stderr %q (want a woven mw.o, no diagnostic)", r.code, r.stderr)
			}
			mustRun(t, dir, env, weaveBin, "cc", "-O2", "-Wall", "-Werror", "-o", "woven", "mw.c")
			mustRun(t, dir, nil, cc, "-O2", "-Wall", "-Werror", "-o", "plain", "mw.c")
			if w, p := run(t, dir, env, "./woven"), run(t, dir, nil, "./plain"); w != p || p.code != 4 || p.stdout != "2.5 1\n" {
				t.Errorf("woven %+v, plain %+v (want the same, exit 4, \"2.5 1\")", w, p)
			}
			for _, strict := range []string{"", "WEAVE_STRICT=1"} {
				p := run(t, dir, nil, cc, "-Wall", "-Werror", "-c", "real.c")
				w := run(t, dir, append(env, strict), weaveBin, "cc", "-Wall", "-Werror", "-c", "real.c")
				_, err := os.Stat(filepath.Join(dir, "real.o"))
				if p.code == 0 || w.code != p.code || w.stderr != p.stderr || err == nil {
					t.Errorf("%s weave cc -c real.c: exit %d\n%s\n%s: exit %d\n%s\n(want the compiler's error and no real.o: %v)", strict, w.code, w.stderr, cc, p.code, p.stderr, err)
				}
			}
		})
	}
}

// TestDeprecatedCalls: a call of a deprecated function warns where the
// plain build warns, at the user's line, and not where a #pragma GCC
// diagnostic silences it (dash's sigclearmask), not in weave's text;
// under -Werror the silenced call still builds woven.
func TestDeprecatedCalls(t *testing.T) {
	for _, cc := range []string{"gcc", "clang"} {
		t.Run(cc, func(t *testing.T) {
			testtool.Need(t, cc)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a.c"), []byte(deprecatedSource), 0o644)
			os.WriteFile(filepath.Join(dir, "b.c"), []byte("int old(int x) { return x + 40; }\n"), 0o644)
			env := []string{"WEAVE_CC=" + cc, "WEAVE_SUMMARY=0", "WEAVE_CACHE=off"}
			warned := func(stderr string) (at []string) {
				for _, l := range strings.Split(stderr, "\n") {
					if f := strings.SplitN(l, ":", 3); len(f) == 3 && strings.Contains(l, "warning:") {
						at = append(at, f[0]+":"+f[1])
					}
				}
				return at
			}
			p := mustRun(t, dir, nil, cc, "-O2", "-Wall", "-c", "a.c")
			w := mustRun(t, dir, env, weaveBin, "cc", "-O2", "-Wall", "-c", "a.c")
			if fmt.Sprint(warned(w.stderr)) != fmt.Sprint(warned(p.stderr)) || len(warned(p.stderr)) != 1 {
				t.Errorf("weave cc -Wall -c a.c warned at %v, %s at %v (want the same, one):\n%s", warned(w.stderr), cc, warned(p.stderr), w.stderr)
			}
			r := run(t, dir, env, weaveBin, "cc", "-O2", "-Werror=deprecated-declarations", "-DQUIET_ONLY", "-c", "a.c")
			if r.code != 0 || r.stderr != "" || !isWoven(t, filepath.Join(dir, "a.o")) {
				t.Errorf("weave cc -Werror=deprecated-declarations -DQUIET_ONLY -c a.c: exit %d, stderr %q (want a woven a.o, no diagnostic)", r.code, r.stderr)
			}
			mustRun(t, dir, env, weaveBin, "cc", "-O2", "-o", "woven", "a.c", "b.c")
			mustRun(t, dir, nil, cc, "-O2", "-o", "plain", "a.c", "b.c")
			if w, p := run(t, dir, env, "./woven"), run(t, dir, nil, "./plain"); w != p || p.stdout != "41 82\n" {
				t.Errorf("woven %+v, plain %+v (want the same, \"41 82\")", w, p)
			}
		})
	}
}

const deprecatedSource = `#include <stdio.h>
__attribute__((deprecated)) int old(int x);
static int quiet(int x)
{
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	return old(x);
#pragma GCC diagnostic pop
}
#ifndef QUIET_ONLY
int loud(int x)
{
	return old(x) * 2;
}
#else
int loud(int x) { return quiet(x) * 2 - 40; }
#endif
int main(int argc, char **argv)
{
	printf("%d %d\n", quiet(argc), loud(argc));
	return 0;
}
`

// macroDumpSource has macros that name themselves (gawk's readdir_test.c:
// `#define fw u.fw`) and a function-like macro that calls the function it
// names: expanded a second time, its text is another program.
const macroDumpSource = `#include <stdio.h>
#include <stdlib.h>
struct dir { union { int fw; char buf[16]; } u; };
#define fw u.fw
static int add(int a, int b) { return a + b; }
#define add(a, b) add(a, (b) + 1)
static struct dir *keep(void) { return malloc(sizeof(struct dir)); }
int main(void)
{
	struct dir *d = malloc(sizeof *d);
	d->fw = add(1, 2);
	printf("%d\n", d->fw);
	keep();
	free(d);
	return d == NULL ? 1 : 3;
}
`

// TestMacroDumps: -g3 and -dD make the -E step write the macros into
// its output (the compiler reads them from there for the debug
// information), -dN and -dU some of them, -dI the #include lines; under
// -dM the output is the macros alone, under -fdirectives-only the unit
// with its macros unexpanded. Each such unit is woven (gawk's
// readdir_test.c was built unwoven under -g3: its macros were expanded a
// second time), -g3's object keeps the macros, and the program runs as
// gcc's build does, its leak at its line; a -dM compile made an object
// without the unit's functions.
func TestMacroDumps(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "md.c"), []byte(macroDumpSource), 0o644)
	env := []string{"WEAVE_CC=gcc", "WEAVE_STRICT=1", "WEAVE_CACHE=off", "WEAVE_OUT="}
	for _, flags := range [][]string{{"-g3"}, {"-ggdb3", "-Wextra"}, {"-dD"}, {"-dM"}, {"-dN"}, {"-dI"}, {"-dU"}, {"-dDI"}, {"-fdirectives-only"}} {
		name := "m" + strings.Join(flags, "")
		obj := filepath.Join(dir, name+".o")
		r := run(t, dir, env, append(append([]string{weaveBin, "cc", "-O1"}, flags...), "-c", "md.c", "-o", obj)...)
		if r.code != 0 || r.stderr != "" || !isWoven(t, obj) {
			t.Errorf("weave cc %s -c md.c: exit %d, stderr %q (want a woven object, no diagnostic)", name, r.code, r.stderr)
			continue
		}
		mustRun(t, dir, env, weaveBin, "cc", "-o", name+".woven", obj)
		mustRun(t, dir, nil, append(append([]string{"gcc", "-O1"}, flags...), "-o", name+".plain", "md.c")...)
		w := run(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}, "./"+name+".woven")
		if p := run(t, dir, nil, "./"+name+".plain"); w != p || p.stdout != "4\n" {
			t.Errorf("%s: woven %+v, plain %+v (want the same, \"4\")", name, w, p)
		}
		if s := run(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=1"}, "./"+name+".woven").stderr; !regexp.MustCompile(`16 bytes in 1 blocks definitely lost at md\.c:7 keep <- main`).MatchString(s) {
			t.Errorf("%s: the leak is not keep's at md.c:7:\n%s", name, s)
		}
		if flags[0] == "-g3" {
			f, err := elf.Open(obj)
			if err != nil {
				t.Fatal(err)
			}
			sec := f.Section(".debug_macro")
			f.Close()
			if sec == nil || sec.Size == 0 {
				t.Errorf("-g3: the woven object has no .debug_macro")
			}
		}
	}
}
