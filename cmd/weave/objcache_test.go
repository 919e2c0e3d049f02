package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// objCompiles returns the sources whose woven text the logging compiler
// of objCacheDir compiled since the last call (sorted), and forgets them
// (and the -E steps).
func objCompiles(t *testing.T, dir string) []string {
	t.Helper()
	compiled, _ := ccLog(t, dir)
	return compiled
}

// ccLog returns the sources whose woven text the logging compiler of
// objCacheDir compiled, and those it preprocessed (not asked -### for
// its cc1 command), since the last call (sorted), and forgets them.
func ccLog(t *testing.T, dir string) (compiled, preprocessed []string) {
	t.Helper()
	log := filepath.Join(dir, "bin", "log-gcc.log")
	b, _ := os.ReadFile(log)
	os.Remove(log)
	for _, line := range strings.Split(string(b), "\n") {
		words := strings.Fields(line)
		for _, w := range words {
			if strings.HasSuffix(w, ".woven.i") {
				// TMP/N-main.woven.i: main.c
				_, name, _ := strings.Cut(filepath.Base(w), "-")
				compiled = append(compiled, strings.TrimSuffix(name, ".woven.i")+".c")
			}
		}
		if slices.Contains(words, "-E") && !slices.Contains(words, "-###") && strings.HasSuffix(words[len(words)-1], ".c") {
			preprocessed = append(preprocessed, words[len(words)-1])
		}
	}
	slices.Sort(compiled)
	slices.Sort(preprocessed)
	return compiled, preprocessed
}

// objCacheDir writes ccSources' program into a new directory, util.c with
// an unused static function (a warning under -Wall), every file an hour
// old (the direct cache stores them), and bin/log-gcc, a compiler that
// logs its command lines to bin/log-gcc.log and runs gcc (named as gcc:
// weave cc compiles a one-file program in its link command only with
// gcc); bin/ccache is a launcher
// that runs its arguments; one.c is a program of one file.
func objCacheDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	for name, text := range map[string]string{
		"util.h":      ccSources["util.h"],
		"main.c":      ccSources["main.c"],
		"util.c":      ccSources["util.c"] + "static int unused_helper(void) { return 1; }\n",
		"bin/log-gcc": "#!/bin/sh\necho \"$@\" >> \"$0.log\"\nexec gcc \"$@\"\n",
		"bin/ccache":  "#!/bin/sh\nexec \"$@\"\n",
		"one.c":       "#include <stdio.h>\n#include <stdlib.h>\nint main(void) { char *p = malloc(16); printf(\"%d\\n\", p != 0); free(p); return 0; }\n",
	} {
		writeDated(t, filepath.Join(dir, name), text, 0o755, old)
	}
	return dir
}

