package replacefile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWrite: the file holds the new text and nothing else is left in its
// directory; a missing directory is an error that leaves nothing.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	for _, text := range []string{"first\n", "second\n"} {
		if err := Write(path, "f-*.tmp", []byte(text)); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != text {
			t.Fatalf("%s holds %q (%v), want %q", path, b, err, text)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("%d files in the directory, want 1", len(ents))
	}
	if err := Write(filepath.Join(dir, "none", "f"), "f-*.tmp", []byte("x")); err == nil {
		t.Error("a missing directory wrote")
	}
}
