// Package cachedir gives weave's private cache directory and tells which of
// its entries may be trusted.
package cachedir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Dir returns weave's cache directory, os.UserCacheDir()/weave, creating it
// with mode 0700. Without a user cache directory, or with one weave cannot
// create or write (HOME=/nonexistent in a build sandbox, a read-only home),
// it is weave-UID under the temporary directory. The directory must be a
// real directory (not a link) owned by the current user and writable by no
// one else: anything else is an error, since objects loaded from it end up
// in the user's programs. Such a refusal is not a reason to fall back: a
// cache directory of another user's, or a link, is something to report.
func Dir() (string, error) {
	tmp := filepath.Join(os.TempDir(), "weave-"+strconv.Itoa(os.Getuid()))
	base, err := os.UserCacheDir()
	if err != nil {
		return private(tmp)
	}
	dir, err := private(filepath.Join(base, "weave"))
	if err == nil && syscall.Access(dir, 2 /* W_OK */) != nil {
		err = fmt.Errorf("cache directory %s: not writable", dir)
	}
	if err != nil && !errors.Is(err, errRefused) {
		if d, terr := private(tmp); terr == nil {
			return d, nil
		}
	}
	return dir, err
}

// errRefused marks a directory that exists but may not be trusted.
var errRefused = errors.New("refusing to use it")

// private creates dir (mode 0700) if it is missing and checks it is a
// directory of this user's that no one else may write (made so if it is
// ours).
func private(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cache directory: %v", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("cache directory: %v", err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("cache directory %s is not a directory (a link?): %w", dir, errRefused)
	}
	if uid, ok := owner(fi); ok && uid != os.Getuid() {
		return "", fmt.Errorf("cache directory %s belongs to uid %d, not to this user (uid %d): %w", dir, uid, os.Getuid(), errRefused)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		// Ours, from an older weave (0755) or a permissive umask: make it private.
		if err := os.Chmod(dir, 0o700); err != nil {
			return "", fmt.Errorf("cache directory: %v", err)
		}
	}
	return dir, nil
}

// Trusted reports whether path is a regular, non-empty file (not a link)
// owned by the current user and writable by no one else: an entry weave
// wrote itself, not one another user planted.
func Trusted(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 || fi.Mode().Perm()&0o022 != 0 {
		return false
	}
	owns, ok := owner(fi)
	return ok && owns == uid()
}

// uid is the user's id, asked once (a system call each time otherwise).
var uid = sync.OnceValue(os.Getuid)

func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// FileID identifies a file by its path, size, modification time and
// inode ("" if it cannot be read): a rebuilt or replaced binary is
// another one. Cache keys use it for weave's own binary and the
// compiler's.
func FileID(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	ino := uint64(0)
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		ino = st.Ino
	}
	return fmt.Sprintf("%s\x00%d\x00%d\x00%d", path, fi.Size(), fi.ModTime().UnixNano(), ino)
}
