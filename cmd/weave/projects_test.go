package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"modernc.org/ccorpus2"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
)

// This file tests `weave cc` as a compiler driver: its shared helpers,
// and real projects from modernc.org/ccorpus2 built with their own build
// systems (TestProject*); each mode of a C compiler driver on small
// programs is ccmodes_test.go's (TestCCModes).

// fellBack matches the driver's warning for a source compiled unwoven.
var fellBack = regexp.MustCompile(`(?m)^weave: warning: (.*?): not woven: (.*)$`)

// ccSources are the sources of the driver mode tests.
var ccSources = map[string]string{
	"util.h": "#ifndef UTIL_H\n#define UTIL_H\nchar *dup_word(const char *w);\nint sum(int n);\n#endif\n",
	"util.c": `#include <stdlib.h>
#include <string.h>
#include "util.h"

char *dup_word(const char *w)
{
	char *p = malloc(strlen(w) + 1);
	return p ? strcpy(p, w) : 0;
}

int sum(int n)
{
	int *a = calloc(n, sizeof *a), s = 0;
	for (int i = 0; i < n; i++)
		a[i] = i;
	for (int i = 0; i < n; i++)
		s += a[i];
	free(a);
	return s;
}
`,
	"main.c": `#include <stdio.h>
#include <stdlib.h>
#include "util.h"

int main(void)
{
	char *w = dup_word("woven");
	printf("%s %d\n", w, sum(100));
	free(w);
	return 0;
}
`,
	// lib.c and libmain.c: a shared library and a program using it.
	"lib.c": `#include <stdlib.h>
int *lib_make(int n)
{
	int *a = malloc(n * sizeof *a);
	for (int i = 0; i < n; i++)
		a[i] = i * i;
	return a;
}
void lib_drop(int *a) { free(a); }
`,
	"libmain.c": `#include <stdio.h>
#include <stdlib.h>
int *lib_make(int n);
void lib_drop(int *a);
int main(void)
{
	long s = 0;
	for (int k = 0; k < 10; k++) {
		int *a = lib_make(100);
		for (int i = 0; i < 100; i++)
			s += a[i];
		lib_drop(a);
	}
	char *own = malloc(64);
	printf("%ld\n", s);
	free(own);
	return 0;
}
`,
	// asm.S: an assembly source (preprocessed by gcc), which passes through.
	"asm.S": `#define RET 42
	.text
	.globl answer
	.type answer, @function
answer:
	movl $RET, %eax
	ret
	.section .note.GNU-stack,"",@progbits
`,
	"asmmain.c": "int answer(void);\nint main(void) { return answer() == 42 ? 0 : 1; }\n",
	// f80.c uses __float80, which gcc accepts and cc/v4 does not parse.
	"f80.c": `#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	__float80 x = 1.5;
	char *p = malloc(8);
	printf("%d\n", (int)(x * 2));
	free(p);
	return 0;
}
`,
	"bad.c": "#include <stdio.h>\nint main(void)\n{\n\tint x = ;\n\treturn 0;\n}\n",
}

// ccDir returns a fresh directory holding ccSources.
func ccDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range ccSources {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// privateTmp returns a new empty directory under dir, for TMPDIR.
func privateTmp(t *testing.T, dir string) string {
	t.Helper()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	return tmp
}

// isWoven reports whether an object file (or executable) refers to the
// weave runtime.
func isWoven(t *testing.T, path string) bool {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "__weave_") {
			return true
		}
	}
	return false
}

// profiles returns the weave profiles in dir.
func profiles(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.prof"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// jsonReport is the part of `weave report --format json` the tests read.
type jsonReport struct {
	Totals totals `json:"totals"`
	Leaks  []struct {
		Chain []struct {
			Name string `json:"name"`
			File string `json:"file"`
		} `json:"chain"`
	} `json:"leaks"`
	Direct struct {
		Functions []struct {
			Func struct {
				Name string `json:"name"`
				File string `json:"file"`
			} `json:"func"`
		} `json:"functions"`
	} `json:"direct"`
	Bins []struct {
		Types []string `json:"types"`
	} `json:"bins"`
	RunTimeTypes []struct {
		Type string `json:"type"`
	} `json:"run_time_types"`
	Graph []struct {
		Name    string                 `json:"name"`
		Func    *struct{ File string } `json:"func"`
		Callers []struct {
			Name string `json:"name"`
		} `json:"callers"`
	} `json:"graph"`
}

func readReport(t *testing.T, profile string) jsonReport {
	t.Helper()
	r := mustRun(t, "", nil, weaveBin, "report", "--format", "json", profile)
	var rep jsonReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("report json: %v\n%s", err, r.stdout)
	}
	return rep
}

