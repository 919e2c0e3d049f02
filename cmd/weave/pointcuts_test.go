package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// declaredFlags declare testdata/pointcuts' wrappers (gmalloc and
// gmalloc_n are recognised by their attributes).
var declaredFlags = []string{"--alloc", "xmalloc:size=1", "--calloc=xcalloc:count=1,size=2",
	"--realloc", "xrealloc:ptr=1,size=2", "--free", "xfree:ptr=1", "--realloc", "l_alloc:ptr=2,size=4"}

// siteAllocs sums a profile's allocations by the function its leaves are
// charged to (the site's function, else the leaf's caller), and returns
// the types of the sites of each function.
func siteAllocs(p *profile.Profile) (allocs map[string]uint64, types map[string][]string) {
	allocs, types = map[string]uint64{}, map[string][]string{}
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc {
			continue
		}
		name := "?"
		if n.Site.Func != nil {
			name = n.Site.Func.Name
		} else if n.Parent != nil && n.Parent.Func != nil {
			name = n.Parent.Func.Name
		}
		if n.Site.Hidden {
			name += " (hidden)"
		}
		allocs[name] += n.Heap.TotalAllocs()
		if n.Site.Type != "" {
			types[name] = append(types[name], n.Site.Type)
		}
	}
	return allocs, types
}

// TestDeclaredAllocators builds testdata/pointcuts with its wrappers
// declared (woven with the program, and in an object compiled without
// weave): every allocation is charged to the wrappers' callers, with the
// types of their sizeof arguments, l_alloc's calls through a pointer to
// the caller of the pointer, the attribute-declared gmalloc is recognised
// with no flag, nothing is counted twice (totals equal valgrind's), and
// the output is the plain build's.
func TestDeclaredAllocators(t *testing.T) {
	testtool.Need(t, "gcc")
	for _, lib := range []string{"woven", "unwoven"} {
		t.Run(lib, func(t *testing.T) {
			dir := t.TempDir()
			copyPointcuts(t, dir)
			mustRun(t, dir, nil, "gcc", "-O1", "xalloc.c", "prog.c", "-o", "plain")
			srcs := []string{"xalloc.c", "prog.c"}
			if lib == "unwoven" {
				mustRun(t, dir, nil, "gcc", "-O1", "-c", "xalloc.c")
				srcs = []string{"xalloc.o", "prog.c"}
			}
			argv := append(append([]string{weaveBin, "cc"}, declaredFlags...), "-O1", "-Wall", "-Wextra", "-Werror")
			mustRun(t, dir, []string{"WEAVE_CC=gcc"}, append(append(argv, srcs...), "-o", "woven")...)
			want := run(t, dir, nil, filepath.Join(dir, "plain"))
			prof := filepath.Join(dir, "p.prof")
			got := run(t, dir, []string{"WEAVE_OUT=" + prof}, filepath.Join(dir, "woven"))
			if !sameRun(t, "pointcuts", want, got) {
				return
			}
			p, err := profile.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			allocs, types := siteAllocs(p)
			wantAllocs := map[string]uint64{"push": 100, "grow": 20, "vec": 8, "main": 3}
			if lib == "unwoven" {
				// l_alloc, unwoven, called through a pointer: its
				// realloc is a hidden allocation of its caller.
				delete(wantAllocs, "vec")
				wantAllocs["vec (hidden)"] = 8
			}
			for fn, n := range wantAllocs {
				if allocs[fn] != n {
					t.Errorf("%s: %d allocations, want %d (all: %v)", fn, allocs[fn], n, allocs)
				}
			}
			for fn := range allocs {
				if _, ok := wantAllocs[fn]; !ok && fn != "main (hidden)" { // stdout's buffer
					t.Errorf("allocations charged to %s: %v", fn, allocs)
				}
			}
			if strings.Join(types["push"], ",") != "struct node" || !strings.Contains(strings.Join(types["main"], ","), "double") {
				t.Errorf("site types %v, want push's struct node, main's double (gmalloc, by its attributes)", types)
			}
			checkValgrind(t, reportTotals(t, prof), dir, filepath.Join(dir, "plain"))
		})
	}
}

