package driver

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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

// TestWriteAtomicInterrupt: weave ended by a signal while it writes an
// output (^C or kill in weave -o, report -o, merge -o) ends by that signal and
// leaves neither the output nor its temporary file. Before, the
// temporary (".out.c.tmp123") stayed beside the output.
func TestWriteAtomicInterrupt(t *testing.T) {
	if dir := os.Getenv("WEAVE_TEST_INTERRUPT_DIR"); dir != "" { // the child
		WriteAtomic(filepath.Join(dir, "out.c"), func(w io.Writer) error {
			io.WriteString(w, "half")
			syscall.Kill(os.Getpid(), syscall.SIGTERM) // not SIGINT: a background job may start with it ignored
			time.Sleep(10 * time.Second)
			return nil
		})
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteAtomicInterrupt$")
	cmd.Env = append(os.Environ(), "WEAVE_TEST_INTERRUPT_DIR="+dir)
	out, err := cmd.CombinedOutput()
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if err == nil || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the writer did not end by SIGTERM: %v\n%s", err, out)
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