// graphFiles returns the source files of the functions in a report's
// call graph.
func (r jsonReport) graphFiles() map[string]bool {
	m := map[string]bool{}
	for _, e := range r.Graph {
		if e.Func != nil {
			m[filepath.Base(e.Func.File)] = true
		}
	}
	return m
}

// cmakeAtLeast reports whether cmake's version is at least major.minor.
func cmakeAtLeast(t *testing.T, major, minor int) bool {
	r := mustRun(t, "", nil, "cmake", "--version")
	m := regexp.MustCompile(`version (\d+)\.(\d+)`).FindStringSubmatch(r.stdout)
	if m == nil {
		return false
	}
	a, _ := strconv.Atoi(m[1])
	b, _ := strconv.Atoi(m[2])
	return a > major || a == major && b >= minor
}

// depFiles returns the dependency files under dir, "name: content".
func depFiles(t *testing.T, dir string) []string {
	t.Helper()
	var r []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".d") {
			data, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			r = append(r, rel+": "+string(data))
		}
		return nil
	})
	return r
}

// ccacheStats returns ccache's cache hits and misses.
func ccacheStats(t *testing.T, dir string, env []string) (hits, misses int) {
	t.Helper()
	r := mustRun(t, dir, env, "ccache", "--print-stats")
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		n, _ := strconv.Atoi(f[1])
		switch f[0] {
		case "direct_cache_hit", "preprocessed_cache_hit":
			hits += n
		case "cache_miss":
			misses += n
		}
	}
	return hits, misses
}

// ---------------------------------------------------------------- projects