// TestDeclaredAllocatorErrors: a declared allocator whose argument numbers
// do not fit its prototype stops the build with the prototype's position;
// a malformed declaration is a usage error.
func TestDeclaredAllocatorErrors(t *testing.T) {
	testtool.Need(t, "gcc")
	src, _ := filepath.Abs("../../testdata/pointcuts")
	for _, tc := range []struct{ flag, want string }{
		{"--realloc=xrealloc:ptr=3,size=2", "xalloc.h:6:7: --realloc xrealloc:ptr=3,size=2: ptr=3, but xrealloc has 2 parameters"},
		{"--realloc=xrealloc:ptr=2,size=1", "xalloc.h:6:7: --realloc xrealloc:ptr=2,size=1: ptr=2: parameter 2 of xrealloc is not a pointer"},
		{"--free=xmalloc:ptr=1", "xalloc.h:4:7: --free xmalloc:ptr=1: ptr=1: parameter 1 of xmalloc is not a pointer"},
		{"--alloc=xmalloc:sz=1", `--alloc xmalloc:sz=1: unknown or repeated argument key "sz" (want size)`},
		{"--calloc=xcalloc:size=2", "--calloc xcalloc:size=2: want NAME:count=N,size=N"},
		{"--alloc=xmalloc:size=0", "--alloc xmalloc:size=0: size=0: an argument number counts from 1"},
	} {
		dir := t.TempDir()
		r := run(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", tc.flag, "-c", filepath.Join(src, "prog.c"), "-o", "prog.o")
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", tc.flag, r.code, r.stderr, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "prog.o")); err == nil {
			t.Errorf("%s: prog.o was written", tc.flag)
		}
	}
}

// TestExcludePointcut builds testdata/pointcuts with push and the whole
// of xalloc.c excluded: they have no frames, their allocations are charged
// to their framed callers, the totals are valgrind's, and the profile and
// the report's header carry the pointcut.
func TestExcludePointcut(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	copyPointcuts(t, dir)
	mustRun(t, dir, nil, "gcc", "-O1", "xalloc.c", "prog.c", "-o", "plain")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "--exclude", "push", "--exclude-file=**/xalloc.c",
		"-O1", "xalloc.c", "prog.c", "-o", "woven")
	prof := filepath.Join(dir, "p.prof")
	if !sameRun(t, "exclude", run(t, dir, nil, filepath.Join(dir, "plain")),
		run(t, dir, []string{"WEAVE_OUT=" + prof}, filepath.Join(dir, "woven"))) {
		return
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes {
		if n.Kind == profile.KindFunc && (n.Func.Name == "push" || n.Func.File == "xalloc.c") {
			t.Errorf("excluded function %s has a frame", n.Func.Name)
		}
	}
	allocs, _ := siteAllocs(p)
	want := map[string]uint64{"main": 100 + 1 + 2, "grow": 20, "vec": 8, "main (hidden)": 1}
	if len(allocs) != len(want) {
		t.Errorf("allocations by function %v, want %v", allocs, want)
	}
	for fn, n := range want {
		if allocs[fn] != n {
			t.Errorf("allocations by function %v, want %v", allocs, want)
			break
		}
	}
	if v, _ := p.MetaValue("pointcut"); v != "--exclude 'push' --exclude-file '**/xalloc.c'" {
		t.Errorf("M pointcut %q", v)
	}
	r := mustRun(t, dir, nil, weaveBin, "report", prof)
	if !strings.Contains(r.stdout, "\npointcut: --exclude 'push' --exclude-file '**/xalloc.c'\n") {
		t.Errorf("report header does not print the pointcut:\n%s", r.stdout[:min(len(r.stdout), 600)])
	}
	checkValgrind(t, reportTotals(t, prof), dir, filepath.Join(dir, "plain"))
}

