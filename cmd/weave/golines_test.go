package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGoLines: a framed function whose first statement has comments above
// it keeps its lines in the woven build (runtime.Caller here; panics and
// the runtime's heap profile alike): the entry's line directive went
// before the comments with the statement's line, so every line after it
// was one or more too far (BurntSushi/toml's addContext: its allocations
// at parse.go:557, 602, 604 said 558, 603, 605 in go test -memprofile).
func TestGoLines(t *testing.T) {
	tmp := t.TempDir()
	for _, f := range []string{"go.mod", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata/go/lines", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, f), b, 0o644)
	}
	plain := mustRun(t, tmp, nil, "go", "run", ".")
	mustRun(t, tmp, nil, weaveBin, "go", "build", "-o", "woven", ".")
	woven := mustRun(t, tmp, []string{"WEAVE_OUT=" + filepath.Join(tmp, "p.prof")}, "./woven")
	if woven.stdout != plain.stdout {
		t.Errorf("woven lines:\n%s\nplain:\n%s", woven.stdout, plain.stdout)
	}
}