// untarCorpus unpacks a .tar.gz of the corpus into dir.
func untarCorpus(t *testing.T, asset, dir string) {
	t.Helper()
	f, err := ccorpus2.FS.Open(asset)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(p, filepath.Clean(dir)+string(filepath.Separator)) {
			t.Fatalf("%s: bad path %s", asset, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(p, data, os.FileMode(h.Mode)&0o755|0o600)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// build runs a build command in dir and returns its output, failing the
// test if it fails or if a source fell back to unwoven.
func buildStep(t *testing.T, dir string, env []string, argv ...string) string {
	t.Helper()
	r := mustRun(t, dir, env, argv...)
	out := r.stdout + r.stderr
	if m := fellBack.FindAllString(out, -1); len(m) > 0 {
		t.Errorf("%s: %d sources not woven:\n%s", strings.Join(argv, " "), len(m), strings.Join(m, "\n"))
	}
	return out
}

func skipProjects(t *testing.T, tools ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("project builds are skipped under -short")
	}
	testtool.Need(t, append([]string{"gcc", "make"}, tools...)...)
}

// luaAllocators declare Lua's allocator (l_alloc, called through a
// pointer) and the luaM_ functions that call it, as a user would.
var luaAllocators = "--realloc l_alloc:ptr=2,size=4 --alloc luaM_malloc_:size=2 " +
	"--realloc luaM_realloc_:ptr=2,size=4 --realloc luaM_saferealloc_:ptr=2,size=4 --free luaM_free_:ptr=2"

// TestProjectLua builds Lua 5.4.4 with make -j2 CC="weave cc ..." (with a
// cold runtime cache, so both links race for it) and its allocator
// declared (luaAllocators), runs a script that exercises strings, tables,
// closures, coroutines and errors, and checks its output equals the plain
// build's, its totals equal valgrind's (nothing counted twice), and its
// profile charges Lua's allocations to the callers of its allocator
// functions, with the types of their sizeof arguments.
func TestProjectLua(t *testing.T) {
	skipProjects(t)
	root := t.TempDir()
	script, _ := filepath.Abs("../../testdata/lua/exercise.lua")
	var lua [2]string
	for i, kind := range []string{"plain", "woven"} {
		dir := filepath.Join(root, kind)
		untarCorpus(t, "assets/www.lua.org/ftp/lua-5.4.4.tar.gz", dir)
		src := filepath.Join(dir, "lua-5.4.4")
		cc, env := "gcc", []string(nil)
		if kind == "woven" {
			cc = weaveBin + " cc " + luaAllocators
			env = []string{"WEAVE_CC=gcc", "XDG_CACHE_HOME=" + filepath.Join(root, "cache")}
		}
		buildStep(t, src, env, "make", "-j2", "linux", "CC="+cc)
		lua[i] = filepath.Join(src, "src", "lua")
		if kind == "woven" && !isWoven(t, lua[i]) {
			t.Fatal("the woven lua has no runtime")
		}
	}
	dir := t.TempDir()
	prof := filepath.Join(dir, "lua.prof")
	want := run(t, dir, nil, lua[0], script)
	got := run(t, dir, []string{"WEAVE_OUT=" + prof}, lua[1], script)
	if want.code != 0 || !strings.Contains(want.stdout, "done\n") {
		t.Fatalf("plain lua: exit %d\n%s%s", want.code, want.stdout, want.stderr)
	}
	if !sameRun(t, "lua", want, got) {
		t.FailNow()
	}
	rep := readReport(t, prof)
	if rep.Totals.Allocs < 10000 || rep.Totals.BlocksInUse == 0 {
		t.Errorf("totals %+v: want many allocations and blocks in use at exit (os.exit without closing the state)", rep.Totals)
	}
	direct := map[string]bool{}
	for _, f := range rep.Direct.Functions {
		direct[f.Func.Name] = true
	}
	for _, fn := range []string{"l_alloc", "luaM_malloc_", "luaM_realloc_", "luaM_saferealloc_"} {
		if direct[fn] {
			t.Errorf("the declared allocator %s is in the direct allocation table: %v", fn, direct)
		}
	}
	if !direct["luaC_newobj"] || !direct["luaH_resize"] {
		t.Errorf("direct allocation table %v, want luaC_newobj and luaH_resize (the callers of luaM_malloc_, luaM_realloc_)", direct)
	}
	leaks := 0
	for _, l := range rep.Leaks {
		if len(l.Chain) > 1 && l.Chain[0].Name == "luaC_newobj" {
			leaks++
		}
	}
	if leaks == 0 {
		t.Errorf("no leak chain starts at luaC_newobj: %+v", rep.Leaks)
	}
	types := map[string]bool{}
	for _, ty := range rep.RunTimeTypes {
		types[ty.Type] = true
	}
	if !types["TValue[n]"] || !types["Node[n]"] {
		t.Errorf("types of a run-time count %v, want TValue[n] and Node[n] (luaM_newvector's n * sizeof(t))", types)
	}
	checkValgrind(t, rep.Totals, dir, lua[0], script)
}

// TestProjectSqlite builds the sqlite3 shell (shell.c and sqlite3.c)
// plain and woven with sqlite's allocator declared in a weave.conf
// (testdata/sqlite/weave.conf, as README shows it) and checks a SQL script
// gives the same output, the top allocation sites are sqlite's functions,
// not its allocator's, and, with lookaside memory off (whose slots count
// as allocations of the declared sqlite3DbMallocRaw), the counts equal
// valgrind's and the bytes the callers asked for are within sqlite's
// rounding (to 8) and size prefix (8) of malloc's.
func TestProjectSqlite(t *testing.T) {
	skipProjects(t)
	dir := t.TempDir()
	for _, f := range []string{"shell.c", "sqlite3.c", "sqlite3.h"} {
		data, err := ccorpus2.FS.ReadFile("assets/sqlite-amalgamation-3380100/" + f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	conf, err := os.ReadFile("../../testdata/sqlite/weave.conf")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "weave.conf"), conf, 0o644)
	// -O1: sqlite3.c takes long to compile at -O2 on small machines.
	args := []string{"-O1", "-DSQLITE_OMIT_LOAD_EXTENSION", "shell.c", "sqlite3.c", "-lpthread", "-lm"}
	mustRun(t, dir, nil, append(append([]string{"gcc"}, args...), "-o", "sqlite3.plain")...)
	buildStep(t, dir, []string{"WEAVE_CC=gcc"}, append(append([]string{weaveBin, "cc"}, args...), "-o", "sqlite3.woven")...)

	script, _ := filepath.Abs("../../testdata/sqlite/exercise.sql")
	sql := func(prog string, env []string, opts ...string) result {
		cmd := exec.Command(filepath.Join(dir, prog), append(opts, ":memory:")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		f, err := os.Open(script)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd.Stdin = f
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err = cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return result{stdout.String(), stderr.String(), code}
	}
	prof := filepath.Join(dir, "sqlite.prof")
	want := sql("sqlite3.plain", nil)
	got := sql("sqlite3.woven", []string{"WEAVE_OUT=" + prof})
	if want.code != 0 || !strings.Contains(want.stdout, "DONE|1000|real|'it''s'") {
		t.Fatalf("plain sqlite3: exit %d\n%s%s", want.code, want.stdout, want.stderr)
	}
	if !sameRun(t, "sqlite3", want, got) {
		t.FailNow()
	}
	rep := readReport(t, prof)
	if rep.Totals.Allocs < 1000 {
		t.Errorf("totals %+v: want thousands of allocations", rep.Totals)
	}
	if files := rep.graphFiles(); !files["sqlite3.c"] || !files["shell.c"] {
		t.Errorf("the call graph lacks sqlite3.c or shell.c: %v", files)
	}
	var top []string
	for _, f := range rep.Direct.Functions {
		top = append(top, f.Func.Name)
	}
	top = top[:min(5, len(top))]
	for _, fn := range top {
		if strings.HasPrefix(fn, "sqlite3Mem") || strings.HasPrefix(fn, "sqlite3Malloc") || strings.HasPrefix(fn, "sqlite3DbMalloc") ||
			strings.HasPrefix(fn, "dbMallocRaw") || strings.Contains(fn, "(hidden)") {
			t.Errorf("top sites %v: want sqlite's callers of its allocator, not %s", top, fn)
		}
	}
	if !slices.Contains(top, "pcache1Alloc") {
		t.Errorf("top sites %v: want pcache1Alloc (the page cache) among them", top)
	}

	// The script as an argument (.read), for valgrind's run.
	prof = filepath.Join(dir, "nolookaside.prof")
	argv := []string{"-lookaside", "0", "0", ":memory:", ".read " + script}
	want = run(t, dir, nil, append([]string{filepath.Join(dir, "sqlite3.plain")}, argv...)...)
	got = run(t, dir, []string{"WEAVE_OUT=" + prof}, append([]string{filepath.Join(dir, "sqlite3.woven")}, argv...)...)
	if !strings.Contains(want.stdout, "DONE|1000") || !sameRun(t, "sqlite3 -lookaside 0 0", want, got) {
		t.FailNow()
	}
	w := readReport(t, prof).Totals
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		m := memcheck.Run(t, dir, nil, append([]string{filepath.Join(dir, "sqlite3.plain")}, argv...)...)
		v := totals{Allocs: int64(m.Allocs), Frees: int64(m.Frees), BytesAllocated: int64(m.Bytes), BytesInUse: int64(m.InUseBytes), BlocksInUse: int64(m.InUseBlocks)}
		if w.Allocs != v.Allocs || w.Frees != v.Frees || w.BlocksInUse != v.BlocksInUse {
			t.Errorf("weave's counts %+v, valgrind's %+v", w, v)
		}
		// sqlite asks malloc for the size rounded up to 8, plus 8 bytes
		// where it keeps the size (none for the C library's blocks).
		if d := v.BytesAllocated - w.BytesAllocated; d <= 0 || d > 15*v.Allocs || v.BytesInUse != w.BytesInUse {
			t.Errorf("valgrind's bytes %d (in use %d), weave's %d (%d): want up to 15 more a block (%.1f), the same in use",
				v.BytesAllocated, v.BytesInUse, w.BytesAllocated, w.BytesInUse, float64(d)/float64(v.Allocs))
		}
	})
}

// zlibAsset is zlib 1.2.11 (its tarball holds a configured zconf.h and a
// stub Makefile, which configure and CMake replace).
const zlibAsset = "assets/github.com/madler/zlib.tar.gz"

// TestProjectZlibConfigure configures zlib with CC="weave cc", checks its
// probes reach the same answers as with gcc, and runs make test (static
// and shared library, 64-bit offsets).
func TestProjectZlibConfigure(t *testing.T) {
	skipProjects(t)
	root := t.TempDir()
	var conf [2]string
	var dirs [2]string
	for i, cc := range []string{"gcc", weaveBin + " cc"} {
		dir := filepath.Join(root, strconv.Itoa(i))
		untarCorpus(t, zlibAsset, dir)
		dirs[i] = filepath.Join(dir, "zlib")
		out := buildStep(t, dirs[i], []string{"CC=" + cc, "WEAVE_CC=gcc"}, "./configure")
		conf[i] = strings.ReplaceAll(out, cc, "CC")
	}
	if conf[0] != conf[1] {
		t.Errorf("configure's answers differ:\ngcc:\n%s\nweave cc:\n%s", conf[0], conf[1])
	}
	for _, f := range []string{"zconf.h", "Makefile"} {
		a, _ := os.ReadFile(filepath.Join(dirs[0], f))
		b, _ := os.ReadFile(filepath.Join(dirs[1], f))
		if strings.ReplaceAll(string(b), weaveBin+" cc", "gcc") != string(a) {
			t.Errorf("configure wrote a different %s", f)
		}
	}
	out := buildStep(t, dirs[1], []string{"WEAVE_CC=gcc"}, "make", "test")
	for _, ok := range []string{"*** zlib test OK ***", "*** zlib shared test OK ***", "*** zlib 64-bit test OK ***"} {
		if !strings.Contains(out, ok) {
			t.Errorf("make test did not print %q:\n%s", ok, out)
		}
	}
	for _, f := range []string{"libz.so", "example", "examplesh"} {
		if !isWoven(t, filepath.Join(dirs[1], f)) {
			t.Errorf("%s is not woven", f)
		}
	}
}

// TestProjectZlibCMake builds zlib with CMake and runs ctest, with weave
// as the compiler (CC=weave-cc) and as the compiler and linker launcher;
// checks the configure checks' answers equal gcc's and that make's
// incremental build follows the dependency files.
func TestProjectZlibCMake(t *testing.T) {
	skipProjects(t, "cmake")
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	os.Mkdir(bin, 0o755)
	if err := os.Symlink(weaveBin, filepath.Join(bin, "weave-cc")); err != nil {
		t.Fatal(err)
	}
	configure := func(name string, env []string, args ...string) (src, build string) {
		t.Helper()
		dir := filepath.Join(root, name)
		untarCorpus(t, zlibAsset, dir)
		src = filepath.Join(dir, "zlib")
		build = filepath.Join(src, "build")
		os.Mkdir(build, 0o755)
		buildStep(t, build, env, append([]string{"cmake"}, append(args, "..")...)...)
		return src, build
	}
	checks := func(build string) string {
		data, err := os.ReadFile(filepath.Join(build, "CMakeCache.txt"))
		if err != nil {
			t.Fatal(err)
		}
		var r []string
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "HAVE_") {
				r = append(r, l)
			}
		}
		return strings.Join(r, "\n")
	}
	_, plain := configure("plain", []string{"CC=gcc"})
	want := checks(plain)
	if want == "" {
		t.Fatal("no HAVE_ results in the plain CMakeCache.txt")
	}

	forms := []struct {
		name string
		env  []string
		args []string
	}{
		{"weave-cc", []string{"CC=" + filepath.Join(bin, "weave-cc"), "WEAVE_CC=gcc"}, nil},
		{"launcher", []string{"CC=gcc"}, []string{"-DCMAKE_C_COMPILER_LAUNCHER=" + weaveBin, "-DCMAKE_C_LINKER_LAUNCHER=" + weaveBin}},
	}
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			if f.name == "launcher" && !cmakeAtLeast(t, 3, 21) {
				testtool.Missing(t, "CMAKE_C_LINKER_LAUNCHER needs CMake 3.21")
			}
			src, build := configure(f.name, f.env, f.args...)
			if got := checks(build); got != want {
				t.Errorf("CMake checks differ:\ngcc:\n%s\nweave:\n%s", want, got)
			}
			buildStep(t, build, f.env, "make", "-j2")
			out := buildStep(t, build, f.env, "ctest", "--output-on-failure")
			if !strings.Contains(out, "100% tests passed") {
				t.Errorf("ctest:\n%s", out)
			}
			for _, p := range []string{"libz.so", "example", "minigzip"} {
				if !isWoven(t, filepath.Join(build, p)) {
					t.Errorf("%s is not woven", p)
				}
			}
			if len(profiles(t, build)) == 0 {
				t.Error("the tests wrote no profile")
			}
			if f.name != "weave-cc" {
				return
			}
			// Incremental builds: nothing to do, then a header changed.
			if out := buildStep(t, build, f.env, "make"); strings.Contains(out, "Building C object") {
				t.Errorf("make rebuilt objects with nothing changed:\n%s", out)
			}
			now := []byte("/* touched */\n")
			h := filepath.Join(src, "inftrees.h")
			data, _ := os.ReadFile(h)
			os.WriteFile(h, append(data, now...), 0o644)
			out = buildStep(t, build, f.env, "make")
			if !strings.Contains(out, "inftrees.c.o") && !strings.Contains(out, "inftrees.o") {
				t.Errorf("make did not rebuild inftrees.c after inftrees.h changed:\n%s", out)
			}
			if strings.Contains(out, "adler32") {
				t.Errorf("make rebuilt adler32.c, which does not include inftrees.h:\n%s", out)
			}
		})
	}
}

