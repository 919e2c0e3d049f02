package main

import "testing"

// TestGoLines: a framed function whose first statement has comments above
// it keeps its lines in the woven build (runtime.Caller here; panics and
// the runtime's heap profile alike): the entry's line directive went
// before the comments with the statement's line, so every line after it
// was one or more too far (BurntSushi/toml's addContext: its allocations
// at parse.go:557, 602, 604 said 558, 603, 605 in go test -memprofile).
func TestGoLines(t *testing.T) {
	tmp := copyModule(t, "lines", "main.go")
	plain := mustRun(t, tmp, nil, "go", "run", ".")
	mustRun(t, tmp, nil, weaveBin, "go", "build", "-o", "woven", ".")
	runWoven(t, tmp, plain.stdout)
}