// copyPointcuts copies testdata/pointcuts' program into dir.
func copyPointcuts(t *testing.T, dir string) {
	t.Helper()
	for _, f := range []string{"xalloc.c", "xalloc.h", "prog.c"} {
		data, err := os.ReadFile(filepath.Join("../../testdata/pointcuts", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestPointcutConfig: the pointcut from a weave.conf found in a parent
// directory and from WEAVE_FLAGS gives the flags' profile; a bad line of
// the file stops the build at its file:line:col, as does an unknown option
// in WEAVE_FLAGS and a missing WEAVE_CONFIG.
func TestPointcutConfig(t *testing.T) {
	testtool.Need(t, "gcc")
	root := t.TempDir()
	dir := filepath.Join(root, "src")
	os.Mkdir(dir, 0o755)
	copyPointcuts(t, dir)
	conf := "# testdata/pointcuts' wrappers\n\nalloc xmalloc:size=1\n--calloc=xcalloc:count=1,size=2\n" +
		"  realloc xrealloc:ptr=1,size=2\nfree 'xfree:ptr=1'\nrealloc l_alloc:ptr=2,size=4\n"
	os.WriteFile(filepath.Join(root, "weave.conf"), []byte(conf), 0o644)
	env := []string{"WEAVE_CC=gcc", "WEAVE_FLAGS=--exclude grow"}
	mustRun(t, dir, env, weaveBin, "cc", "-O1", "xalloc.c", "prog.c", "-o", "woven")
	prof := filepath.Join(dir, "p.prof")
	mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, filepath.Join(dir, "woven"))
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	allocs, types := siteAllocs(p)
	if allocs["push"] != 100 || allocs["main"] != 3+20 || allocs["vec"] != 8 || strings.Join(types["push"], ",") != "struct node" {
		t.Errorf("allocations by function %v, types %v: want push 100 (struct node), main 23 (grow excluded), vec 8", allocs, types)
	}
	pc, _ := p.MetaValue("pointcut")
	if !strings.HasPrefix(pc, "--alloc xmalloc:size=1 --calloc xcalloc:count=1,size=2") || !strings.HasSuffix(pc, "--exclude 'grow'") {
		t.Errorf("M pointcut %q", pc)
	}

	for _, tc := range []struct {
		conf string
		env  []string
		want string
	}{
		{"alloc xmalloc:size=1\n\n  alocate x:size=1\n", nil, "weave.conf:3:3: unknown option \"alocate\""},
		{"# c\nrealloc  xrealloc:ptr=1,sz=2\n", nil, "weave.conf:2:10: --realloc xrealloc:ptr=1,sz=2: unknown or repeated argument key \"sz\""},
		{"exclude\n", nil, "weave.conf:1:1: exclude takes one value"},
		{"realloc xrealloc:ptr=2,size=1\n", nil, "xalloc.h:6:7: --realloc xrealloc:ptr=2,size=1: ptr=2: parameter 2 of xrealloc is not a pointer"},
		{"", []string{"WEAVE_FLAGS=--exclude x -O2"}, `WEAVE_FLAGS: unknown option "-O2"`},
		{"", []string{"WEAVE_CONFIG=" + filepath.Join(root, "none.conf")}, "WEAVE_CONFIG: stat "},
	} {
		os.WriteFile(filepath.Join(root, "weave.conf"), []byte(tc.conf), 0o644)
		os.Remove(filepath.Join(dir, "prog.o"))
		r := run(t, dir, append([]string{"WEAVE_CC=gcc"}, tc.env...), weaveBin, "cc", "-c", "prog.c")
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q %v: exit %d, stderr %q, want %q", tc.conf, tc.env, r.code, r.stderr, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "prog.o")); err == nil {
			t.Errorf("%q %v: prog.o was written", tc.conf, tc.env)
		}
	}
}

// TestReportGroup: weave report --group aggregates the direct allocation
// table by file, directory and module (testdata/pointcuts with its
// wrappers undeclared: lib/xalloc.c allocates all but gmalloc's blocks,
// which main's calls allocate), the totals kept;
// a bad module file is an error at its line.
func TestReportGroup(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	copyPointcuts(t, dir)
	os.Mkdir(filepath.Join(dir, "lib"), 0o755)
	os.Rename(filepath.Join(dir, "xalloc.c"), filepath.Join(dir, "lib", "xalloc.c"))
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-I.", "-O1", "lib/xalloc.c", "prog.c", "-o", "woven")
	prof := filepath.Join(dir, "p.prof")
	mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, filepath.Join(dir, "woven"))
	os.WriteFile(filepath.Join(dir, "mods"), []byte("# modules\nalloc: lib/**\n\nmain: prog.c\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bad"), []byte("alloc: lib/**\n  main prog.c\n"), 0o644)
	for _, tc := range []struct {
		group string
		want  []string // the direct table's rows, hidden ones marked
	}{
		{"file", []string{"lib/xalloc.c", "prog.c", "prog.c (hidden)"}},
		{"dir", []string{".", ". (hidden)", "lib"}},
		{"dir:1", []string{".", ". (hidden)", "lib"}},
		{"module:mods", []string{"alloc", "main", "main (hidden)"}},
	} {
		r := mustRun(t, dir, nil, weaveBin, "report", "--format", "json", "--group", tc.group, prof)
		var rep struct {
			Direct struct {
				Functions []struct {
					Func   struct{ Name string }
					Hidden bool
					Calls  int64
				}
			}
		}
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		var rows []string
		var calls int64
		for _, f := range rep.Direct.Functions {
			name := f.Func.Name
			if f.Hidden {
				name += " (hidden)"
			}
			rows = append(rows, name)
			calls += f.Calls
		}
		if slices.Sort(rows); !slices.Equal(rows, tc.want) || calls != 132 {
			t.Errorf("--group %s: rows %v (%d calls), want %v (132)", tc.group, rows, calls, tc.want)
		}
	}
	r := run(t, dir, nil, weaveBin, "report", "--group", "module:bad", prof)
	if r.code == 0 || !strings.Contains(r.stderr, "bad:2:3: want \"module-name: glob...\"") {
		t.Errorf("bad module file: exit %d, %s", r.code, r.stderr)
	}
}

// TestPointcutUnmatched: a pattern that matches nothing is a warning:
// in the unit `weave -o` weaves (every pattern), in a program `weave cc`
// compiles and links whole (its command line's patterns, not WEAVE_FLAGS'),
// never in a -c step; a wrong argument index is an error under weave -o
// too, at the prototype.
func TestPointcutUnmatched(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	copyPointcuts(t, dir)
	env := []string{"WEAVE_CC=gcc"}
	warn := func(p, where string) string { return "weave: warning: " + p + " matches nothing in " + where }
	r := run(t, dir, env, weaveBin, "-o", "prog.woven.c", "prog.c", "--exclude", "push", "--exclude", "nosuch*",
		"--include", "p*", "--alloc", "xmalloc:size=1", "--alloc", "xmaloc:size=1", "--exclude-file", "third/**",
		"--exclude-file", "**/prog.c", "--free", "l_alloc:ptr=2")
	want := []string{"prog.c: --alloc xmaloc:size=1", "prog.c: --exclude 'nosuch*'", "prog.c: --exclude-file 'third/**'"}
	for _, p := range want {
		if !strings.Contains(r.stderr, warn(p, "this translation unit")) {
			t.Errorf("weave -o: no warning for %s: %q", p, r.stderr)
		}
	}
	if r.code != 0 || strings.Count(r.stderr, "warning") != len(want) {
		t.Errorf("weave -o: exit %d, stderr %q: want %d warnings", r.code, r.stderr, len(want))
	}
	if _, err := os.Stat(filepath.Join(dir, "prog.woven.c")); err != nil {
		t.Error(err)
	}

	own := []string{"--exclude", "check", "--exclude", "nosuch", "--alloc", "xmaloc:size=1", "--alloc", "xmalloc:size=1"}
	r = run(t, dir, append(env, "WEAVE_FLAGS=--exclude alsonot"), append(append([]string{weaveBin, "cc"}, own...), "xalloc.c", "prog.c", "-o", "woven")...)
	want = []string{"--exclude 'nosuch'", "--alloc xmaloc:size=1"}
	for _, p := range want {
		if !strings.Contains(r.stderr, warn(p, "the program's sources")) {
			t.Errorf("weave cc: no warning for %s: %q", p, r.stderr)
		}
	}
	if r.code != 0 || strings.Count(r.stderr, "warning") != len(want) {
		t.Errorf("weave cc: exit %d, stderr %q: want %d warnings", r.code, r.stderr, len(want))
	}
	for _, argv := range [][]string{{"-c", "prog.c"}, {"xalloc.c", "prog.c", "-o", "conftest"}} {
		r = run(t, dir, env, append(append([]string{weaveBin, "cc"}, own...), argv...)...)
		if r.code != 0 || r.stderr != "" {
			t.Errorf("weave cc %v: exit %d, stderr %q: want no warning", argv, r.code, r.stderr)
		}
	}

	r = run(t, dir, env, weaveBin, "-o", "bad.c", "prog.c", "--realloc", "xrealloc:ptr=1,size=3")
	if msg := "xalloc.h:6:7: --realloc xrealloc:ptr=1,size=3: size=3, but xrealloc has 2 parameters"; r.code == 0 || !strings.Contains(r.stderr, msg) {
		t.Errorf("weave -o, wrong index: exit %d, stderr %q, want %q", r.code, r.stderr, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.c")); err == nil {
		t.Error("bad.c was written")
	}
}
