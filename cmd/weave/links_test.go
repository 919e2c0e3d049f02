package main

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/pseudostack"
)

// This file tests how woven objects link: into C++ programs, against a
// runtime of another ABI, into shared objects, by link-only commands,
// with their unit's record; and that weave itself is a static binary.

// TestCxxLink: a woven C library in a C++ program. Linked by weave's
// launcher form (weave g++, as make's CXX or CMake's
// CMAKE_CXX_LINKER_LAUNCHER give it) the program has the runtime and
// profiles the library's allocations; linked by g++ alone it fails with
// a first error that names the fix.
func TestCxxLink(t *testing.T) {
	testtool.Need(t, "gcc", "g++", "make")
	dir := ccDir(t)
	os.WriteFile(filepath.Join(dir, "main.cpp"), []byte(`#include <cstdio>
#include <vector>
extern "C" { int *lib_make(int n); void lib_drop(int *a); }
int main()
{
	std::vector<long> sums;
	for (int k = 0; k < 10; k++) {
		int *a = lib_make(100);
		long s = 0;
		for (int i = 0; i < 100; i++)
			s += a[i];
		lib_drop(a);
		sums.push_back(s);
	}
	std::printf("%ld\n", sums.back());
	return 0;
}
`), 0o644)
	os.WriteFile(filepath.Join(dir, "Makefile"), []byte(`prog: main.o liblib.a
	$(CXX) -o $@ main.o liblib.a
liblib.a: lib.o
	ar rc $@ lib.o
main.o: main.cpp
	$(CXX) -O2 -c main.cpp
lib.o: lib.c
	$(CC) -O2 -c lib.c
`), 0o644)
	env := []string{"WEAVE_CC=gcc"}
	r := run(t, dir, env, "make", "CC="+weaveBin+" cc", "CXX=g++")
	first := ""
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.Contains(l, "undefined reference") {
			first = l
			break
		}
	}
	if r.code == 0 || !strings.Contains(first, "`__weave_runtime_not_linked__link_with_weave_cc_or_weave_cxx'") {
		t.Errorf("make CXX=g++: exit %d, first undefined reference %q, want the one naming the fix\n%s", r.code, first, r.stderr)
	}
	mustRun(t, dir, env, "make", "CC="+weaveBin+" cc", "CXX="+weaveBin+" g++")
	prof := filepath.Join(dir, "prog.prof")
	p := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, "./prog")
	if p.stdout != "328350\n" {
		t.Errorf("prog printed %q", p.stdout)
	}
	rep := readReport(t, prof)
	found := false
	for _, f := range rep.Direct.Functions {
		found = found || f.Func.Name == "lib_make"
	}
	if !found {
		t.Errorf("the profile has no allocation of lib_make: %+v", rep.Direct.Functions)
	}
	checkValgrind(t, rep.Totals, dir, "./prog")
}

// TestABIMark: a woven x86-64 object references the symbol of weave.h's
// ABI, which the runtime defines: linked by this weave it runs as the
// plain build does; woven for another ABI (the same object with the
// mark's number changed, as an older or newer weave would make it) it
// fails to link with an undefined reference naming the mark, rather than
// running with the runtime's fields read at the wrong places.
func TestABIMark(t *testing.T) {
	testtool.Need(t, "gcc", "nm")
	if runtime.GOARCH != "amd64" {
		t.Skip("the mark is referenced by x86-64 objects only")
	}
	dir := ccDir(t)
	mark := pseudostack.ABIMark()
	other := strings.Replace(mark, fmt.Sprintf("_%d__", pseudostack.ABI()), fmt.Sprintf("_%d__", pseudostack.ABI()+1), 1)
	mustRun(t, dir, nil, weaveBin, "-o", "main.w.c", "main.c")
	text, err := os.ReadFile(filepath.Join(dir, "main.w.c"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "other.w.c"), bytes.ReplaceAll(text, []byte(mark), []byte(other)), 0o644)
	mustRun(t, dir, nil, "gcc", "-O2", "-c", "main.w.c", "other.w.c")
	mustRun(t, dir, nil, "gcc", "-O2", "-c", "util.c")
	if nm := mustRun(t, dir, nil, "nm", "main.w.o").stdout; !regexp.MustCompile(`(?m)^\s+U ` + mark + `$`).MatchString(nm) {
		t.Errorf("main.w.o does not reference %s:\n%s", mark, nm)
	}
	mustRun(t, dir, nil, weaveBin, "cc", "-o", "prog", "main.w.o", "util.o")
	mustRun(t, dir, nil, "gcc", "-o", "plain", "main.c", "util.c")
	if got, want := run(t, dir, []string{"WEAVE_OUT="}, "./prog"), run(t, dir, nil, "./plain"); got.stdout != want.stdout || got.code != want.code {
		t.Errorf("woven: exit %d, %q; plain: exit %d, %q", got.code, got.stdout, want.code, want.stdout)
	}
	r := run(t, dir, nil, weaveBin, "cc", "-o", "prog2", "other.w.o", "util.o")
	if r.code == 0 || !strings.Contains(r.stderr, "undefined reference to `"+other+"'") {
		t.Errorf("linking an object of another ABI: exit %d, want an undefined reference to %s:\n%s", r.code, other, r.stderr)
	}
}

