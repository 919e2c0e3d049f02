package runtime

import (
	"bytes"
	"os"
	"path/filepath"
)

// linkDirMarker starts the runtime's g_link_dir array (save.c) in an
// object built by Object: the bytes WithLinkDir writes a link's directory
// over.
const linkDirMarker = "\x7fWEAVE-LINK-DIR\x7f"

// linkDirSize is g_link_dir's size: the path and its terminating NUL.
const linkDirSize = 4096

// WithLinkDir returns a copy of the runtime object obj, written in the
// directory tmp, whose g_link_dir holds dir (absolute): the directory a
// woven program writes its profile in by default. It returns obj itself
// when obj has no marker, or more than one (a runtime compiled to LTO
// bytecode, say), or dir does not fit: the program then writes in the
// directory it starts in, as a runtime built by hand does.
func WithLinkDir(obj, dir, tmp string) (string, error) {
	if len(dir) >= linkDirSize || !filepath.IsAbs(dir) {
		return obj, nil
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
	path := filepath.Join(tmp, filepath.Base(obj))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		return "", err
	}
	return path, nil
}