// zlibMeson is a meson.build for zlib (the corpus's has none), written as
// a project's own would be: configure checks (headers, a function, a
// type's size and a program's output, both from programs run where meson
// was started; a link), a static and a shared library under zlib's
// version script, programs linked with each, and zlib's tests (example
// and examplesh one at a time: both write foo.gz where they run).
const zlibMeson = `project('zlib', 'c', version: '1.2.11', default_options: ['buildtype=debugoptimized'])
cc = meson.get_compiler('c')
args = ['-D_LARGEFILE64_SOURCE=1']
foreach h : ['unistd.h', 'stdarg.h', 'sys/types.h']
  if cc.has_header(h)
    args += '-DHAVE_' + h.underscorify().to_upper()
  endif
endforeach
if cc.has_function('fseeko', prefix: '#include <stdio.h>')
  args += '-DHAVE_FSEEKO'
endif
message('off_t: @0@ bytes'.format(cc.sizeof('off_t', prefix: '#include <sys/types.h>')))
r = cc.run('#include <stdio.h>\nint main(void) { puts("ran"); return 3; }', name: 'a program runs')
message('ran: @0@ @1@'.format(r.returncode(), r.stdout().strip()))
if not cc.links('int main(void) { return 0; }', name: 'a program')
  error('cannot link')
endif
srcs = files('adler32.c', 'compress.c', 'crc32.c', 'deflate.c', 'gzclose.c', 'gzlib.c',
  'gzread.c', 'gzwrite.c', 'inflate.c', 'infback.c', 'inftrees.c', 'inffast.c',
  'trees.c', 'uncompr.c', 'zutil.c')
z = both_libraries('z', srcs, c_args: args, version: '1.2.11',
  link_args: '-Wl,--version-script,' + meson.current_source_dir() / 'zlib.map')
example = executable('example', 'test/example.c', c_args: args, link_with: z.get_static_lib())
examplesh = executable('examplesh', 'test/example.c', c_args: args, link_with: z.get_shared_lib())
minigzip = executable('minigzip', 'test/minigzip.c', c_args: args, link_with: z.get_shared_lib())
infcover = executable('infcover', 'test/infcover.c', c_args: args, link_with: z.get_static_lib())
test('example', example, workdir: meson.current_build_dir(), is_parallel: false)
test('examplesh', examplesh, workdir: meson.current_build_dir(), is_parallel: false)
test('infcover', infcover)
test('minigzip', find_program('sh'), depends: minigzip,
  args: ['-c', 'echo hello zlib | "$1" | "$1" -d | grep -qx "hello zlib"', 'sh', minigzip.full_path()])
`

