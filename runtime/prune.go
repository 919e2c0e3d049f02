package runtime

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The object cache is pruned each time a new object is built (a new
// runtime, compiler or flag set): objects unused for pruneAge go, and
// beyond the pruneKeep most recently used ones; temporary files of
// compiles that died go after an hour. Reusing an object marks it used
// (its modification time, refreshed at most once a day).
const (
	pruneAge  = 30 * 24 * time.Hour
	pruneKeep = 64
	indexKeep = 256
	tmpAge    = time.Hour
)

// touch marks obj as used now, unless it was marked within the day.
func touch(obj string, fi os.FileInfo) {
	if time.Since(fi.ModTime()) > 24*time.Hour {
		now := time.Now()
		os.Chtimes(obj, now, now)
	}
}

// prune removes stale runtime objects of dir; keep (just built) stays.
// An object's dynamic list (dynlist.go) goes with it.
func prune(dir, keep string) {
	pruneFiles(dir, "rt-", ".o", pruneKeep, keep)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if base, ok := strings.CutSuffix(name, ".dynlist"); ok && strings.HasPrefix(name, "rt-") {
			if _, err := os.Lstat(filepath.Join(dir, base+".o")); os.IsNotExist(err) {
				os.Remove(filepath.Join(dir, name))
			}
		} else if strings.HasPrefix(name, "rt-") && strings.Contains(name, ".dynlist-") && strings.HasSuffix(name, ".tmp") {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > tmpAge {
				os.Remove(filepath.Join(dir, name))
			}
		}
	}
}

// pruneIndex removes stale object index entries of dir (index.go).
func pruneIndex(dir string) { pruneFiles(dir, indexPrefix, "", indexKeep, "") }

// pruneFiles removes the files of dir named prefix*suffix, but keep, that
// are unused for pruneAge or beyond the n most recently used, and
// prefix*suffix.tmp files older than tmpAge.
func pruneFiles(dir, prefix, suffix string, n int, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		mod  time.Time
	}
	var files []file
	now := time.Now()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		switch {
		case strings.HasSuffix(name, suffix+".tmp"):
			if now.Sub(fi.ModTime()) > tmpAge {
				os.Remove(path)
			}
		case strings.HasSuffix(name, suffix) && path != keep:
			files = append(files, file{path, fi.ModTime()})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	for i, f := range files {
		if i+1 >= n || now.Sub(f.mod) > pruneAge {
			os.Remove(f.path)
		}
	}
}
