package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/weave-profiler/weave/internal/cachedir"
	"github.com/weave-profiler/weave/internal/replacefile"
)

// linkDirMarker starts the runtime's g_link_dir array (save.c) in an
// object built by Object: the bytes WithLinkDir writes a link's directory
// over.
const linkDirMarker = "\x7fWEAVE-LINK-DIR\x7f"

// linkDirSize is g_link_dir's size: the path and its terminating NUL.
const linkDirSize = 4096

// Copies of runtime objects holding a link directory are kept in the
// object's cache directory as ld-<object>-<directory hash>.o, so that a
// directory's links after its first take theirs as they are (and a link
// that needs no temporary file runs the compiler in weave's place:
// driver.linkOnly); the linkDirKeep most recently made stay.
const (
	linkDirPrefix = "ld-"
	linkDirKeep   = 64
)

// WithLinkDir returns a copy of the runtime object obj whose g_link_dir
// holds dir (absolute): the directory a woven program writes its profile
// in by default. It returns obj itself when obj has no marker, or more
// than one (a runtime compiled to LTO bytecode, say), or dir does not
// fit: the program then writes in the directory it starts in, as a
// runtime built by hand does.
func WithLinkDir(obj, dir string) (string, error) {
	if len(dir) >= linkDirSize || !filepath.IsAbs(dir) {
		return obj, nil
	}
	sum := sha256.Sum256([]byte(dir))
	cache := filepath.Dir(obj)
	path := filepath.Join(cache, linkDirPrefix+strings.TrimSuffix(filepath.Base(obj), ".o")+"-"+hex.EncodeToString(sum[:8])+".o")
	if cachedir.Trusted(path) {
		// Marked used, so that another directory's first link, pruning,
		// leaves it to the link about to read it.
		if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > time.Minute {
			now := time.Now()
			os.Chtimes(path, now, now)
		}
		return path, nil
	}
	b, err := os.ReadFile(obj)
	if err != nil {
		return "", err
	}
	at := bytes.Index(b, []byte(linkDirMarker))
	if at < 0 || at+linkDirSize > len(b) || bytes.Contains(b[at+1:], []byte(linkDirMarker)) {
		return obj, nil
	}
	clear(b[at : at+linkDirSize])
	copy(b[at:], dir)
	if err := replacefile.Write(path, strings.TrimSuffix(filepath.Base(path), ".o")+"-*.o.tmp", b); err != nil {
		return "", err
	}
	pruneFiles(cache, linkDirPrefix, ".o", linkDirKeep, path)
	return path, nil
}
