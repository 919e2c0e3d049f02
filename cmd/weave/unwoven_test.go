package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// TestLeakUnwovenLibrary: a woven program calls libfoo.so, built without
// weave, which loses a list (1 definite block and 3 indirect ones, 240
// bytes each) and keeps a block; main loses one block of its own. The
// library's blocks are hidden allocations charged to main, at a site of
// their own ("(hidden malloc in libfoo.so)"); leak:libfoo.so suppresses
// them (weave check --suppressions, WEAVE_SUPPRESSIONS at exit), and
// nothing else; without it, or with another library's name, they remain.
// The kinds are valgrind's for the same program.
func TestLeakUnwovenLibrary(t *testing.T) {
	dir := t.TempDir()
	testtool.Need(t, "gcc")
	src := func(name string) string { return leaksSource(t, name) }
	lib, exe := filepath.Join(dir, "libfoo.so"), filepath.Join(dir, "unwoven")
	mustRun(t, dir, nil, "gcc", "-shared", "-fPIC", "-O1", "-g", "-o", lib, src("libfoo.c"))
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O1", "-g", "-o", exe, src("unwoven.c"),
		"-L"+dir, "-lfoo", "-Wl,-rpath,"+dir)
	prof := filepath.Join(dir, "u.prof")
	r := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, exe)
	if r.stdout != "done\n" {
		t.Errorf("stdout %q", r.stdout)
	}
	got, ok := memcheck.ParseKinds(r.stderr)
	if !ok {
		t.Fatalf("no LEAK SUMMARY in:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "240 bytes in 1 blocks definitely lost at (hidden malloc in libfoo.so) main") ||
		!strings.Contains(r.stderr, "720 bytes in 3 blocks indirectly lost at (hidden malloc in libfoo.so) main") {
		t.Errorf("the library's leaks are not at its own hidden site:\n%s", r.stderr)
	}
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		if vg := memcheck.RunLeaks(t, dir, nil, exe); vg != got {
			t.Errorf("weave's leak summary %+v, valgrind's %+v", got, vg)
		}
	})

	// The profile: the library's site names it, and holds its blocks.
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	var foo profile.LeakKinds
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc || !n.Site.Hidden || n.Leaks == nil ||
			filepath.Base(p.HiddenObject(n.Site)) != "libfoo.so" {
			continue
		}
		for k, c := range n.Leaks {
			foo[k].Blocks += c.Blocks
			foo[k].Bytes += c.Bytes
		}
	}
	if foo[profile.Definite].Bytes != 240 || foo[profile.Indirect].Bytes != 720 || foo[profile.Reachable].Bytes != 100 {
		t.Errorf("libfoo.so's hidden sites hold %+v, want 240 definite, 720 indirect, 100 reachable bytes", foo)
	}

	supp := func(name, text string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	lib1 := supp("lib.supp", "leak:libfoo.so\n")
	for _, c := range []struct {
		file   string
		code   int
		leaks  string // the count weave check gives
		libfoo bool   // libfoo's leaks listed and not suppressed
	}{
		{"", 1, "3 leaks", true},
		{supp("other.supp", "leak:libbar.so\n"), 1, "3 leaks", true},
		{lib1, 1, "1 leak,", false},
		{supp("chain.supp", "leak:main>libfoo.so\n"), 1, "1 leak,", false},
		{supp("inner.supp", "leak:libfoo.so>main\n"), 1, "3 leaks", true},
		{supp("all.supp", "leak:libfoo.so\nleak:own_leak\n"), 0, "clean", false},
	} {
		args := []string{"check", prof}
		if c.file != "" {
			args = []string{"check", "--suppressions", c.file, prof}
		}
		x := run(t, dir, nil, append([]string{weaveBin}, args...)...)
		listed := strings.Contains(x.stdout, "in libfoo.so) main\n") || strings.Contains(x.stdout, "in libfoo.so) main \n")
		if x.code != c.code || !strings.Contains(x.stdout, c.leaks) || listed != c.libfoo {
			t.Errorf("weave check %s: exit %d (want %d), want %q, libfoo.so's leaks listed unsuppressed %v:\n%s%s",
				filepath.Base(c.file), x.code, c.code, c.leaks, c.libfoo, x.stdout, x.stderr)
		}
	}

	// At exit.
	x := mustRun(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUPPRESSIONS=" + lib1}, exe)
	if !strings.Contains(x.stderr, "suppressed: 960 bytes in 4 blocks") || strings.Contains(x.stderr, "lost at (hidden malloc in libfoo.so)") ||
		!strings.Contains(x.stderr, "500 bytes in 1 blocks definitely lost at") {
		t.Errorf("WEAVE_SUPPRESSIONS=leak:libfoo.so:\n%s", x.stderr)
	}
	x = mustRun(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUPPRESSIONS=" + filepath.Join(dir, "other.supp")}, exe)
	if !strings.Contains(x.stderr, "suppressed: 0 bytes") || !strings.Contains(x.stderr, "lost at (hidden malloc in libfoo.so) main") {
		t.Errorf("WEAVE_SUPPRESSIONS=leak:libbar.so:\n%s", x.stderr)
	}
}