// TestObjectCache: a woven build's objects come from the object cache when
// the woven text, flags and compiler are the same (a touched source, the
// tree built again elsewhere without -g): the woven text is not compiled,
// the objects are byte for byte a fresh compile's, the warnings are
// repeated, the program prints and profiles the same. Other flags, a
// changed header, -g in another directory, another frame policy are
// misses; a flag that writes a side file (-fstack-usage), a failed
// compile, a launcher in WEAVE_CC and WEAVE_CACHE=off are never served.
// A one-file program's compile and link: objCacheOneStep.
func TestObjectCache(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := objCacheDir(t)
	home := t.TempDir()
	env := []string{"WEAVE_CC=" + filepath.Join(dir, "bin", "log-gcc"), "XDG_CACHE_HOME=" + home}
	build := func(in string, extra []string, flags ...string) string {
		t.Helper()
		argv := append([]string{weaveBin, "cc", "-O2", "-Wall", "-c", "main.c", "util.c"}, flags...)
		r := run(t, in, append(env, extra...), argv...)
		if r.code != 0 {
			t.Fatalf("weave cc %q: exit %d\n%s", flags, r.code, r.stderr)
		}
		return r.stderr
	}
	both := []string{"main.c", "util.c"}
	entries := func() int {
		ents, _ := os.ReadDir(filepath.Join(home, "weave", "object"))
		n := 0
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), ".") && !strings.HasSuffix(e.Name(), ".seen") {
				n++
			}
		}
		return n
	}
	// The first build knows neither unit's summary, the second both (the
	// frame store): from the second on, the woven text stays.
	build(dir, nil)
	warned := build(dir, nil)
	if !strings.Contains(warned, "unused_helper") {
		t.Fatalf("no warning about unused_helper: %q", warned)
	}
	objCompiles(t, dir)
	now := time.Now()
	os.Chtimes(filepath.Join(dir, "main.c"), now, now) // touch
	if got := build(dir, nil); got != warned {
		t.Errorf("diagnostics from the cache:\n%s\nwant, as compiled:\n%s", got, warned)
	}
	if got := objCompiles(t, dir); len(got) != 0 {
		t.Fatalf("a rebuild after a touch compiled %q", got)
	}
	mustRun(t, dir, nil, weaveBin, "cc", "main.o", "util.o", "-o", "cached")
	cached := map[string][]byte{}
	for _, o := range []string{"main.o", "util.o"} {
		cached[o], _ = os.ReadFile(filepath.Join(dir, o))
	}
	build(dir, []string{"WEAVE_CACHE=off"})
	if got := objCompiles(t, dir); !slices.Equal(got, both) {
		t.Errorf("WEAVE_CACHE=off compiled %q", got)
	}
	for o, b := range cached {
		if fresh, _ := os.ReadFile(filepath.Join(dir, o)); !bytes.Equal(b, fresh) {
			t.Errorf("%s from the cache (%d bytes) differs from a fresh compile (%d bytes)", o, len(b), len(fresh))
		}
	}
	mustRun(t, dir, nil, weaveBin, "cc", "main.o", "util.o", "-o", "fresh")
	if a, b := runProfiled(t, dir, "./cached"), runProfiled(t, dir, "./fresh"); !reflect.DeepEqual(a, b) {
		t.Errorf("from the object cache: %+v\ncompiled: %+v", a, b)
	}

	// Misses: other flags, another frame policy (util.c's woven text
	// changes, main.c's does not), a changed header.
	for _, m := range []struct {
		what  string
		extra []string
		flags []string
		want  []string
	}{
		{"-O1", nil, []string{"-O1"}, both},
		{"WEAVE_FRAMES=all", []string{"WEAVE_FRAMES=all"}, nil, []string{"util.c"}},
	} {
		for i, want := range [][]string{m.want, nil} {
			build(dir, m.extra, m.flags...)
			if got := objCompiles(t, dir); !slices.Equal(got, want) {
				t.Errorf("%s, build %d compiled %q, want %q", m.what, i+1, got, want)
			}
		}
	}
	writeDated(t, filepath.Join(dir, "util.h"), ccSources["util.h"]+"extern int util_count;\n", 0o644, time.Now().Add(-time.Hour))
	build(dir, nil)
	if got := objCompiles(t, dir); !slices.Equal(got, both) {
		t.Errorf("after util.h changed, compiled %q, want both", got)
	}

	// -g: the working directory is in the object (DW_AT_comp_dir), unless
	// a prefix map names it; without -g another directory hits. (gcc's -E
	// step under -g writes it into the text too, unless
	// -fno-working-directory: then only the object cache's key has it.)
	other := objCacheDir(t)
	os.WriteFile(filepath.Join(other, "util.h"), []byte(ccSources["util.h"]+"extern int util_count;\n"), 0o644)
	os.Chtimes(filepath.Join(other, "util.h"), now.Add(-time.Hour), now.Add(-time.Hour))
	build(dir, nil, "-g", "-fno-working-directory")
	objCompiles(t, dir)
	build(other, nil, "-g", "-fno-working-directory")
	if got := objCompiles(t, dir); !slices.Equal(got, both) {
		t.Errorf("-g in another directory compiled %q, want both", got)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "main.o")); !bytes.Contains(b, []byte(other)) {
		t.Errorf("main.o compiled with -g in %s does not name it", other)
	}
	build(other, nil)
	if got := objCompiles(t, dir); len(got) != 0 {
		t.Errorf("without -g another directory compiled %q", got)
	}
	build(dir, nil, "-g", "-fno-working-directory", "-fdebug-prefix-map="+dir+"=/src")
	objCompiles(t, dir)
	build(other, nil, "-g", "-fno-working-directory", "-fdebug-prefix-map="+other+"=/src")
	if got := objCompiles(t, dir); len(got) != 0 {
		t.Errorf("-g mapped to the same directory elsewhere compiled %q", got)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "main.o")); bytes.Contains(b, []byte(dir)) || !bytes.Contains(b, []byte("/src")) {
		t.Errorf("main.o compiled with -g mapped to /src names %s, or not /src", dir)
	}

	// Never served: a flag that writes a side file, a launcher,
	// a failed compile.
	n := entries()
	for i := range 2 {
		build(dir, nil, "-fstack-usage")
		if got := objCompiles(t, dir); !slices.Equal(got, both) {
			t.Errorf("-fstack-usage, build %d compiled %q, want both", i+1, got)
		}
		if _, err := os.Stat(filepath.Join(dir, "util.su")); err != nil {
			t.Errorf("-fstack-usage, build %d: %v", i+1, err)
		}
		os.Remove(filepath.Join(dir, "util.su"))
		build(dir, []string{"WEAVE_CC=" + filepath.Join(dir, "bin", "ccache") + " " + filepath.Join(dir, "bin", "log-gcc")})
		if got := objCompiles(t, dir); !slices.Equal(got, both) {
			t.Errorf("through a launcher, build %d compiled %q, want both", i+1, got)
		}
		r := run(t, dir, env, weaveBin, "cc", "-O2", "-Wall", "-Werror=unused-function", "-c", "util.c")
		if r.code == 0 || !strings.Contains(r.stderr, "unused_helper") {
			t.Errorf("-Werror=unused-function: exit %d\n%s", r.code, r.stderr)
		}
		if got := objCompiles(t, dir); !slices.Equal(got, []string{"util.c"}) {
			t.Errorf("a failing compile, build %d compiled %q, want util.c", i+1, got)
		}
	}
	if m := entries(); m != n {
		t.Errorf("object cache entries %d -> %d after builds that must not be cached", n, m)
	}
	objCacheOneStep(t, dir)
}

