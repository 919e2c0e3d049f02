//go:build !linux

package cachedir

import (
	"os"
	"path/filepath"
)

// ReadTrusted returns the content of path if it is a file Trusted
// trusts, else nil.
func ReadTrusted(path string) []byte {
	if !Trusted(path) {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return b
}

// ReadTrustedIn is ReadTrusted of the file name in the open directory dir.
func ReadTrustedIn(dir *os.File, name string) []byte {
	return ReadTrusted(filepath.Join(dir.Name(), name))
}
