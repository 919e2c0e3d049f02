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