// objCacheOneStep: a program of one file compiled and linked by one
// command: the first build compiles the woven text in its link command,
// the second compiles it on its own (and caches the object), the third
// only links; the programs run and profile the same. The compiler is
// "gcc" found first in PATH, a copy of bin/log-gcc: the runtime object,
// keyed by the compiler's command and version, is the tests' gcc one (no
// build of it here); the caches' keys have the compiler binary, this one.
func objCacheOneStep(t *testing.T, dir string) {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "path"), 0o755)
	os.WriteFile(filepath.Join(dir, "path", "gcc"), []byte("#!/bin/sh\necho \"$@\" >> \"$0.log\"\nexec "+gcc+" \"$@\"\n"), 0o755)
	env := []string{"WEAVE_CC=gcc", "PATH=" + filepath.Join(dir, "path") + ":" + os.Getenv("PATH")}
	var profiles []jsonReport
	for i, want := range []string{"link", "compile", "none"} {
		exe := fmt.Sprintf("one%d", i)
		mustRun(t, dir, env, weaveBin, "cc", "-O2", "-o", exe, "one.c")
		b, _ := os.ReadFile(filepath.Join(dir, "path", "gcc.log"))
		os.Remove(filepath.Join(dir, "path", "gcc.log"))
		got := "none"
		for _, line := range strings.Split(string(b), "\n") {
			w := strings.Fields(line)
			switch {
			case slices.Contains(w, "-E") || !slices.ContainsFunc(w, func(a string) bool { return strings.HasSuffix(a, ".woven.i") || a == "cpp-output" }):
			case slices.Contains(w, "-c"):
				got = "compile"
			default:
				got = "link"
			}
		}
		if got != want {
			t.Errorf("build %d compiled the woven text: %s, want %s\n%s", i+1, got, want, b)
		}
		prof := filepath.Join(dir, exe+".prof")
		if r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, "./"+exe); r.stdout != "1\n" {
			t.Errorf("%s printed %q", exe, r.stdout)
		}
		profiles = append(profiles, readReport(t, prof))
	}
	for i, p := range profiles[1:] {
		if p.Totals != profiles[0].Totals {
			t.Errorf("build %d's program profiles %+v, the first's %+v", i+2, p.Totals, profiles[0].Totals)
		}
	}
	// A comment changed: the direct cache misses, the link started with
	// the -E step is given up (the same text: its object is cached), and
	// the program is linked from the cached object, as the last one was.
	src, _ := os.ReadFile(filepath.Join(dir, "one.c"))
	writeDated(t, filepath.Join(dir, "one.c"), strings.Replace(string(src), "\n", " /* again */\n", 1), 0o644, time.Now().Add(-time.Hour))
	tmp := privateTmp(t, dir)
	r := mustRun(t, dir, append(env, "TMPDIR="+tmp), weaveBin, "cc", "-O2", "-o", "one3", "one.c")
	b, _ := os.ReadFile(filepath.Join(dir, "path", "gcc.log"))
	if w := strings.Fields(string(b)); !slices.Contains(w, "-E") || slices.Contains(w, "-c") || r.stderr != "" {
		t.Errorf("a changed comment: want the -E step and no compile of the woven text, no message; ran\n%s\nsaid %q", b, r.stderr)
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("a changed comment: left in TMPDIR: %v", left)
	}
	last, _ := os.ReadFile(filepath.Join(dir, "one2"))
	if again, _ := os.ReadFile(filepath.Join(dir, "one3")); !bytes.Equal(last, again) || len(last) == 0 {
		t.Errorf("a changed comment: one3 (%d bytes) is not one2 (%d bytes), both linked from the cached object", len(again), len(last))
	}
}

