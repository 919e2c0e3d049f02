package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/profile"
)

// TestGoBuildFlags: weave go build with the go command's flags that change
// how the standard library is compiled (-gcflags=all=-N -l, as delve asks,
// -trimpath; also in GOFLAGS, and with go build -toolexec directly) links
// and runs as the plain build with the same flags: the runtime was built
// without them and the link failed ("fingerprint mismatch: os has ...,
// import from .../goweave/rt expecting ..."). Under -trimpath the sites the
// escape analysis finds escaping are counted: its positions were module
// paths, so none was woven. The package's nocgo.go, a file with cgo
// in its name and no cgo, is woven: the package was compiled unwoven with
// "not woven: cgo packages are not woven".
func TestGoBuildFlags(t *testing.T) {
	tmp := t.TempDir()
	for _, f := range []string{"go.mod", "main.go", "nocgo.go"} {
		b, err := os.ReadFile(filepath.Join("testdata/go/buildflags", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, f), b, 0o644)
	}
	toolexec := []string{"go", "build", "-toolexec", weaveBin + " toolexec"}
	for _, c := range []struct {
		name  string
		env   []string
		flags []string
		build []string // the woven build's command, before flags
	}{
		{"none", nil, nil, nil},
		{"-gcflags=all=-N -l", nil, []string{"-gcflags=all=-N -l"}, nil},
		{"GOFLAGS=-gcflags=all=-l", []string{"GOFLAGS=-gcflags=all=-l"}, nil, nil},
		{"go build -toolexec -gcflags=all=-l", nil, []string{"-gcflags=all=-l"}, toolexec},
		{"-trimpath", nil, []string{"-trimpath"}, nil},
		{"GOFLAGS=-trimpath", []string{"GOFLAGS=-trimpath"}, nil, nil},
		{"go build -toolexec -trimpath", nil, []string{"-trimpath"}, toolexec},
	} {
		t.Run(c.name, func(t *testing.T) {
			mustRun(t, tmp, c.env, append(append([]string{"go", "build"}, c.flags...), "-o", "plain", ".")...)
			build := c.build
			if build == nil {
				build = []string{weaveBin, "go", "build"}
			}
			b := mustRun(t, tmp, c.env, append(append(build, c.flags...), "-o", "woven", ".")...)
			if strings.Contains(b.stderr, "not woven") {
				t.Errorf("build: %s", b.stderr)
			}
			plain := mustRun(t, tmp, nil, "./plain")
			prof := filepath.Join(tmp, "p.prof")
			os.Remove(prof)
			woven := mustRun(t, tmp, []string{"WEAVE_OUT=" + prof}, "./woven")
			if woven.stdout != plain.stdout {
				t.Errorf("woven output %q, plain %q", woven.stdout, plain.stdout)
			}
			p, err := profile.ReadFile(prof)
			if err != nil {
				t.Fatal(err)
			}
			if allocs, _ := siteAllocs(p); allocs["main.newItem"] != 100 {
				t.Errorf("nocgo.go's &item{}: %d allocations, want 100 (%v)", allocs["main.newItem"], allocs)
			}
		})
	}
}
