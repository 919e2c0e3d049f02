package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/memcheck"
	"github.com/weave-profiler/weave/internal/testtool"
)

// TestLeakOwnArenaBesideBigBlock: a program's own mmap'd arena (as
// pymalloc's) that the kernel joined in one line of /proc/self/maps
// with a big block glibc mmap'd is a root, as memcheck reads it
// (testdata/leaks/ownarena.c). The scan used to skip any anonymous
// mapping that held a live block as the allocator's, and called the
// blocks only the arena points to definitely lost: CPython's
// _freeze_module, woven, reported 79,038 bytes in 40 blocks definitely
// lost where memcheck found none.
func TestLeakOwnArenaBesideBigBlock(t *testing.T) {
	dir, src, r, got := leakKinds(t, "ownarena")
	if !strings.Contains(r.stdout, " joined") {
		t.Fatalf("no arena beside the big block's map (the case is not made):\n%s", r.stdout)
	}
	if got[0].Blocks != 1 || got[1].Blocks != 1 || got[3].Blocks != 2 {
		t.Errorf("leak kinds %+v, want the big block definitely lost, its one block indirectly lost, the arenas' two still reachable", got)
	}
	sameKindsAsMemcheck(t, dir, src, got)
}

// TestLeakReallocMoved: a small block realloc moved is scrubbed before it
// is freed, as free scrubs one (testdata/leaks/reallocmoved.c): the
// pointers it held, left in the memory glibc hands out again, made blocks
// memcheck calls definitely lost still reachable (probe21's reduction of
// flac's vc_resize_).
func TestLeakReallocMoved(t *testing.T) {
	dir, src, _, got := leakKinds(t, "reallocmoved")
	if got[0].Blocks != 4 {
		t.Errorf("leak kinds %+v, want the four dropped blocks definitely lost", got)
	}
	sameKindsAsMemcheck(t, dir, src, got)
}

// TestLeakReuseAnySize: freed memory of any size glibc hands out again
// is scrubbed, and so are the tail a shrinking realloc splits off and the
// block realloc(p, 0) frees (testdata/leaks/reusebig.c). Free scrubbed
// blocks of at most 256 bytes only: an array of 64 pointers freed without
// its elements, its memory reused, left 1,152 of memcheck's 1,164
// definitely lost blocks still reachable.
func TestLeakReuseAnySize(t *testing.T) {
	dir, src, r, got := leakKinds(t, "reusebig")
	if !strings.Contains(r.stdout, "reused 1 1 1 1") {
		t.Fatalf("a freed chunk not handed out again (the case is not made):\n%s", r.stdout)
	}
	if got[0].Blocks != 64+1000+60+40 {
		t.Errorf("leak kinds %+v, want the 1,164 dropped blocks definitely lost", got)
	}
	sameKindsAsMemcheck(t, dir, src, got)
}

// TestLeakQuarantine: WEAVE_QUARANTINE holds freed blocks back as
// memcheck does, so that dangling pointers the program keeps do not reach
// the blocks glibc would give their addresses (testdata/leaks/dangling.c):
// the kinds are memcheck's. Without it the addresses are handed out again
// (the case is made) and the lost blocks are reachable, as documented.
func TestLeakQuarantine(t *testing.T) {
	quarantineKinds(t, "dangling")
}

// quarantineKinds runs testdata/leaks/name.c, which prints how many of
// the four blocks it loses got the address of a block it freed and kept
// a pointer to, without WEAVE_QUARANTINE (the case is made: all four)
// and with it (none), and compares the kinds with memcheck's.
func quarantineKinds(t *testing.T, name string) {
	dir, src, r, _ := leakKinds(t, name, "WEAVE_SUMMARY=1")
	if !strings.Contains(r.stdout, "reused 4") {
		t.Fatalf("the freed addresses not handed out again (the case is not made):\n%s", r.stdout)
	}
	_, _, r, got := leakKinds(t, name, "WEAVE_QUARANTINE=20", "WEAVE_SUMMARY=1")
	if !strings.Contains(r.stdout, "reused 0") {
		t.Errorf("WEAVE_QUARANTINE=20: a freed block's address handed out again:\n%s", r.stdout)
	}
	if got[0].Blocks != 4 {
		t.Errorf("WEAVE_QUARANTINE=20: leak kinds %+v, want the four blocks definitely lost", got)
	}
	sameKindsAsMemcheck(t, dir, src, got)
}

