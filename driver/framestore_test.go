package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/weave"
)

// TestFrameStore: summaries saved by units come back resolved, the same
// unit's summary is replaced, foreign or damaged files are ignored, and
// no temporary file is left.
func TestFrameStore(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	s := openFrameStore()
	if s == nil {
		t.Fatal("no frame store")
	}
	s.save("a.c", "a.o", weave.Summary{"a_leaf": {}, "a_calls": {Calls: []string{"b_fn"}}, "a_alloc": {Allocs: true}})
	s.save("b.c", "b.o", weave.Summary{"b_fn": {Calls: []string{"a_alloc"}}})
	got := s.load()
	want := map[string]bool{"a_leaf": false, "a_calls": true, "a_alloc": true, "b_fn": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("load = %v, want %v", got, want)
	}
	// b.c rebuilt: b_fn no longer calls a_alloc.
	s.save("b.c", "b.o", weave.Summary{"b_fn": {Calls: []string{"a_leaf"}}})
	if err := os.WriteFile(filepath.Join(s.dir, "junk"), []byte("not a summary\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "open"), []byte(frameStoreMagic+"\nx a\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(s.dir, "open"), 0o666) // writable by others: not trusted
	got = s.load()
	want = map[string]bool{"a_leaf": false, "a_calls": false, "a_alloc": true, "b_fn": false}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after b.c's rebuild: load = %v, want %v", got, want)
	}
	ents, _ := os.ReadDir(s.dir)
	if len(ents) != 4 { // a, b, junk, open
		t.Errorf("%d files in the store, want 4", len(ents))
	}
	// An old store of another directory is pruned, ours is kept.
	old := filepath.Join(filepath.Dir(s.dir), "0123456789abcdef")
	if err := os.Mkdir(old, 0o700); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-2 * frameStoreAge)
	os.Chtimes(old, long, long)
	os.Chtimes(s.dir, long, long)
	pruneFrameStores(filepath.Dir(s.dir), s.dir)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("old store not pruned: %v", err)
	}
	if _, err := os.Stat(s.dir); err != nil {
		t.Errorf("current store pruned: %v", err)
	}
	// Past frameStoreMax stores, the least recently written go.
	top := filepath.Dir(s.dir)
	for i := range frameStoreMax + 10 {
		d := filepath.Join(top, fmt.Sprintf("%016x", i))
		os.Mkdir(d, 0o700)
		at := time.Now().Add(-time.Duration(i) * time.Minute)
		os.Chtimes(d, at, at)
	}
	pruneFrameStores(top, s.dir)
	ents, _ = os.ReadDir(top)
	if len(ents) != frameStoreMax {
		t.Errorf("%d stores after pruning, want %d", len(ents), frameStoreMax)
	}
	for _, i := range []int{0, frameStoreMax - 2} {
		if _, err := os.Stat(filepath.Join(top, fmt.Sprintf("%016x", i))); err != nil {
			t.Errorf("recent store %d pruned", i)
		}
	}
	if _, err := os.Stat(filepath.Join(top, fmt.Sprintf("%016x", frameStoreMax-1))); err == nil {
		t.Errorf("store %d, the oldest beyond the cap, kept", frameStoreMax-1)
	}
	if _, err := os.Stat(s.dir); err != nil {
		t.Errorf("current store pruned: %v", err)
	}
}

