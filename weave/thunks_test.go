package weave

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestThunks: which calls framed where they are made go through a thunk
// (thunks.go), and the woven text compiles with no warning of the
// weaver's code at -Wall -Wextra. Each function below is framed at its one call of another
// unit's function; the name says whether that call may take a thunk.
func TestThunks(t *testing.T) {
	testtool.Need(t, "gcc")
	src := filepath.Join(t.TempDir(), "t.c")
	if err := os.WriteFile(src, []byte(`#include <stddef.h>
struct known { int x; };
typedef int (*cb)(int);
int ext_plain(const struct known *k, cb f, int a[], unsigned char c);
void ext_void(int (*g)(int, char *), double);
struct known ext_struct(int);
int ext_paren(int);
int (ext_paren)(int);
int ext_var(const char *fmt, ...);
int ext_proto_tag(struct fresh *p);
int ext_oldstyle();
void *alloca(size_t);
int ext_vla(int n, int a[n]);
void ext_fnparam(void (callback)(void *), int (n), char (*(s)));
static int y_plain(const struct known *k, int *a) { return k->x > 0 ? k->x : ext_plain(k, 0, a, 'c'); }
static void y_void(int x) { if (x) ext_void(0, x); }
static int y_struct(int x) { return x ? ext_struct(x).x : 0; }
static int y_paren(int x) { return x > 3 ? ext_paren(x) : x; }
static void y_fnparam(int x) { if (x) ext_fnparam(0, x, 0); }
static int n_var(int x) { return x > 3 ? ext_var("%d", x) : x; }
static int n_proto_tag(struct fresh *p, int x) { return x > 3 ? ext_proto_tag(p) : x; }
static int n_oldstyle(int x) { return x > 3 ? ext_oldstyle(x) : x; }
static int n_alloca(int x) { char *p = x > 3 ? alloca(x) : 0; return p != 0; }
static int n_vla(int x, int *a) { return x > 3 ? ext_vla(x, a) : x; }
static int n_args(int x) { return x > 3 ? ext_paren(ext_paren(x)) : x; }
int all(const struct known *k, int *a, struct fresh *p, int x)
{
	y_void(x);
	y_fnparam(x);
	return y_plain(k, a) + y_struct(x) + y_paren(x) + n_var(x) + n_proto_tag(p, x) + n_oldstyle(x) +
	       n_alloca(x) + n_vla(x, a) + n_args(x);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := weaveFileFrames(t, src, FramesAuto)
	text := string(res.Text)
	def := regexp.MustCompile(`(?m)^(?:static __typeof__\(\w+\) __weave_t\d+ [^;]*; )?static (?:int|void) ([yn]_\w+)\(.*`)
	ms := def.FindAllStringSubmatch(text, -1)
	if len(ms) != 11 {
		t.Fatalf("%d of the 11 functions found in the woven text:\n%s", len(ms), text[strings.Index(text, "struct known {"):])
	}
	for _, m := range ms {
		thunked := strings.Contains(m[0], "__weave_t")
		if want := strings.HasPrefix(m[1], "y_"); thunked != want {
			t.Errorf("%s: thunk %v, want %v:\n%s", m[1], thunked, want, m[0])
		}
		if !thunked && !strings.Contains(m[0], "__weave_enter") {
			t.Errorf("%s: no frame around its call:\n%s", m[1], m[0])
		}
	}
	out := filepath.Join(t.TempDir(), "t.woven.c")
	if err := os.WriteFile(out, res.Text, 0o644); err != nil {
		t.Fatal(err)
	}
	// The source's own warnings (its prototype-scope struct) are the
	// plain build's; none may come from the weaver's code.
	cmd := exec.Command("gcc", "-O2", "-Wall", "-Wextra", "-c", "-x", "cpp-output", out, "-o", out+".o")
	if b, err := cmd.CombinedOutput(); err != nil || strings.Contains(string(b), "weave") {
		t.Errorf("the woven text does not compile cleanly: %v\n%s", err, b)
	}
}

// TestAsmThunks: under Options.AsmThunks, which call thunks are assembly
// (asmthunk.go) and which stay C, and the woven text compiles cleanly at
// -O2 -Wall -Wextra to an object that calls each kept call's callee,
// through one thunk a callee (the two calls of ext_void: the assembler
// defines it once), and not the callee of a call gcc drops (c-torture's
// link_error: e9e87b0's top-level asm thunks kept the reference and
// failed the link); without the option every thunk is C.
func TestAsmThunks(t *testing.T) {
	testtool.Need(t, "gcc", "nm")
	src := filepath.Join(t.TempDir(), "a.c")
	if err := os.WriteFile(src, []byte(`struct pair { long a, b, c; };
int ext_int(int, const char *);
double ext_double(double, int, float);
void ext_void(void);
struct pair ext_struct(int);
long double ext_ld(long double);
int ext_six(int, int, int, int, int, long);
int ext_label(int) __asm__("ext_other");
void ext_dead(int);
static int a_int(int x) { return x > 3 ? ext_int(x, "s") : x; }
static double a_double(int x) { return x > 3 ? ext_double(x, x, 1.0f) : x; }
static void a_void(int x) { if (x) ext_void(); }
static inline void a_twice(int x) { if (x > 7) ext_void(); }
static void a_dead(int x) { if (x > 3 && x < 2) ext_dead(x); }
static int c_struct(int x) { return x > 3 ? (int)ext_struct(x).a : x; }
static int c_ld(int x) { return x > 3 ? (int)ext_ld(x) : x; }
static int c_six(int x) { return x > 3 ? ext_six(x, x, x, x, x, x) : x; }
static int c_label(int x) { return x > 3 ? ext_label(x) : x; }
int all(int x)
{
	a_void(x);
	a_twice(x);
	a_dead(x);
	a_twice(x * 3);
	return a_int(x) + (int)a_double(x) + c_struct(x) + c_ld(x) + c_six(x) + c_label(x);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, asm := range []bool{true, false} {
		res := weaveFileOpts(t, src, Options{Frames: FramesAuto, AsmThunks: asm})
		text := string(res.Text)
		fn := regexp.MustCompile(`(?m)^static (?:int|void|double) ([ac]_\w+)\(.*`)
		ms := fn.FindAllStringSubmatch(text, -1)
		if len(ms) != 8 {
			t.Fatalf("asm %v: %d of the 8 functions found in the woven text", asm, len(ms))
		}
		for _, m := range ms {
			thunk := regexp.MustCompile(`__weave_t\d+`).FindString(m[0])
			if thunk == "" {
				t.Errorf("asm %v: %s takes no thunk:\n%s", asm, m[1], m[0])
				continue
			}
			defined := regexp.MustCompile(`__asm__\("\.macro ` + thunk + `_def\\n.*\\n` + thunk + `:\\n.*__weave_enter_stub`).MatchString(text)
			extern := strings.Contains(text, "extern __typeof__(ext_"+strings.TrimPrefix(strings.TrimPrefix(m[1], "a_"), "c_")+") "+thunk+` __asm__("`+thunk+` ; `+thunk+`_def #") `)
			if want := asm && strings.HasPrefix(m[1], "a_"); defined != want || extern != want {
				t.Errorf("asm %v: %s's thunk %s in assembly %v (declared extern %v), want %v:\n%s", asm, m[1], thunk, defined, extern, want, m[0])
			}
		}
		out := filepath.Join(t.TempDir(), "a.woven.c")
		if err := os.WriteFile(out, res.Text, 0o644); err != nil {
			t.Fatal(err)
		}
		// gcc -fno-toplevel-reorder prints the macros where the text has
		// them, not first.
		for _, flags := range [][]string{{"-g", "-fno-toplevel-reorder"}, {}} {
			cmd := exec.Command("gcc", append(flags, "-O2", "-Wall", "-Wextra", "-c", "-x", "cpp-output", out, "-o", out+".o")...)
			if b, err := cmd.CombinedOutput(); err != nil || len(b) > 0 {
				t.Fatalf("asm %v %v: the woven text does not compile cleanly: %v\n%s", asm, flags, err, b)
			}
		}
		if asm {
			// a_twice's call, inlined twice, prints its thunk's macro twice.
			s, err := exec.Command("gcc", "-O2", "-S", "-x", "cpp-output", out, "-o", "-").Output()
			n := map[string]int{}
			for _, c := range regexp.MustCompile(`(?m)^\s*call\s+__weave_t\d+ ; __weave_t\d+_def #`).FindAllString(string(s), -1) {
				n[strings.TrimSpace(c)]++
			}
			if err != nil || !slices.ContainsFunc(slices.Collect(maps.Values(n)), func(k int) bool { return k > 1 }) {
				t.Errorf("no thunk's call printed twice (%v): %v", err, n)
			}
		}
		b, err := exec.Command("nm", out+".o").Output()
		if err != nil {
			t.Fatal(err)
		}
		for _, callee := range []string{"ext_int", "ext_double", "ext_void", "ext_struct", "ext_ld", "ext_six", "ext_other", "ext_dead"} {
			if got, want := regexp.MustCompile(`(?m) U `+callee+`$`).Match(b), callee != "ext_dead"; got != want {
				t.Errorf("asm %v: the object references %s %v, want %v:\n%s", asm, callee, got, want, b)
			}
		}
	}
}
