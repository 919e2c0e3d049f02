package weave

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/pseudostack"
)

// corpusDir returns the directory of modernc.org/ccorpus2's module.
func corpusDir(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "modernc.org/ccorpus2").Output()
	if err != nil {
		t.Fatalf("go list modernc.org/ccorpus2: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// untar extracts the .tar.gz file to dir.
func untar(t *testing.T, file, dir string) {
	t.Helper()
	if out, err := exec.Command("tar", "-C", dir, "-xzf", file).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v: %s", err, out)
	}
}

// A pruneUnit is a C source and its compiler flags.
type pruneUnit struct {
	src   string
	flags []string
}

// pruneUnits returns a sample of real C from the corpus (every unit with
// 1): this repository's test programs, a header's unused function, Lua,
// zlib (some with comments kept, -C), CompCert's tests, some of the
// benchmarks game, one in every of c-torture's execute tests, and
// sqlite3.c.
func pruneUnits(t *testing.T, every int) []pruneUnit {
	corpus := filepath.Join(corpusDir(t), "assets")
	var units []pruneUnit
	add := func(pattern string, step int, flags ...string) {
		files, _ := filepath.Glob(pattern)
		if len(files) == 0 {
			t.Fatalf("no %s", pattern)
		}
		for i := 0; i < len(files); i += step {
			units = append(units, pruneUnit{files[i], flags})
		}
	}
	add("../testdata/*.c", 1)
	// A header of the program's defining a function the unit does not
	// call: woven all the same.
	own := t.TempDir()
	for name, text := range map[string]string{
		"h.h":    "#include <stdlib.h>\nstruct unused { int a; };\nint unused_proto(int);\nstatic inline void *grow(void *p, size_t n) { return realloc(p, n); }\nint used(int);\n",
		"main.c": "#include \"h.h\"\nint used(int x) { return x; }\nint main(void) { return used(0); }\n",
	} {
		if err := os.WriteFile(filepath.Join(own, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	add(filepath.Join(own, "main.c"), 1)
	lua := t.TempDir()
	untar(t, filepath.Join(corpus, "www.lua.org/ftp/lua-5.4.4.tar.gz"), lua)
	add(filepath.Join(lua, "lua-5.4.4/src/*.c"), 1, "-std=gnu99", "-O2", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX")
	add(filepath.Join(corpus, "github.com/madler/zlib/*.c"), 1, "-O2", "-D_LARGEFILE64_SOURCE=1")
	add(filepath.Join(corpus, "github.com/madler/zlib/*.c"), 4, "-O2", "-C") // comments kept
	add(filepath.Join(corpus, "CompCert-3.6/test/c/*.c"), 1, "-O1")
	add(filepath.Join(corpus, "benchmarksgame-team.pages.debian.net/*.c"), every/4+1, "-O2", "-D_GNU_SOURCE", "-pthread", "-fopenmp", "-I", filepath.Join(corpus, "benchmarksgame-team.pages.debian.net/Include"))
	add(filepath.Join(corpus, "gcc-9.1.0/gcc/testsuite/gcc.c-torture/execute/*.c"), every, "-O1", "-w", "-fgnu89-inline", "-fwrapv")
	if !testing.Short() {
		add(filepath.Join(corpus, "sqlite-amalgamation-3380100/sqlite3.c"), 1, "-O2")
	}
	return units
}

// TestPruneSameWeave checks that pruning the headers' declarations a unit
// does not use (parse's prune) changes nothing the weave makes:
// over a sample of real C (pruneUnits), the woven text, functions, sites,
// frame summary and extern answers are the same whether cc/v4 parsed the
// text pruned (parse.Parse) or whole (parse.ParseAll); and that pruning
// did blank something in most of them. WEAVE_TEST_PRUNE_ALL=1 checks
// every unit of the sample's sets.
func TestPruneSameWeave(t *testing.T) {
	every := 40
	if os.Getenv("WEAVE_TEST_PRUNE_ALL") != "" {
		every = 1
	}
	hdr := pseudostack.Header() // weave.h and the guard variants generated from it
	var checked, pruned int
	for _, u := range pruneUnits(t, every) {
		flags := append([]string{"-I", filepath.Dir(u.src)}, u.flags...)
		var stderr bytes.Buffer
		text, err := parse.Preprocess([]string{"gcc"}, flags, u.src, &stderr)
		if err != nil {
			continue // needs a library that is not installed
		}
		text = bytes.Clone(text) // not the speculative parse's text: Parse prunes
		d := parse.NewDialect([]string{"gcc"}, flags)
		whole, werr := parse.ParseAll(u.src+".i", text, d)
		part, perr := parse.Parse(u.src+".i", text, d)
		if werr != nil || perr != nil {
			if werr == nil || perr == nil || werr.Error() != perr.Error() {
				t.Errorf("%s: parsed whole: %v; pruned: %v", u.src, werr, perr)
			}
			continue
		}
		checked++
		if part.Pruned {
			pruned++
		}
		opts := Options{Frames: FramesAuto, Prologue: hdr}
		want, werr := Weave(whole, opts)
		got, gerr := Weave(part, opts)
		if werr != nil || gerr != nil {
			if werr == nil || gerr == nil || werr.Error() != gerr.Error() {
				t.Errorf("%s: woven whole: %v; pruned: %v", u.src, werr, gerr)
			}
			continue
		}
		if !bytes.Equal(got.Text, want.Text) {
			t.Errorf("%s: the woven text differs when pruned", u.src)
			continue
		}
		got.Text, want.Text = nil, nil
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the weave's result differs when pruned:\n%+v\nwhole:\n%+v", u.src, got, want)
		}
	}
	t.Logf("%d units woven the same, %d of them pruned", checked, pruned)
	if checked < 50 || pruned < 40 {
		t.Errorf("%d units woven, %d of them pruned: the sample is too small", checked, pruned)
	}
}

// TestPruneKeepsDeclaredAllocators checks that a declared allocator's
// prototype in a system header is checked where the unit does not call it
// (its name is given to parse.ParseWithin to keep): atoi declared with a
// size argument it does not have is the same error pruned and whole.
func TestPruneKeepsDeclaredAllocators(t *testing.T) {
	src := filepath.Join(t.TempDir(), "a.c")
	if err := os.WriteFile(src, []byte("#include <stdlib.h>\nint main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	text, err := parse.Preprocess([]string{"gcc"}, nil, src, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	text = bytes.Clone(text)
	d := parse.NewDialect([]string{"gcc"}, nil)
	opts := Options{Allocators: []Allocator{{Name: "atoi", Kind: AllocMalloc, Size: 2}}}
	var errs [2]error
	for i, parseIt := range []func() (*parse.Unit, error){
		func() (*parse.Unit, error) { return parse.ParseAll(src+".i", text, d) },
		func() (*parse.Unit, error) { return parse.ParseWithin(src+".i", text, d, 0, "atoi") },
	} {
		u, err := parseIt()
		if err != nil {
			t.Fatal(err)
		}
		_, errs[i] = Weave(u, opts)
	}
	var ce *ConfigError
	if !errors.As(errs[0], &ce) || !strings.Contains(ce.Msg, "size=2, but atoi has 1 parameters") {
		t.Fatalf("whole: %v, want atoi's prototype error", errs[0])
	}
	if errs[1] == nil || errs[1].Error() != errs[0].Error() {
		t.Errorf("pruned: %v, whole: %v", errs[1], errs[0])
	}
}

// TestCompilerPruneSameObject checks that the text weave cc gives gcc
// (Options.ForCompiler: the system headers' declarations nothing uses
// blanked) compiles to the same object, byte for byte, as the whole
// woven text, over a sample of real C (pruneUnits) at the unit's flags
// and at -O0 (where gcc keeps unused static constants), and that it did
// blank something in most units. WEAVE_TEST_PRUNE_ALL=1 checks every
// unit of the sample's sets.
func TestCompilerPruneSameObject(t *testing.T) {
	every := 100
	if os.Getenv("WEAVE_TEST_PRUNE_ALL") != "" {
		every = 1
	}
	hdr := pseudostack.Header()
	dir := t.TempDir()
	var checked, blanked int
	for n, u := range pruneUnits(t, every) {
		if strings.HasSuffix(u.src, "sqlite3.c") || every > 1 && n%3 != 0 {
			continue // a third of the sample: gcc compiles each text twice
		}
		flags := append([]string{"-I", filepath.Dir(u.src)}, u.flags...)
		var stderr bytes.Buffer
		text, err := parse.Preprocess([]string{"gcc"}, flags, u.src, &stderr)
		if err != nil {
			continue // needs a library that is not installed
		}
		text = bytes.Clone(text)
		pu, err := parse.Parse(u.src+".i", text, parse.NewDialect([]string{"gcc"}, flags))
		if err != nil {
			continue
		}
		whole, werr := Weave(pu, Options{Frames: FramesAuto, Prologue: hdr})
		part, perr := Weave(pu, Options{Frames: FramesAuto, Prologue: hdr, ForCompiler: true})
		if werr != nil || perr != nil {
			t.Errorf("%s: woven whole: %v; for the compiler: %v", u.src, werr, perr)
			continue
		}
		if bytes.Equal(whole.Text, part.Text) {
			checked++
			continue
		}
		if len(whole.Text) != len(part.Text) {
			t.Errorf("%s: the text for the compiler has %d bytes, the whole %d", u.src, len(part.Text), len(whole.Text))
			continue
		}
		blanked++
		var cflags []string
		for _, f := range u.flags {
			if !strings.HasPrefix(f, "-D") && f != "-C" {
				cflags = append(cflags, f)
			}
		}
		for _, opt := range [][]string{cflags, append(cflags, "-O0")} {
			var objs [2][]byte
			for i, woven := range [][]byte{whole.Text, part.Text} {
				// The same name: the object's file symbol is its.
				in := filepath.Join(dir, fmt.Sprint(i), "u.i")
				obj := filepath.Join(dir, fmt.Sprint(i), "u.o")
				if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(in, woven, 0o644); err != nil {
					t.Fatal(err)
				}
				args := append(append([]string{"-c"}, opt...), in, "-o", obj)
				if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
					if i == 0 {
						break // needs other flags (fannkuchredux-4.c: -mssse3)
					}
					t.Fatalf("%s: gcc %s: %v\n%s", u.src, strings.Join(args, " "), err, out)
				}
				if objs[i], err = os.ReadFile(obj); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(objs[0], objs[1]) {
				t.Errorf("%s (%s): the object differs when the system headers' unused declarations are blanked", u.src, strings.Join(opt, " "))
			}
		}
		checked++
	}
	t.Logf("%d units compiled the same, %d of them blanked", checked, blanked)
	if checked < 20 || blanked < 15 {
		t.Errorf("%d units compiled, %d of them blanked: the sample is too small", checked, blanked)
	}
}
