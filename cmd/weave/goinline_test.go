package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

// TestGoInlinedNew: a constructor (return &D{...}) inlined where its block
// does not escape allocates nothing, woven as plain: rt.New's pointer
// escaped, so the woven build put every inlined copy's block on the heap
// (1,000 mallocs in sum where the plain build makes none) and counted it.
// The runtime now counts a block only when it is not on the goroutine's
// stack: newD's two escaping blocks of main, not the 1,000 of sum.
func TestGoInlinedNew(t *testing.T) {
	tmp := t.TempDir()
	for _, f := range []string{"go.mod", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata/go/inlnew", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, f), b, 0o644)
	}
	plain := mustRun(t, tmp, nil, "go", "run", ".")
	if !strings.HasSuffix(plain.stdout, "mallocs in sum: 0\n") {
		t.Fatalf("the plain build allocated in sum: %q", plain.stdout)
	}
	mustRun(t, tmp, nil, weaveBin, "go", "build", "-o", "woven", ".")
	prof := filepath.Join(tmp, "p.prof")
	woven := mustRun(t, tmp, []string{"WEAVE_OUT=" + prof}, "./woven")
	if woven.stdout != plain.stdout {
		t.Errorf("woven %q, plain %q", woven.stdout, plain.stdout)
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if allocs, _ := siteAllocs(p); allocs["main.newD"] != 2 {
		t.Errorf("main.newD: %d allocations, want 2 (%v)", allocs["main.newD"], allocs)
	}
}