// leakKinds builds testdata/leaks/name.c woven in a new directory, runs
// it (with env added) and returns its leak summary's kinds.
func leakKinds(t *testing.T, name string, env ...string) (dir, src string, r result, got memcheck.Kinds) {
	dir = t.TempDir()
	exe, src := buildLeaks(t, dir, name)
	r = mustRun(t, dir, append([]string{"WEAVE_OUT=", "WEAVE_TIME=off"}, env...), exe)
	var ok bool
	got, ok = memcheck.ParseKinds(r.stderr)
	if !ok {
		t.Fatalf("no LEAK SUMMARY in:\n%s", r.stderr)
	}
	return dir, src, r, got
}

// sameKindsAsMemcheck checks weave's leak summary got against memcheck's
// of src built plain (gcc -O1 -g) and run in dir.
func sameKindsAsMemcheck(t *testing.T, dir, src string, got memcheck.Kinds) {
	testtool.Check(t, "valgrind", []string{"valgrind"}, func(t *testing.T) {
		plain := filepath.Join(dir, "plain")
		mustRun(t, dir, nil, "gcc", "-O1", "-g", "-o", plain, src)
		if vg := memcheck.RunLeaks(t, dir, nil, plain); vg != got {
			t.Errorf("weave's leak summary %+v, valgrind's of the unwoven program %+v", got, vg)
		}
	})
}

// TestLeakQuarantineMapped: a block glibc mapped for itself, held by
// WEAVE_QUARANTINE, holds no pointers for the leak scan
// (testdata/leaks/heldmapped.c): free left it unscrubbed (glibc's free
// unmaps it), but held it stayed mapped, a mapping with no live block
// that the scan read as a root, and all 128 blocks memcheck calls
// definitely lost were still reachable.
func TestLeakQuarantineMapped(t *testing.T) {
	dir, src, r, got := leakKinds(t, "heldmapped", "WEAVE_QUARANTINE=20", "WEAVE_SUMMARY=1")
	if !strings.Contains(r.stdout, "held 1") {
		t.Fatalf("the freed block's map not held (the case is not made):\n%s", r.stdout)
	}
	if got[0].Blocks != 128 {
		t.Errorf("leak kinds %+v, want the 128 dropped blocks definitely lost", got)
	}
	sameKindsAsMemcheck(t, dir, src, got)
}

// TestLeakQuarantineReallocZero: under WEAVE_QUARANTINE the block
// realloc(p, 0) frees is held as a freed one is
// (testdata/leaks/danglingzero.c). It went to glibc, which handed its
// address to the next block at once: the four blocks memcheck calls
// definitely lost were reachable from the pointers the program kept.
func TestLeakQuarantineReallocZero(t *testing.T) {
	quarantineKinds(t, "danglingzero")
}

// TestLeakLastWord: a pointer to the last 8 bytes of a 536-byte block,
// where glibc keeps the next chunk's header, from the program's own
// roots (a global; a register at the call to exit, as mawk's END code
// cursor) makes the block possibly lost, as memcheck says
// (testdata/leaks/lastword.c). Before, the scan took every such word for
// one of the allocator's and both blocks were definitely lost.
func TestLeakLastWord(t *testing.T) {
	dir, src, _, got := leakKinds(t, "lastword", "WEAVE_SUMMARY=1")
	if got[2].Blocks != 2 || got[0].Blocks != 0 {
		t.Errorf("leak kinds %+v, want the 2 blocks possibly lost", got)
	}
	sameKindsAsMemcheck(t, dir, src, got)
}
