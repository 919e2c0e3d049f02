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
	tmp := copyModule(t, "buildflags", "main.go", "nocgo.go")
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
			p := runWoven(t, tmp, mustRun(t, tmp, nil, "./plain").stdout)
			if allocs, _ := siteAllocs(p); allocs["main.newItem"] != 100 {
				t.Errorf("nocgo.go's &item{}: %d allocations, want 100 (%v)", allocs["main.newItem"], allocs)
			}
		})
	}
}

// copyModule copies testdata/go/name's go.mod and files to a temporary
// directory and returns it.
func copyModule(t *testing.T, name string, files ...string) string {
	tmp := t.TempDir()
	for _, f := range append([]string{"go.mod"}, files...) {
		b, err := os.ReadFile(filepath.Join("testdata/go", name, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, f), b, 0o644)
	}
	return tmp
}

// runWoven runs dir's ./woven, its profile at p.prof, checks that it
// printed the plain build's output and returns the profile.
func runWoven(t *testing.T, dir, plain string) *profile.Profile {
	t.Helper()
	prof := filepath.Join(dir, "p.prof")
	os.Remove(prof)
	if woven := mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, "./woven"); woven.stdout != plain {
		t.Errorf("woven output %q, plain %q", woven.stdout, plain)
	}
	p, err := profile.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
