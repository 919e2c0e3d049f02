package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestObjectCachePruned: building a new object removes objects unused for
// a month, the oldest beyond the most recent pruneKeep, and temporary
// files of dead compiles; a reused object is marked used.
func TestObjectCachePruned(t *testing.T) {
	testtool.Need(t, "gcc")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	dir := filepath.Join(cache, "weave")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
		return p
	}
	old := mk("rt-old.o", 40*24*time.Hour)
	dead := mk("rt-dead.o.tmp", 2*time.Hour)
	live := mk("rt-live.o.tmp", time.Minute)
	other := mk("dialect-x", 400*24*time.Hour) // not the runtime's
	var recent []string
	for i := range pruneKeep + 5 {
		recent = append(recent, mk(fmt.Sprintf("rt-r%02d.o", i), time.Duration(i+1)*time.Hour))
	}
	obj, err := Object([]string{"gcc"}, []string{"-DWEAVE_PRUNE_TEST"})
	if err != nil {
		t.Fatal(err)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if !exists(obj) || exists(old) || exists(dead) || !exists(live) || !exists(other) {
		t.Errorf("after pruning: new %v old %v dead tmp %v live tmp %v other %v (want true false false true true)",
			exists(obj), exists(old), exists(dead), exists(live), exists(other))
	}
	for i, p := range recent {
		if want := i < pruneKeep-1; exists(p) != want {
			t.Errorf("%s (used %dh ago): kept %v, want %v", filepath.Base(p), i+1, exists(p), want)
		}
	}
	// Reuse marks an object used.
	os.Chtimes(obj, now.Add(-48*time.Hour), now.Add(-48*time.Hour))
	if again, err := Object([]string{"gcc"}, []string{"-DWEAVE_PRUNE_TEST"}); err != nil || again != obj {
		t.Fatalf("reuse: %q %v", again, err)
	}
	if fi, err := os.Stat(obj); err != nil || time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("a reused object is not marked used: %v", err)
	}
}
