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
func prune(dir, keep string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type obj struct {
		path string
		mod  time.Time
	}
	var objs []obj
	now := time.Now()
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "rt-") || !e.Type().IsRegular() {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		switch {
		case strings.HasSuffix(name, ".o.tmp"):
			if now.Sub(fi.ModTime()) > tmpAge {
				os.Remove(path)
			}
		case strings.HasSuffix(name, ".o") && path != keep:
			objs = append(objs, obj{path, fi.ModTime()})
		}
	}
	slices.SortFunc(objs, func(a, b obj) int { return b.mod.Compare(a.mod) })
	for i, o := range objs {
		if i+1 >= pruneKeep || now.Sub(o.mod) > pruneAge {
			os.Remove(o.path)
		}
	}
}
