package runtime

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestObjectIndex: Object writes an index entry naming the object it
// returns and answers from it next time (an entry naming another object
// of the cache is followed); an entry that is not the user's own, names
// a file elsewhere or an object that is gone is ignored; a changed
// compiler binary is another key, which finds the same object the long
// way (same source and --version: nothing compiled) and gets its own
// entry.
func TestObjectIndex(t *testing.T) {
	testtool.Need(t, "gcc")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	cc := filepath.Join(t.TempDir(), "cc-index-test")
	script := []byte("#!/bin/sh\nexec gcc \"$@\"\n")
	if err := os.WriteFile(cc, script, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "weave")
	entries := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, indexPrefix+"*"))
		return m
	}
	obj, err := Object([]string{cc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ents := entries()
	if len(ents) != 1 {
		t.Fatalf("index entries after the first build: %q, want 1", ents)
	}
	if b, _ := os.ReadFile(ents[0]); strings.TrimSpace(string(b)) != filepath.Base(obj) {
		t.Fatalf("the entry names %q, want %q", b, filepath.Base(obj))
	}
	get := func() string {
		t.Helper()
		o, err := Object([]string{cc}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// The entry is followed: point it at another object of the cache.
	other := filepath.Join(dir, "rt-other.o")
	if err := os.WriteFile(other, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ents[0], []byte("rt-other.o\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if o := get(); o != other {
		t.Fatalf("Object with the entry naming rt-other.o: %q", o)
	}
	// Not followed: writable by others, outside the cache, a missing object.
	for _, c := range []struct {
		text string
		mode os.FileMode
	}{{"rt-other.o\n", 0o666}, {"../rt-other.o\n", 0o600}, {"rt-gone.o\n", 0o600}} {
		if err := os.WriteFile(ents[0], []byte(c.text), c.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(ents[0], c.mode)
		if o := get(); o != obj {
			t.Errorf("entry %q mode %o: Object = %q, want %q", c.text, c.mode, o, obj)
		}
		os.Chmod(ents[0], 0o600) // rewritten by the call: back to the user's own
	}
	// Another compiler binary: the script written again (another inode).
	time.Sleep(10 * time.Millisecond)
	os.Remove(cc)
	if err := os.WriteFile(cc, script, 0o755); err != nil {
		t.Fatal(err)
	}
	objs, _ := filepath.Glob(filepath.Join(dir, "rt-*.o"))
	if o := get(); o != obj {
		t.Errorf("after the compiler changed: %q, want the same object %q", o, obj)
	}
	if n, _ := filepath.Glob(filepath.Join(dir, "rt-*.o")); len(n) != len(objs) {
		t.Errorf("objects %d -> %d: a changed compiler binary with the same --version compiled the runtime again", len(objs), len(n))
	}
	if n := entries(); len(n) != 2 {
		t.Errorf("index entries after the compiler changed: %d, want 2", len(n))
	}
}

// TestIndexPruned: pruneIndex keeps the most recently used entries, up
// to indexKeep, drops the ones unused for pruneAge and dead temporary
// files, and leaves the objects alone.
func TestIndexPruned(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("rt-x.o\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
		return p
	}
	var recent []string
	for i := range indexKeep + 5 {
		recent = append(recent, mk(fmt.Sprintf("rtx-%03d", i), time.Duration(i+1)*time.Minute))
	}
	old := mk("rtx-old", 40*24*time.Hour)
	dead := mk("rtx-dead.tmp", 2*time.Hour)
	live := mk("rtx-live.tmp", time.Minute)
	obj := mk("rt-x.o", 400*24*time.Hour)
	pruneIndex(dir)
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	if exists(old) || exists(dead) || !exists(live) || !exists(obj) {
		t.Errorf("old %v dead tmp %v live tmp %v object %v (want false false true true)", exists(old), exists(dead), exists(live), exists(obj))
	}
	for i, p := range recent {
		if want := i < indexKeep-1; exists(p) != want {
			t.Errorf("%s (used %d min ago): kept %v, want %v", filepath.Base(p), i+1, exists(p), want)
		}
	}
}
