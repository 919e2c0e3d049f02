// Package replacefile writes a small file whole or not at all: a temporary
// file beside it, renamed into place.
package replacefile

import (
	"os"
	"path/filepath"
)

// Write writes b into a temporary file in path's directory, named after
// pattern (os.CreateTemp's), and renames it to path: a reader sees the
// whole text or none, and concurrent writers of the same text all
// succeed. The temporary file is removed when a step fails. (Commands'
// outputs, streamed and named in their errors, go through
// driver.WriteAtomic.)
func Write(path, pattern string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), pattern)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
