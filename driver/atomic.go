package driver

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
)

// WriteAtomic streams what write writes into a temporary file beside path
// and renames it into place, so a reader never sees a half-written file
// and a failed write leaves the old one; a large output (a trace export of
// gigabytes) goes to disk as it is made, never into memory.
// A path that exists and is not a regular file (/dev/null, a FIFO) is
// written in place: renaming over it would replace the device.
func WriteAtomic(path string, write func(io.Writer) error) error {
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return outputError(path, err)
		}
		return finish(f, write)
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return outputError(path, err)
	}
	tmp := f.Name()
	stop := onInterrupt(func() { os.Remove(tmp) }) // ^C while it is written: no temporary left
	defer stop()
	err = finish(f, write)
	if pe := (*os.PathError)(nil); errors.As(err, &pe) && pe.Path == tmp {
		err = outputError(path, err) // full disk: named as given, not as the temporary file
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		if err = os.Rename(tmp, path); err != nil {
			err = outputError(path, err)
		}
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// finish writes into f through a buffer and closes it.
func finish(f *os.File, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(f, 1<<16)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// outputError names path, as the user gave it, in an error about opening
// it or the temporary file beside it.
func outputError(path string, err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		err = pe.Err
	case errors.As(err, &le):
		err = le.Err
	default:
		return err
	}
	return &os.PathError{Op: "cannot write output file", Path: path, Err: err}
}
