package driver

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPruneDue: a cache directory is pruned at most once in pruneEvery,
// and its mark survives the prune.
func TestPruneDue(t *testing.T) {
	dir := t.TempDir()
	if !pruneDue(dir) {
		t.Fatal("a directory never pruned: not due")
	}
	if pruneDue(dir) {
		t.Fatal("pruned just now: due again")
	}
	pruneCache(dir, 1<<20)
	if _, err := os.Stat(filepath.Join(dir, ".pruned")); err != nil {
		t.Fatalf("the mark after a prune: %v", err)
	}
	old := time.Now().Add(-pruneEvery - time.Minute)
	if err := os.Chtimes(filepath.Join(dir, ".pruned"), old, old); err != nil {
		t.Fatal(err)
	}
	if !pruneDue(dir) {
		t.Fatal("pruned longer than pruneEvery ago: not due")
	}
	if pruneDue(dir) {
		t.Fatal("due twice in a row")
	}
}
