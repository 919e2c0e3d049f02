package cachedir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadTrusted: ReadTrusted reads what Trusted trusts, whole, and
// nothing else: a link, a file others may write, an empty file, a
// directory, a FIFO (without blocking on it) or a missing file.
func TestReadTrusted(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }
	big := make([]byte, 300<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	write := func(name string, data []byte, mode os.FileMode) {
		if err := os.WriteFile(path(name), data, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("ok", []byte("entry\n"), 0o600)
	write("big", big, 0o644)
	write("group", []byte("x"), 0o620)
	write("world", []byte("x"), 0o602)
	write("empty", nil, 0o600)
	if err := os.Symlink(path("ok"), path("link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(path("dir"), 0o700)
	d, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for name, want := range map[string][]byte{"ok": []byte("entry\n"), "big": big} {
		if got := ReadTrusted(path(name)); string(got) != string(want) {
			t.Errorf("ReadTrusted(%s): %d bytes, want %d", name, len(got), len(want))
		}
		if !Trusted(path(name)) {
			t.Errorf("Trusted(%s) = false", name)
		}
		if got := ReadTrustedIn(d, name); string(got) != string(want) {
			t.Errorf("ReadTrustedIn(%s): %d bytes, want %d", name, len(got), len(want))
		}
	}
	done := make(chan bool)
	go func() {
		for _, name := range []string{"group", "world", "empty", "link", "fifo", "dir", "missing"} {
			if got := ReadTrusted(path(name)); got != nil {
				t.Errorf("ReadTrusted(%s) = %q, want nil", name, got)
			}
			if Trusted(path(name)) {
				t.Errorf("Trusted(%s) = true", name)
			}
			if got := ReadTrustedIn(d, name); got != nil {
				t.Errorf("ReadTrustedIn(%s) = %q, want nil", name, got)
			}
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ReadTrusted blocked (on the FIFO?)")
	}
}