// TestProjectZlibMeson builds zlib with meson and ninja, CC="weave cc"
// beside CC=gcc: meson's checks find what they find with gcc, every
// library and program is woven, meson test passes, ninja's incremental
// builds follow weave's dependency files, and the programs' output and
// heap totals equal the plain build's (totals: valgrind's).
func TestProjectZlibMeson(t *testing.T) {
	skipProjects(t, "meson", "ninja")
	root := t.TempDir()
	var builds [2]string
	var setups [2]string
	for i, cc := range []string{"gcc", weaveBin + " cc"} {
		dir := filepath.Join(root, strconv.Itoa(i))
		untarCorpus(t, zlibAsset, dir)
		src := filepath.Join(dir, "zlib")
		if err := os.WriteFile(filepath.Join(src, "meson.build"), []byte(zlibMeson), 0o644); err != nil {
			t.Fatal(err)
		}
		builds[i] = filepath.Join(dir, "build")
		env := []string{"CC=" + cc, "WEAVE_CC=gcc"}
		out := buildStep(t, src, env, "meson", "setup", builds[i])
		var checks []string
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "Has header") || strings.HasPrefix(l, "Checking ") || strings.HasPrefix(l, "Message:") {
				checks = append(checks, l)
			}
		}
		setups[i] = strings.Join(checks, "\n")
		buildStep(t, builds[i], env, "ninja")
		// Meson runs its checks' programs where it was started: they
		// are probes, which write nothing there.
		if p := profiles(t, src); len(p) > 0 {
			t.Errorf("meson setup (CC=%s) left profiles in the source tree: %v", cc, p)
		}
	}
	if !strings.Contains(setups[0], "off_t: 8 bytes") || !strings.Contains(setups[0], "ran: 3 ran") || setups[0] != setups[1] {
		t.Errorf("meson's checks differ:\ngcc:\n%s\nweave cc:\n%s", setups[0], setups[1])
	}
	woven := builds[1]
	for _, p := range []string{"libz.so", "example", "examplesh", "minigzip", "infcover"} {
		if !isWoven(t, filepath.Join(woven, p)) {
			t.Errorf("%s is not woven", p)
		}
	}
	profs := filepath.Join(root, "profiles") + "/"
	out := buildStep(t, woven, []string{"WEAVE_OUT=" + profs}, "meson", "test", "--print-errorlogs")
	if !regexp.MustCompile(`(?m)^Ok:\s+4\s*$`).MatchString(out) {
		t.Errorf("meson test:\n%s", out)
	}
	if m, _ := filepath.Glob(profs + "*.prof"); len(m) < 4 {
		t.Errorf("meson test's runs wrote %d profiles, want 4 or more", len(m))
	}

	// The programs: output, exit code and heap totals as plain.
	for _, p := range []string{"infcover", "example"} {
		plain := run(t, builds[0], nil, "./"+p)
		prof := filepath.Join(root, p+".prof")
		got := run(t, woven, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, "./"+p)
		if got.code != plain.code || got.stdout != plain.stdout || got.stderr != plain.stderr {
			t.Errorf("%s: woven exit %d, stdout %q, stderr %q; plain exit %d, %q, %q", p,
				got.code, got.stdout, got.stderr, plain.code, plain.stdout, plain.stderr)
		}
		checkValgrind(t, reportTotals(t, prof), builds[0], "./"+p)
		if p == "infcover" && !readReport(t, prof).graphFiles()["inflate.c"] {
			t.Error("infcover's profile has no function of inflate.c: libz.a is not woven")
		}
	}

	// Incremental builds through the dependency files weave wrote.
	if out := buildStep(t, woven, nil, "ninja"); !strings.Contains(out, "no work to do") {
		t.Errorf("ninja after a build rebuilt something:\n%s", out)
	}
	// zutil.h changed: the objects that include it are compiled again, as
	// in the plain build.
	later := time.Now().Add(2 * time.Second)
	var recompiled [2]int
	for i, b := range builds {
		if err := os.Chtimes(filepath.Join(filepath.Dir(b), "zlib", "zutil.h"), later, later); err != nil {
			t.Fatal(err)
		}
		recompiled[i] = strings.Count(buildStep(t, b, []string{"WEAVE_CC=gcc"}, "ninja"), "Compiling C object")
	}
	if recompiled[0] == 0 || recompiled[1] != recompiled[0] {
		t.Errorf("ninja after zutil.h changed compiled %d objects woven, %d plain", recompiled[1], recompiled[0])
	}
}
