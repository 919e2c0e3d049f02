package driver

import (
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteAtomicNames: an output that cannot be created is named as the
// user gave it, never by the temporary file beside it, and no temporary
// is left; a written one replaces the old contents whole.
func TestWriteAtomicNames(t *testing.T) {
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "new\n"); return err }
	out := filepath.Join(dir, "nodir", "out.c")
	err := WriteAtomic(out, write)
	if err == nil || err.Error() != "cannot write output file "+out+": no such file or directory" {
		t.Errorf("WriteAtomic into a missing directory: %v", err)
	}
	if err := WriteAtomic(dir, write); err == nil || err.Error() != "cannot write output file "+dir+": is a directory" {
		t.Errorf("WriteAtomic into a directory's name: %v", err)
	}
	// the temporary goes beside the lexical directory, "dir"; the rename
	// fails where "nodir" is missing
	odd := filepath.Join(dir, "nodir") + "/../odd.c"
	if err := WriteAtomic(odd, write); err == nil || err.Error() != "cannot write output file "+odd+": no such file or directory" {
		t.Errorf("WriteAtomic through a missing directory's ..: %v", err)
	}
	ok := filepath.Join(dir, "ok.c")
	os.WriteFile(ok, []byte("old contents, longer\n"), 0o644)
	if err := WriteAtomic(ok, write); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(ok); string(b) != "new\n" {
		t.Errorf("ok.c holds %q", b)
	}
	// An input's error from the writer is the input's, not the output's.
	in := &os.PathError{Op: "open", Path: "in.trace", Err: os.ErrNotExist}
	if err := WriteAtomic(filepath.Join(dir, "x.c"), func(io.Writer) error { return in }); err != in {
		t.Errorf("WriteAtomic whose writer failed reading an input: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left in the directory: %v", ents)
	}
}
