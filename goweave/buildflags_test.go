package goweave

import (
	"slices"
	"testing"
)

// TestPickStdFlags: the go command's flags that change the standard
// library's compile are picked from a go build or go test command line,
// and nothing else (the values of other flags, the test binary's).
func TestPickStdFlags(t *testing.T) {
	args := []string{"-toolexec", "/bin/weave toolexec", "-o", "-trimpath", "--gcflags", "all=-N -l", "-tags=netgo",
		"-run", "-race", "-ldflags=-s", "./...", "-asmflags=-p", "-count", "1", "-args", "-msan"}
	want := []string{"-gcflags=all=-N -l", "-tags=netgo", "-asmflags=-p"}
	if got := pickStdFlags(args); !slices.Equal(got, want) {
		t.Errorf("pickStdFlags(%q) = %q, want %q", args, got, want)
	}
	if got := pickStdFlags([]string{"-trimpath", "-race=true", "-gcflags", "-l"}); !slices.Equal(got, []string{"-trimpath", "-race=true", "-gcflags=-l"}) {
		t.Errorf("got %q", got)
	}
}