// TestFrameStoreMerge: a function two summaries describe allocates if one
// of them says so and calls what either calls; a summary damaged after
// valid lines, and one reached through a symbolic link, count for nothing.
func TestFrameStoreMerge(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	t.Chdir(t.TempDir())
	s := openFrameStore()
	if s == nil {
		t.Fatal("no frame store")
	}
	s.save("p1.c", "p1", weave.Summary{"util": {Calls: []string{"leaf"}}, "leaf": {}})
	s.save("p2.c", "p2", weave.Summary{"util": {Calls: []string{"grow"}}, "grow": {Allocs: true}})
	s.save("p3.c", "p3", weave.Summary{"quiet": {Calls: []string{"leaf"}}})
	want := map[string]bool{"util": true, "leaf": false, "grow": true, "quiet": false}
	if got := s.load(); !reflect.DeepEqual(got, want) {
		t.Errorf("load = %v, want %v", got, want)
	}
	damaged := frameStoreMagic + "\nleaf a\nquiet a\nnot a line\n"
	if err := os.WriteFile(filepath.Join(s.dir, "damaged"), []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "planted")
	if err := os.WriteFile(outside, []byte(frameStoreMagic+"\nleaf a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(s.dir, "link")); err != nil {
		t.Fatal(err)
	}
	if got := s.load(); !reflect.DeepEqual(got, want) {
		t.Errorf("with a damaged summary and a link: load = %v, want %v", got, want)
	}
	if got := parseSummary([]byte(damaged)); got != nil {
		t.Errorf("parseSummary(damaged) = %v, want nil", got)
	}
	for text, n := range map[string]int{frameStoreMagic: 0, frameStoreMagic + "\n": 0, frameStoreMagic + "\nf a": 1, frameStoreMagic + "\nf c g h\r\n": 1} {
		if got := parseSummary([]byte(text)); got == nil || len(got) != n {
			t.Errorf("parseSummary(%q) = %v, want %d functions", text, got, n)
		}
	}
	for _, text := range []string{"", "weave frames 0\nf a\n", frameStoreMagic + "\n\nf a\n", frameStoreMagic + "\nf\n"} {
		if parseSummary([]byte(text)) != nil {
			t.Errorf("parseSummary(%q) took it for a summary", text)
		}
	}
}

func TestPortableGuard(t *testing.T) {
	for flags, want := range map[string]bool{
		"-O2": false, "-g -O2": false, "-O2 -O0": true, "": true, "-g": true, "-Os": false, "-Og": false,
		"-O2 -masm=intel": true, "-O0 -O3": false,
	} {
		if got := portableGuard(strings.Fields(flags)); got != want {
			t.Errorf("portableGuard(%q) = %v, want %v", flags, got, want)
		}
		if got, want := optimised(strings.Fields(flags)), want && !strings.Contains(flags, "-masm=intel"); got == want {
			t.Errorf("optimised(%q) = %v", flags, got)
		}
	}
}

// TestAsmThunkFlags: which compiles may take asm call thunks: not one
// making LTO bytecode (the last of -flto* and -fno-lto decides), keeping
// frame pointers, splitting stacks or with gcc's own CFI, nor one with
// another code model, convention, registers or return.
func TestAsmThunkFlags(t *testing.T) {
	for flags, want := range map[string]bool{
		"-O2": true, "-O2 -g -Wall -fPIE -fcf-protection -fstack-protector-strong -fsanitize=address": true,
		"-O2 -flto": false, "-flto=auto -O2": false, "-flto=4": false, "-flto -fno-lto": true,
		"-fno-lto -flto=jobserver": false, "-flto=none": true, "-ffat-lto-objects": true,
		"--coverage -fprofile-update=atomic": true, "-fprofile-generate": true, "-fsanitize-coverage=trace-pc": true, "-pg": false,
		"-fsplit-stack": false, "-fno-omit-frame-pointer": false, "-fno-omit-frame-pointer -fomit-frame-pointer": true,
		"-fno-asynchronous-unwind-tables": true, "-fno-dwarf2-cfi-asm": false, "-mcmodel=large": false, "-mcmodel=medium": false, "-mcmodel=small": true,
		"-mabi=ms": false, "-ffixed-r11": false, "-fcall-used-rbx": false, "-mfunction-return=thunk": false,
		"-mfunction-return=keep": true, "-mharden-sls=all": false,
	} {
		if got := asmThunkFlags(strings.Fields(flags)); got != want {
			t.Errorf("asmThunkFlags(%q) = %v, want %v", flags, got, want)
		}
	}
}