// TestSharedFromDefaultObjects: objects compiled with the compiler's
// defaults (PIE here, no -fPIC) link into a shared object when they use no
// other object's data, and woven ones must too: their guards address the
// thread's fields through the GOT, not at a link-time constant (which a
// -shared link rejects), unless the command also links an executable or
// asks for one (-fPIE, -fno-pie); and so the runtime's table of functions
// known not to allocate, which a call through a pointer reads (its
// PC-relative address failed the link: "relocation R_X86_64_PC32 against
// symbol `__weave_known' can not be used when making a shared object").
func TestSharedFromDefaultObjects(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := "#include <stdlib.h>\n#include <string.h>\n" +
		"__attribute__((noinline)) static char *grow(char *p, size_t n) { return realloc(p, n); }\n" +
		"static char *(*volatile growp)(char *, size_t) = grow;\n" +
		"char *regrow(char *p, size_t n) { return growp(p, n); }\n" +
		"char *twice(const char *s) { size_t n = strlen(s); char *p = grow(malloc(n + 1), 2 * n + 1);\n" +
		"  memcpy(p, s, n); memcpy(p + n, s, n); p[2 * n] = 0; return p; }\n"
	if err := os.WriteFile(filepath.Join(dir, "lib.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"WEAVE_CC=gcc"}
	mustRun(t, dir, nil, "gcc", "-O2", "-c", "lib.c", "-o", "plain.o")
	mustRun(t, dir, nil, "gcc", "-shared", "-o", "libplain.so", "plain.o")
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-save-temps", "-c", "lib.c", "-o", "woven.o")
	if b, _ := os.ReadFile(filepath.Join(dir, "woven.woven.i")); !bytes.Contains(b, []byte("__weave_enter")) ||
		!bytes.Contains(b, []byte("(&__weave_fns")) {
		t.Fatal("the woven text has no guard")
	}
	mustRun(t, dir, env, weaveBin, "cc", "-shared", "-o", "libwoven.so", "woven.o")
	// Compiled for an executable explicitly, the guard may use the constant.
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-fPIE", "-save-temps", "--frames=all", "-c", "lib.c", "-o", "exe.o")
	if runtime.GOARCH == "amd64" {
		if b, _ := os.ReadFile(filepath.Join(dir, "exe.woven.i")); !bytes.Contains(b, []byte("__weave_enter_lex64(")) {
			t.Error("-fPIE: no local-exec guard in the woven text")
		}
	}
}

// TestLinkOnly: a command that only links (Lua's `cc -o lua lua.o
// liblua.a`) runs the compiler in place of weave's process, with the
// runtime and its dynamic list, and makes no temporary directory: the
// compiler's parent is the test, not weave. The program runs woven. A
// link that fails exits as the compiler did, with its message; a -shared
// link with a version script (a temporary copy of it) and a linked
// program whose output is a pipe of weave's own still work.
func TestLinkOnly(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	// The compiler: gcc, noting its parent's name.
	cc := filepath.Join(dir, "cc-parent")
	script := "#!/bin/sh\ntr -d '\\n' < /proc/$PPID/comm >> " + filepath.Join(dir, "parents") + "\necho >> " + filepath.Join(dir, "parents") + "\nexec gcc \"$@\"\n"
	if err := os.WriteFile(cc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "#include <stdlib.h>\n#include <stdio.h>\nint main(void) { char *p = malloc(10); printf(\"%d\\n\", p != 0); free(p); return 3; }\n"
	if err := os.WriteFile(filepath.Join(dir, "m.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"WEAVE_CC=" + cc, "TMPDIR=" + tmp}
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-c", "m.c")
	os.Remove(filepath.Join(dir, "parents"))
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-o", "m", "m.o")
	// The last compiler run is the link (the runtime's build, in a new
	// cache, runs it before).
	parents, _ := os.ReadFile(filepath.Join(dir, "parents"))
	if got := strings.Fields(string(parents)); len(got) == 0 || got[len(got)-1] == filepath.Base(weaveBin) {
		t.Errorf("the compilers' parents: %q (want the link's to be the test's process, not weave)", got)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files: %v", ents)
	}
	r := run(t, dir, []string{"WEAVE_OUT=" + filepath.Join(dir, "m.prof")}, filepath.Join(dir, "m"))
	if r.code != 3 || r.stdout != "1\n" {
		t.Errorf("m: exit %d, stdout %q", r.code, r.stdout)
	}
	if st, err := os.Stat(filepath.Join(dir, "m.prof")); err != nil || st.Size() == 0 {
		t.Errorf("no profile: %v", err)
	}
	if nm := mustRun(t, "", nil, "nm", "-D", "--defined-only", filepath.Join(dir, "m")).stdout; !strings.Contains(nm, " __weave_malloc\n") {
		t.Errorf("the runtime is not exported:\n%s", nm)
	}

	// A failing link: the compiler's exit status and message, nothing of weave's.
	r = run(t, dir, env, weaveBin, "cc", "-o", "bad", "m.o", "-lno-such-library-here")
	if r.code != 1 || !strings.Contains(r.stderr, "no-such-library-here") || strings.Contains(r.stderr, "weave:") {
		t.Errorf("failing link: exit %d\n%s", r.code, r.stderr)
	}

	// -shared with a version script: a copy of it in a temporary
	// directory, removed afterwards.
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-fPIC", "-c", "m.c", "-o", "pic.o")
	if err := os.WriteFile(filepath.Join(dir, "v.map"), []byte("{ global: main; local: *; };\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, env, weaveBin, "cc", "-shared", "-o", "libm.so", "pic.o", "-Wl,--version-script=v.map")
	if nm := mustRun(t, "", nil, "nm", "-D", "--defined-only", filepath.Join(dir, "libm.so")).stdout; !strings.Contains(nm, " __weave_malloc\n") {
		t.Errorf("libm.so does not export the runtime:\n%s", nm)
	}
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("temporary files after the -shared link: %v", ents)
	}
}

// TestPassthroughInPlace: a command weave gives to the compiler as it is
// (configure's probe `cc -o conftest conftest.c`, `cc -E`) runs the
// compiler in place of weave's process: its parent is the test, not weave.
// The probe builds and runs as the plain one does, its exit status is the
// compiler's, and a compile with nothing of weave's to do after it still
// finds weave_api.h.
func TestPassthroughInPlace(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	parents := filepath.Join(dir, "parents")
	cc := filepath.Join(dir, "cc-parent")
	script := "#!/bin/sh\ntr -d '\\n' < /proc/$PPID/comm >> " + parents + "\necho >> " + parents + "\nexec gcc \"$@\"\n"
	if err := os.WriteFile(cc, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "#include <stdio.h>\n#include <weave_api.h>\nint main(void) { printf(\"probe %d\\n\", (int)sizeof(long)); return 7; }\n"
	if err := os.WriteFile(filepath.Join(dir, "conftest.c"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"WEAVE_CC=" + cc}
	mustRun(t, dir, env, weaveBin, "cc", "-O2", "-o", "conftest", "conftest.c")
	apiDir, err := filepath.Abs(filepath.Join("..", "..", "api"))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, nil, "gcc", "-O2", "-o", "plain", "-I", apiDir, "conftest.c")
	got := run(t, dir, nil, filepath.Join(dir, "conftest"))
	want := run(t, dir, nil, filepath.Join(dir, "plain"))
	if got.code != want.code || got.stdout != want.stdout {
		t.Errorf("probe: exit %d, %q; plain: exit %d, %q", got.code, got.stdout, want.code, want.stdout)
	}
	if nm := mustRun(t, "", nil, "nm", filepath.Join(dir, "conftest")).stdout; strings.Contains(nm, "__weave_") {
		t.Errorf("the probe was woven:\n%s", nm)
	}
	pp := mustRun(t, dir, env, weaveBin, "cc", "-E", "conftest.c")
	if !strings.Contains(pp.stdout, "probe %d") {
		t.Errorf("cc -E: no preprocessed text:\n%s", pp.stdout)
	}
	r := run(t, dir, env, weaveBin, "cc", "-o", "conftest", "missing.c")
	if r.code != 1 || !strings.Contains(r.stderr, "missing.c") || strings.Contains(r.stderr, "weave:") {
		t.Errorf("a failing probe: exit %d\n%s", r.code, r.stderr)
	}
	b, _ := os.ReadFile(parents)
	ps := strings.Fields(string(b))
	if len(ps) != 3 {
		t.Fatalf("the compilers' parents: %q, want 3", ps)
	}
	self := filepath.Base(weaveBin)
	self = self[:min(len(self), 15)] // comm's length
	for _, p := range ps {
		if p == self {
			t.Errorf("the compilers' parents: %q (want the test's process, not weave)", ps)
			break
		}
	}
}

// TestStaticBinary: weave is built (as `go build` builds it, cgo
// available) into a static binary: no dynamic loader, libc or pthread
// start in each of the build's many weave cc processes. Package net
// (the control socket's dial) would bring cgo back; tracepoints dials
// with syscalls instead.
func TestStaticBinary(t *testing.T) {
	f, err := elf.Open(weaveBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			libs, _ := f.ImportedLibraries()
			t.Errorf("weave is dynamically linked (PT_INTERP; libraries %v): a package needs cgo (go list -deps ./cmd/weave | grep -x -e net -e runtime/cgo)", libs)
		}
	}
}

// TestUnitRecord: a woven unit's record reaches the runtime, and leaves it,
// as it did from C constructors: where the guards are x86-64 asm the record
// and its registration are one top-level asm (weave.go, unitRecord), which
// gcc compiles in no time; under -masm=intel they are C constructors. A
// two-unit program (one unit's functions all frameless but one, with a
// constructor and a destructor of its own) built both ways, and with LTO
// (the asm may name no static), CET and --gc-sections: each prints what
// the plain build prints, and each profile counts the frameless functions
// and records the pointcut (a quote and a backslash in it) as the
// constructors' build does.
func TestUnitRecord(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	files := map[string]string{
		"main.c": "#include <stdio.h>\n#include <stdlib.h>\nint twice(int);\nint add(int, int);\nchar *dup(const char *);\n" +
			"int main(void) { char *s = dup(\"unit\"); printf(\"%s %d %d\\n\", s, twice(21), add(2, 3)); free(s); return 0; }\n",
		"util.c": "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n" +
			"__attribute__((constructor)) static void hello(void) { puts(\"constructor\"); }\n" +
			"__attribute__((destructor)) static void bye(void) { puts(\"destructor\"); }\n" +
			"int twice(int x) { return 2 * x; }\nint add(int a, int b) { return a + b; }\n" +
			"char *dup(const char *s) { char *p = malloc(strlen(s) + 1); return strcpy(p, s); }\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mustRun(t, dir, nil, "gcc", "-O2", "main.c", "util.c", "-o", "plain")
	plain := run(t, dir, nil, filepath.Join(dir, "plain"))
	env := []string{"WEAVE_CC=gcc", "WEAVE_CACHE=off"}
	const pointcut = `--exclude 'a"b\c'`
	var oracle string
	for _, flags := range [][]string{
		{"-O2", "-masm=intel"}, // C constructors: the oracle
		{"-O2"},
		{"-O2", "-flto"},
		{"-O2", "-fcf-protection=full", "-ffunction-sections", "-fdata-sections", "-Wl,--gc-sections"},
	} {
		what := strings.Join(flags, " ")
		compile := append(append([]string{weaveBin, "cc", "--exclude", `a"b\c`, "-save-temps", "-c"}, flags...), "main.c", "util.c")
		mustRun(t, dir, env, compile...)
		woven, _ := os.ReadFile(filepath.Join(dir, "util.woven.i"))
		if asm := !slices.Contains(flags, "-masm=intel"); asm == bytes.Contains(woven, []byte("__weave_register_unit(&")) || !bytes.Contains(woven, []byte("__weave_register_unit")) {
			t.Errorf("%s: the woven text registers the unit from %s", what, map[bool]string{true: "C, want the asm", false: "asm, want C"}[asm])
		}
		mustRun(t, dir, env, append(append([]string{weaveBin, "cc"}, flags...), "main.o", "util.o", "-o", "woven")...)
		prof := filepath.Join(dir, "p.prof")
		if !sameRun(t, what, plain, run(t, dir, []string{"WEAVE_OUT=" + prof}, filepath.Join(dir, "woven"))) {
			continue
		}
		p, err := profile.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		frameless, _ := p.MetaValue("frameless")
		if pc, _ := p.MetaValue("pointcut"); pc != pointcut {
			t.Errorf("%s: M pointcut %q, want %q", what, pc, pointcut)
		}
		switch {
		case oracle == "" && (frameless == "" || frameless == "0"):
			t.Fatalf("%s: no frameless functions counted", what)
		case oracle == "":
			oracle = frameless
		case frameless != oracle:
			t.Errorf("%s: M frameless %q, the constructors' build %q", what, frameless, oracle)
		}
	}
}

// TestExportDynamicLink: an executable linked with -rdynamic or -Wl,-E
// (Lua's) gets no --dynamic-list for the runtime, which would change
// nothing in it: it exports the runtime's symbols all the same (every one
// the plain link exports), and a woven library it loads uses its runtime
// (the library's function in the profile).
func TestExportDynamicLink(t *testing.T) {
	testtool.Need(t, "gcc", "nm")
	dir := t.TempDir()
	src := func(name string) string { return leaksSource(t, name) }
	lib := filepath.Join(dir, "libw.so")
	env := []string{"WEAVE_CC=gcc"}
	mustRun(t, dir, env, weaveBin, "cc", "-shared", "-fPIC", "-o", lib, src("dlclose_lib.c"))
	exported := func(exe string) map[string]bool {
		out := mustRun(t, dir, nil, "nm", "-D", "--defined-only", exe).stdout
		syms := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			if f := strings.Fields(l); len(f) == 3 && strings.HasPrefix(f[2], "__weave_") {
				syms[f[2]] = true
			}
		}
		return syms
	}
	plain := filepath.Join(dir, "plain")
	if r := mustRun(t, dir, env, weaveBin, "cc", "-v", "-o", plain, src("dlclose_main.c"), "-ldl"); !strings.Contains(r.stderr, "--dynamic-list") {
		t.Fatalf("the plain link has no dynamic list (-v):\n%s", r.stderr)
	}
	want := exported(plain)
	if len(want) < 50 {
		t.Fatalf("the plain link exports %d of the runtime's symbols", len(want))
	}
	for _, flag := range []string{"-rdynamic", "-Wl,-E", "-Wl,--as-needed,--export-dynamic"} {
		exe := filepath.Join(dir, "main")
		r := mustRun(t, dir, env, weaveBin, "cc", "-v", "-o", exe, src("dlclose_main.c"), "-ldl", flag)
		if strings.Contains(r.stderr, "--dynamic-list") {
			t.Errorf("%s: the link has a dynamic list", flag)
		}
		got := exported(exe)
		for s := range want {
			if !got[s] {
				t.Errorf("%s: %s not exported", flag, s)
			}
		}
		prof := filepath.Join(dir, "m.prof")
		if r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe, lib); r.stdout != "closed\n" {
			t.Errorf("%s: stdout %q", flag, r.stdout)
		}
		p, err := profile.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(p.Funcs, func(f *profile.Func) bool { return f.Name == "lib_make" }) {
			t.Errorf("%s: no lib_make in the profile: the library did not use the program's runtime", flag)
		}
	}
}
