package main

import (
	"strings"
	"testing"
)

// TestGoInlinedNew: a constructor (return &D{...}) inlined where its block
// does not escape allocates nothing, woven as plain: rt.New's pointer
// escaped, so the woven build put every inlined copy's block on the heap
// (1,000 mallocs in sum where the plain build makes none) and counted it.
// The runtime now counts a block only when it is not on the goroutine's
// stack: newD's two escaping blocks of main, not the 1,000 of sum.
func TestGoInlinedNew(t *testing.T) {
	tmp := copyModule(t, "inlnew", "main.go")
	plain := mustRun(t, tmp, nil, "go", "run", ".")
	if !strings.HasSuffix(plain.stdout, "mallocs in sum: 0\n") {
		t.Fatalf("the plain build allocated in sum: %q", plain.stdout)
	}
	mustRun(t, tmp, nil, weaveBin, "go", "build", "-o", "woven", ".")
	p := runWoven(t, tmp, plain.stdout)
	if allocs, _ := siteAllocs(p); allocs["main.newD"] != 2 {
		t.Errorf("main.newD: %d allocations, want 2 (%v)", allocs["main.newD"], allocs)
	}
}
