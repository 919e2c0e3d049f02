package main

// `weave cc` in each mode of a compiler driver (compile and link, -c,
// -S, -E, standard input, response files, dependency files, shared
// libraries, fallbacks and errors, launchers...), on small programs; the
// real projects are projects_test.go's.

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestCCModes runs `weave cc` in each mode of a compiler driver.
func TestCCModes(t *testing.T) {
	testtool.Need(t, "gcc")
	env := []string{"WEAVE_CC=gcc"}
	wcc := func(t *testing.T, dir string, args ...string) result {
		t.Helper()
		return mustRun(t, dir, env, append([]string{weaveBin, "cc"}, args...)...)
	}
	// checkRun runs the program and checks its output and its profile
	// (the woven code's allocations: WEAVE_HIDDEN=0 leaves out printf's).
	checkRun := func(t *testing.T, dir, prog string) {
		t.Helper()
		prof := filepath.Join(dir, filepath.Base(prog)+".prof")
		r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0", "WEAVE_HIDDEN=0"}, prog)
		if r.stdout != "woven 4950\n" {
			t.Errorf("%s printed %q", prog, r.stdout)
		}
		if tot := reportTotals(t, prof); tot.Allocs != 2 || tot.Frees != 2 {
			t.Errorf("%s: profile totals %+v, want 2 allocs and 2 frees", prog, tot)
		}
	}

	t.Run("compile-link", func(t *testing.T) {
		dir := ccDir(t)
		wcc(t, dir, "-O2", "-g", "-Wall", "main.c", "util.c", "-o", "prog", "-lm")
		checkRun(t, dir, "./prog")
	})
	t.Run("aux-files", func(t *testing.T) {
		// Profile data, stack usage and split DWARF of a program compiled
		// and linked in one command are named as gcc names them, beside
		// the output, not after weave's temporary objects (which are
		// gone, and took the .dwo with them).
		dir := ccDir(t)
		os.Mkdir(filepath.Join(dir, "bin"), 0o755)
		wcc(t, dir, "-O2", "-fprofile-generate", "-fstack-usage", "-g", "-gsplit-dwarf", "main.c", "util.c", "-o", "bin/prog")
		checkRun(t, dir, "./bin/prog")
		for _, f := range []string{"bin/prog-main.gcda", "bin/prog-util.gcda", "bin/prog-main.su", "bin/prog-util.dwo"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("gcc would have written %s: %v", f, err)
			}
		}
		wcc(t, dir, "-O2", "-fprofile-use", "-Werror=missing-profile", "main.c", "util.c", "-o", "bin/prog")
		checkRun(t, dir, "./bin/prog")
	})
	t.Run("TMPDIR-missing", func(t *testing.T) {
		// gcc falls back to /var/tmp or /tmp; so does weave cc.
		dir := ccDir(t)
		mustRun(t, dir, append(env, "TMPDIR="+filepath.Join(dir, "gone")), weaveBin, "cc", "-O2", "main.c", "util.c", "-o", "prog")
		checkRun(t, dir, "./prog")
	})
	t.Run("static-pthread-Wl", func(t *testing.T) {
		dir := ccDir(t)
		wcc(t, dir, "-O1", "-static", "-pthread", "-Wl,-O1,--as-needed", "main.c", "util.c", "-o", "prog")
		checkRun(t, dir, "./prog")
	})
	t.Run("x-c-and-i", func(t *testing.T) {
		// -x c makes any file C; a .i file is preprocessed C: both are woven.
		dir := ccDir(t)
		os.Rename(filepath.Join(dir, "util.c"), filepath.Join(dir, "util.inc"))
		mustRun(t, dir, nil, "gcc", "-E", "main.c", "-o", "main.i")
		wcc(t, dir, "-c", "-x", "c", "util.inc", "-x", "none", "main.i")
		for _, o := range []string{"util.o", "main.o"} {
			if !isWoven(t, filepath.Join(dir, o)) {
				t.Errorf("%s is not woven", o)
			}
		}
		r := wcc(t, dir, "-S", "-x", "c", "util.inc", "-o", "-")
		if !strings.Contains(r.stdout, "__weave_") {
			t.Error("-S -o - printed no woven assembly")
		}
	})
	t.Run("c-without-o", func(t *testing.T) {
		dir := ccDir(t)
		wcc(t, dir, "-c", "util.c")
		if !isWoven(t, filepath.Join(dir, "util.o")) {
			t.Error("util.o is not woven")
		}
	})
	t.Run("c-with-o", func(t *testing.T) {
		dir := ccDir(t)
		os.Mkdir(filepath.Join(dir, "obj"), 0o755)
		wcc(t, dir, "-c", "util.c", "-o", "obj/u.o")
		if !isWoven(t, filepath.Join(dir, "obj/u.o")) {
			t.Error("obj/u.o is not woven")
		}
		if _, err := os.Stat(filepath.Join(dir, "util.o")); err == nil {
			t.Error("util.o written besides obj/u.o")
		}
	})
	t.Run("many-sources-then-link-only", func(t *testing.T) {
		dir := ccDir(t)
		wcc(t, dir, "-c", "main.c", "util.c")
		for _, o := range []string{"main.o", "util.o"} {
			if !isWoven(t, filepath.Join(dir, o)) {
				t.Errorf("%s is not woven", o)
			}
		}
		wcc(t, dir, "main.o", "util.o", "-o", "prog")
		checkRun(t, dir, "./prog")
	})
	t.Run("S", func(t *testing.T) {
		dir := ccDir(t)
		wcc(t, dir, "-S", "util.c")
		asm, err := os.ReadFile(filepath.Join(dir, "util.s"))
		if err != nil || !bytes.Contains(asm, []byte("__weave_")) {
			t.Errorf("util.s is not woven assembly (%v)", err)
		}
	})
	t.Run("E-passthrough", func(t *testing.T) {
		dir := ccDir(t)
		w := wcc(t, dir, "-E", "-DX=1", "main.c")
		p := mustRun(t, dir, nil, "gcc", "-E", "-DX=1", "main.c")
		if w.stdout != p.stdout || strings.Contains(w.stdout, "__weave") {
			t.Error("weave cc -E differs from gcc -E")
		}
	})
	t.Run("stdin", func(t *testing.T) {
		dir := ccDir(t)
		cmd := exec.Command(weaveBin, "cc", "-x", "c", "-", "util.c", "-o", "prog")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		cmd.Stdin = strings.NewReader(strings.ReplaceAll(ccSources["main.c"], `"util.h"`, `"`+filepath.Join(dir, "util.h")+`"`))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		checkRun(t, dir, "./prog")
	})
	t.Run("responsefile", func(t *testing.T) {
		dir := ccDir(t)
		os.Mkdir(filepath.Join(dir, "out dir"), 0o755)
		rsp := "-O1 -c\n'util.c' -o \"out dir/u.o\"\n"
		os.WriteFile(filepath.Join(dir, "args.rsp"), []byte(rsp), 0o644)
		wcc(t, dir, "@args.rsp")
		if !isWoven(t, filepath.Join(dir, "out dir/u.o")) {
			t.Error("out dir/u.o is not woven")
		}
	})
	t.Run("dependencies", func(t *testing.T) {
		// The dependency files must be those gcc writes: same names,
		// targets, sources and headers.
		for _, args := range [][]string{
			{"-c", "-MD", "main.c"},
			{"-c", "-MMD", "main.c", "-o", "obj/main.o"},
			{"-c", "-MD", "-MF", "deps/x.d", "-MT", "custom", "main.c"},
			{"-c", "-MMD", "-MP", "-MQ", "a$b c", "util.c", "-o", "obj/u.obj"},
			{"-c", "-MMD", "main.c", "util.c"},
			{"-S", "-MMD", "util.c"},
			{"-MMD", "main.c", "util.c", "-o", "prog"},
			{"-MMD", "main.c", "util.c"},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				plain, woven := ccDir(t), ccDir(t)
				for _, d := range []string{plain, woven} {
					os.Mkdir(filepath.Join(d, "obj"), 0o755)
					os.Mkdir(filepath.Join(d, "deps"), 0o755)
				}
				mustRun(t, plain, nil, append([]string{"gcc"}, args...)...)
				wcc(t, woven, args...)
				want, got := depFiles(t, plain), depFiles(t, woven)
				if len(want) == 0 {
					t.Fatal("gcc wrote no dependency file")
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("dependency files differ:\ngcc:   %q\nweave: %q", want, got)
				}
				for _, d := range want {
					if !strings.Contains(d, ".c") {
						t.Errorf("dependency file without the source: %q", d)
					}
				}
			})
		}
	})
	t.Run("shared-library", func(t *testing.T) {
		dir := ccDir(t)
		wcc(t, dir, "-shared", "-fPIC", "-O2", "lib.c", "-o", "libw.so")
		wcc(t, dir, "-O2", "libmain.c", "-L.", "-lw", "-Wl,-rpath,"+dir, "-o", "woven")
		// An unwoven program linked against the woven library works too:
		// the library carries the runtime.
		mustRun(t, dir, nil, "gcc", "-O2", "libmain.c", "-L.", "-lw", "-Wl,-rpath,"+dir, "-o", "plain")
		for _, prog := range []string{"woven", "plain"} {
			pdir := filepath.Join(dir, prog+".profiles")
			os.Mkdir(pdir, 0o755)
			r := mustRun(t, pdir, []string{"WEAVE_SUMMARY=0", "WEAVE_HIDDEN=0"}, filepath.Join(dir, prog))
			if r.stdout != "3283500\n" {
				t.Errorf("%s printed %q", prog, r.stdout)
			}
			// The profile goes where the runtime's copy was linked: the
			// program's directory, or the library's for plain.
			if p := profiles(t, pdir); len(p) != 0 {
				t.Errorf("%s: profiles in the directory it ran in: %v", prog, p)
			}
			profs := profiles(t, dir)
			if len(profs) != 1 {
				t.Fatalf("%s: %d profiles, want 1: %v", prog, len(profs), profs)
			}
			moved := filepath.Join(pdir, filepath.Base(profs[0]))
			if err := os.Rename(profs[0], moved); err != nil {
				t.Fatal(err)
			}
			rep := readReport(t, moved)
			want := int64(10)
			files := rep.graphFiles()
			if prog == "woven" {
				want = 11 // and main's own block
				if !files["libmain.c"] {
					t.Errorf("%s: the call graph lacks the program's functions: %v", prog, files)
				}
			}
			if !files["lib.c"] {
				t.Errorf("%s: the call graph lacks the library's functions: %v", prog, files)
			}
			if rep.Totals.Allocs != want || rep.Totals.Frees != want {
				t.Errorf("%s: totals %+v, want %d allocs and frees", prog, rep.Totals, want)
			}
		}
	})
	t.Run("assembly-passthrough", func(t *testing.T) {
		dir := ccDir(t)
		wcc(t, dir, "-c", "asm.S", "-o", "woven.o")
		mustRun(t, dir, nil, "gcc", "-c", "asm.S", "-o", "plain.o")
		a, _ := os.ReadFile(filepath.Join(dir, "woven.o"))
		b, _ := os.ReadFile(filepath.Join(dir, "plain.o"))
		if !bytes.Equal(a, b) {
			t.Error("asm.S compiled by weave cc differs from gcc's object")
		}
		wcc(t, dir, "asmmain.c", "asm.S", "-o", "prog")
		mustRun(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}, "./prog")
	})
	t.Run("unknown-flag", func(t *testing.T) {
		// -frecord-gcc-switches (which weave does not know) must reach
		// the compile of the woven code: it records the flags in the object.
		dir := ccDir(t)
		wcc(t, dir, "-c", "-frecord-gcc-switches", "--param=max-inline-insns-single=50", "util.c")
		f, err := elf.Open(filepath.Join(dir, "util.o"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		sec := f.Section(".GCC.command.line")
		if sec == nil {
			t.Fatal("no .GCC.command.line section: -frecord-gcc-switches did not reach the compiler")
		}
		data, _ := sec.Data()
		if !bytes.Contains(data, []byte("max-inline-insns-single=50")) {
			t.Errorf("--param did not reach the compiler: %q", data)
		}
	})
	t.Run("fallback", func(t *testing.T) {
		// The one-step link started before the weave (driver/earlylink.go)
		// is given up: nothing of it left in TMPDIR.
		dir := ccDir(t)
		tmp := privateTmp(t, dir)
		r := mustRun(t, dir, append(env, "TMPDIR="+tmp), weaveBin, "cc", "-O2", "f80.c", "-o", "prog")
		m := fellBack.FindAllStringSubmatch(r.stderr, -1)
		if len(m) != 1 || m[0][1] != "f80.c" || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("want one line \"weave: warning: f80.c: not woven: ...\", got:\n%s", r.stderr)
		}
		out := mustRun(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}, "./prog")
		if out.stdout != "3\n" {
			t.Errorf("prog printed %q", out.stdout)
		}
		if left, _ := os.ReadDir(tmp); len(left) > 0 {
			t.Errorf("left in TMPDIR: %v", left)
		}
	})
	t.Run("errors-link", func(t *testing.T) {
		// A program compiled and linked in one command: the compiler's
		// errors (a syntax error, which the weave meets after the early
		// link started; a missing header, in the -E step), its exit
		// status, no program, an older one kept, nothing left in TMPDIR.
		dir := ccDir(t)
		tmp := privateTmp(t, dir)
		if err := os.WriteFile(filepath.Join(dir, "nohdr.c"), []byte("#include <stdio.h>\n#include \"missing.h\"\nint main(void) { return 0; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, src := range []string{"bad.c", "nohdr.c"} {
			if err := os.WriteFile(filepath.Join(dir, "prog"), []byte("old"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := run(t, dir, nil, "gcc", "-O2", src, "-o", "plain")
			w := run(t, dir, append(env, "TMPDIR="+tmp, "WEAVE_CACHE=off"), weaveBin, "cc", "-O2", src, "-o", "prog")
			if w.code != p.code || w.stderr != p.stderr || p.code == 0 {
				t.Errorf("%s: weave cc: exit %d\n%s\ngcc: exit %d\n%s", src, w.code, w.stderr, p.code, p.stderr)
			}
			if !strings.Contains(w.stderr, src+":4:") && !strings.Contains(w.stderr, src+":2:10:") {
				t.Errorf("%s: error not at its line:\n%s", src, w.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "plain")); err == nil {
				t.Errorf("%s: gcc wrote its program", src)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "prog")); string(b) != "old" {
				t.Errorf("%s: the older prog not kept", src)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("%s: left in TMPDIR: %v", src, left)
			}
		}
	})
	t.Run("strict", func(t *testing.T) {
		dir := ccDir(t)
		r := run(t, dir, append(env, "WEAVE_STRICT=1"), weaveBin, "cc", "-c", "f80.c")
		if r.code == 0 {
			t.Fatal("WEAVE_STRICT=1: exit 0 for a file that cannot be woven")
		}
		if !regexp.MustCompile(`^weave: error: f80\.c: not woven: .+\n$`).MatchString(r.stderr) {
			t.Errorf("stderr:\n%s", r.stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "f80.o")); err == nil {
			t.Error("f80.o written")
		}
	})
	t.Run("syntax-error", func(t *testing.T) {
		// The compiler reports the user's error, at the original file:line,
		// as it would without weave; weave adds nothing.
		dir := ccDir(t)
		w := run(t, dir, env, weaveBin, "cc", "-c", "bad.c")
		p := run(t, dir, nil, "gcc", "-c", "bad.c")
		if w.code != p.code || w.stderr != p.stderr {
			t.Errorf("weave cc: exit %d\n%s\ngcc: exit %d\n%s", w.code, w.stderr, p.code, p.stderr)
		}
		if !strings.Contains(w.stderr, "bad.c:4:") {
			t.Errorf("error not at bad.c:4:\n%s", w.stderr)
		}
	})
	t.Run("weave-cc-link", func(t *testing.T) {
		dir := ccDir(t)
		link := filepath.Join(dir, "weave-cc")
		if err := os.Symlink(weaveBin, link); err != nil {
			t.Fatal(err)
		}
		mustRun(t, dir, env, link, "main.c", "util.c", "-o", "prog")
		checkRun(t, dir, "./prog")
	})
	t.Run("launcher", func(t *testing.T) {
		dir := ccDir(t)
		mustRun(t, dir, nil, weaveBin, "gcc", "-c", "main.c", "util.c")
		mustRun(t, dir, nil, weaveBin, "gcc", "main.o", "util.o", "-o", "prog")
		checkRun(t, dir, "./prog")
	})
	t.Run("ccache", func(t *testing.T) {
		testtool.Need(t, "ccache")
		dir := ccDir(t)
		cenv := []string{"CCACHE_DIR=" + filepath.Join(dir, "ccache"), "WEAVE_CC=ccache gcc"}
		for i := 0; i < 2; i++ {
			os.Remove(filepath.Join(dir, "main.o"))
			os.Remove(filepath.Join(dir, "util.o"))
			mustRun(t, dir, cenv, weaveBin, "cc", "-O2", "-g", "-c", "main.c", "util.c")
		}
		// The launcher form composes too: weave ccache gcc.
		os.Remove(filepath.Join(dir, "util.o"))
		mustRun(t, dir, cenv[:1], weaveBin, "ccache", "gcc", "-O2", "-g", "-c", "util.c")
		if !isWoven(t, filepath.Join(dir, "util.o")) {
			t.Error("util.o from the cache is not woven")
		}
		hits, misses := ccacheStats(t, dir, cenv)
		if hits != 3 || misses != 2 {
			t.Errorf("ccache: %d hits and %d misses, want 3 and 2", hits, misses)
		}
		mustRun(t, dir, cenv, weaveBin, "cc", "main.o", "util.o", "-o", "prog")
		checkRun(t, dir, "./prog")
	})
	t.Run("runtime-cache-concurrent", func(t *testing.T) {
		// Many links at once with a cold runtime cache (make -j): each
		// gets a complete runtime, and the cache ends with one object.
		dir := ccDir(t)
		wcc(t, dir, "-c", "main.c", "util.c")
		cache := filepath.Join(dir, "cache")
		cenv := append(env, "XDG_CACHE_HOME="+cache)
		const n = 8
		var wg sync.WaitGroup
		results := make([]result, n)
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = run(t, dir, cenv, weaveBin, "cc", "main.o", "util.o", "-o", fmt.Sprintf("prog%d", i))
			}()
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 {
				t.Fatalf("link %d: exit %d\n%s", i, r.code, r.stderr)
			}
			checkRun(t, dir, fmt.Sprintf("./prog%d", i))
		}
		entries, _ := os.ReadDir(filepath.Join(cache, "weave"))
		var names []string
		for _, e := range entries {
			if !e.IsDir() && e.Name() != "rt.lock" { // the frame stores have a directory; the lock on runtime builds
				names = append(names, e.Name())
			}
		}
		// ld-rt-HASH-DIR.o (the object holding the directory the links
		// were made in), rt-HASH.dynlist (the symbols an executable
		// exports) and rt-HASH.o sort before the object's index entry
		// rtx-KEY.
		if len(names) != 4 || !strings.HasPrefix(names[0], "ld-"+strings.TrimSuffix(names[2], ".o")+"-") || !strings.HasSuffix(names[0], ".o") ||
			names[1] != strings.TrimSuffix(names[2], ".o")+".dynlist" || !strings.HasSuffix(names[2], ".o") ||
			!strings.HasPrefix(names[3], "rtx-") || strings.HasSuffix(names[3], ".tmp") {
			t.Errorf("runtime cache holds %v, want one object, its copy for the directory, its symbol list and its index entry", names)
		}
	})
}
