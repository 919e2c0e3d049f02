// Package api holds weave_api.h, the header of weave's API for C programs
// (marks and regions), and puts it where woven compiles find it.
package api

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"

	"github.com/weave-profiler/weave/internal/cachedir"
)

// Name is the header's file name.
const Name = "weave_api.h"

// Define is the macro weave defines when it preprocesses a file it weaves
// (-D__WEAVE__=1): the header's macros then call the runtime.
const Define = "__WEAVE__"

//go:embed weave_api.h
var header []byte

// Header returns the text of weave_api.h.
func Header() []byte { return header }

// Write writes weave_api.h into dir (created if missing), atomically: a
// temporary file renamed into place.
func Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".weave_api-*.h.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	_, err = tmp.Write(header)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, Name))
}

// IncludeDir returns a directory of weave's private cache holding this
// weave's weave_api.h (named by the header's hash, so that weaves of
// different versions never share one), writing it on first use.
func IncludeDir() (string, error) {
	base, err := cachedir.Dir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(header)
	dir := filepath.Join(base, "api-"+hex.EncodeToString(sum[:8]))
	if cachedir.Trusted(filepath.Join(dir, Name)) {
		if b, err := os.ReadFile(filepath.Join(dir, Name)); err == nil && string(b) == string(header) {
			return dir, nil
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("api header: %v", err)
	}
	if err := Write(dir); err != nil {
		return "", fmt.Errorf("api header: %v", err)
	}
	return dir, nil
}

// Flags returns the flags a compile needs to find weave_api.h (after the
// user's own include directories, so that a copy of theirs wins), and,
// when woven, the definition that turns its macros on.
func Flags(woven bool) []string {
	var r []string
	if woven {
		r = append(r, "-D"+Define+"=1")
	}
	if dir, err := IncludeDir(); err == nil {
		r = append(r, "-idirafter", dir)
	}
	return r
}
