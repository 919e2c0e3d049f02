package main

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/profile"
)

// TestPictureSkipped: a heap of more blocks than the picture holds gets M
// picture_skipped with the number of blocks in use (the H records'), both
// when the side table is walked to count them (up to twice the limit) and
// when the heap counters give it (widgets 600000 leaks about 300,000).
func TestPictureSkipped(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src, err := filepath.Abs(filepath.Join("..", "..", "testdata", "widgets.c"))
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "widgets")
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O1", "-o", exe, src)
	for _, n := range []string{"400000", "600000"} {
		prof := filepath.Join(dir, n+".prof")
		mustRun(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_LEAK_SCAN=0", "WEAVE_TIME=off"}, exe, n)
		p, err := profile.ReadFile(prof)
		if err != nil {
			t.Fatal(err)
		}
		var inUse uint64
		for _, nd := range p.Nodes {
			if nd.Kind == profile.KindAlloc {
				inUse += nd.Heap.TotalAllocs() - nd.Heap.TotalFrees()
			}
		}
		s, ok := p.MetaValue("picture_skipped")
		if got, _ := strconv.ParseUint(s, 10, 64); !ok || got != inUse || inUse < 1<<17 || len(p.Blocks) != 0 {
			t.Errorf("widgets %s: M picture_skipped %q (%v), %d blocks in use, %d X records", n, s, ok, inUse, len(p.Blocks))
		}
	}
}
