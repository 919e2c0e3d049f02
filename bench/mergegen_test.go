package main

import (
	"path/filepath"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

// TestGenSuite: the generated profiles are valid, of the size the
// benchmark stands for (about 76 KB each, a real suite's), and differ.
func TestGenSuite(t *testing.T) {
	dir := t.TempDir()
	size, err := genSuite(dir, 5)
	if err != nil {
		t.Fatal(err)
	}
	if per := size / 5; per < 50_000 || per > 110_000 {
		t.Errorf("%d bytes a profile, want about 76 KB", per)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.prof"))
	argv := map[string]bool{}
	for _, f := range files {
		p, err := profile.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Scanned() || len(p.Nodes) < runNodes {
			t.Errorf("%s: scanned %v, %d nodes", f, p.Scanned(), len(p.Nodes))
		}
		v, _ := p.MetaValue("argv")
		argv[v] = true
	}
	if len(files) != 5 || len(argv) != 5 {
		t.Errorf("%d profiles, %d command lines", len(files), len(argv))
	}
}