// TestDirectCacheDeps: a unit compiled with a dependency file (-MD, as
// automake, CMake and Meson ask) skips the -E step when nothing it read
// changed, and the dependency file is written again, as a fresh compile
// writes it; a header that includes a new one is a miss whose file names
// it; DEPENDENCIES_OUTPUT is never served.
func TestDirectCacheDeps(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := objCacheDir(t)
	home := t.TempDir()
	os.Mkdir(filepath.Join(dir, ".deps"), 0o755)
	env := []string{"WEAVE_CC=" + filepath.Join(dir, "bin", "log-gcc"), "XDG_CACHE_HOME=" + home}
	deps := filepath.Join(dir, ".deps", "main.Tpo")
	build := func(extra []string, flags ...string) string {
		t.Helper()
		argv := append([]string{weaveBin, "cc", "-O2", "-MT", "main.o", "-MD", "-MP", "-MF", ".deps/main.Tpo"}, flags...)
		mustRun(t, dir, append(env, extra...), append(argv, "-c", "main.c", "-o", "main.o")...)
		b, err := os.ReadFile(deps)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	fresh := build([]string{"WEAVE_CACHE=off"})
	if !strings.Contains(fresh, "util.h") {
		t.Fatalf("dependency file without util.h:\n%s", fresh)
	}
	build(nil)
	ccLog(t, dir)
	os.Remove(deps)
	now := time.Now()
	os.Chtimes(filepath.Join(dir, "main.c"), now, now) // touch
	if got := build(nil); got != fresh {
		t.Errorf("dependency file from the cache:\n%s\nwant, as gcc writes it:\n%s", got, fresh)
	}
	if compiled, pp := ccLog(t, dir); len(pp) != 0 || len(compiled) != 0 {
		t.Errorf("a touched unit with -MD: preprocessed %q, compiled %q", pp, compiled)
	}

	// util.h includes a new header: preprocessed again, and named.
	old := time.Now().Add(-time.Hour)
	writeDated(t, filepath.Join(dir, "extra.h"), "#define EXTRA 1\n", 0o644, old)
	writeDated(t, filepath.Join(dir, "util.h"), "#include \"extra.h\"\n"+ccSources["util.h"], 0o644, old)
	if got := build(nil); !strings.Contains(got, "extra.h") {
		t.Errorf("after util.h includes extra.h, the dependency file:\n%s", got)
	}
	if _, pp := ccLog(t, dir); !slices.Equal(pp, []string{"main.c"}) {
		t.Errorf("after util.h changed, preprocessed %q", pp)
	}

	// Dependencies by environment: never from the cache.
	for i := range 2 {
		build([]string{"DEPENDENCIES_OUTPUT=env.d"})
		if _, pp := ccLog(t, dir); !slices.Equal(pp, []string{"main.c"}) {
			t.Errorf("DEPENDENCIES_OUTPUT, build %d: preprocessed %q", i+1, pp)
		}
	}
}
