package weave

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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
// -O2 -Wall -Wextra to an object whose asm thunks are weak hidden
// functions; without the option (an LTO compile) every thunk is C.
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
static int a_int(int x) { return x > 3 ? ext_int(x, "s") : x; }
static double a_double(int x) { return x > 3 ? ext_double(x, x, 1.0f) : x; }
static void a_void(int x) { if (x) ext_void(); }
static int c_struct(int x) { return x > 3 ? (int)ext_struct(x).a : x; }
static int c_ld(int x) { return x > 3 ? (int)ext_ld(x) : x; }
static int c_six(int x) { return x > 3 ? ext_six(x, x, x, x, x, x) : x; }
static int c_label(int x) { return x > 3 ? ext_label(x) : x; }
int all(int x)
{
	a_void(x);
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
		if len(ms) != 7 {
			t.Fatalf("asm %v: %d of the 7 functions found in the woven text", asm, len(ms))
		}
		for _, m := range ms {
			thunk := regexp.MustCompile(`__weave_t\d+\w*`).FindString(m[0])
			if thunk == "" {
				t.Errorf("asm %v: %s takes no thunk:\n%s", asm, m[1], m[0])
				continue
			}
			defined := regexp.MustCompile(`__asm__\(".*\\n` + thunk + `:\\n`).MatchString(text)
			extern := strings.Contains(text, "extern __typeof__(ext_"+strings.TrimPrefix(strings.TrimPrefix(m[1], "a_"), "c_")+") "+thunk+" ")
			if want := asm && strings.HasPrefix(m[1], "a_"); defined != want || extern != want {
				t.Errorf("asm %v: %s's thunk %s in assembly %v (declared extern %v), want %v:\n%s", asm, m[1], thunk, defined, extern, want, m[0])
			}
		}
		out := filepath.Join(t.TempDir(), "a.woven.c")
		if err := os.WriteFile(out, res.Text, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("gcc", "-O2", "-Wall", "-Wextra", "-c", "-x", "cpp-output", out, "-o", out+".o")
		if b, err := cmd.CombinedOutput(); err != nil || len(b) > 0 {
			t.Fatalf("asm %v: the woven text does not compile cleanly: %v\n%s", asm, err, b)
		}
		b, err := exec.Command("nm", out+".o").Output()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(regexp.MustCompile(`(?m) W __weave_t\d+_[0-9a-f]+$`).FindAll(b, -1)); asm && n != 3 || !asm && n != 0 {
			t.Errorf("asm %v: %d weak thunk symbols, want 3 with asm thunks (a_*), 0 without:\n%s", asm, n, b)
		}
	}
}
