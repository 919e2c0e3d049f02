package goweave

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/weave-profiler/weave/internal/replacefile"
)

// The runtime's source, built on demand: woven packages import it, but the
// user's module does not require it, so the go command does not build it.
// runtimeCfg builds it in a scratch module with the build's toolchain
// (`go list -export -deps`, into the go build cache) and returns the
// importcfg lines of it and its dependencies, which Toolexec adds to the
// importcfg of each woven compile and of the link. It depends on the
// standard library only; the standard packages are compiled the same in
// both builds as long as the flags that change their export data agree, so
// -race, -msan and -asan are passed on, and -trimpath, -gcflags, -asmflags
// and -tags from GOFLAGS and the go command's line (stdFlags).
// (orchestrion, which this follows, instead has its runtime required by
// the user's go.mod.)

//go:embed rt/*.go rt/*.s
var rtSource embed.FS

// runtimeCfg returns the packagefile lines for the runtime and its
// dependencies, built with goBin and the given build flags.
func runtimeCfg(goBin string, flags []string) (map[string]string, error) {
	flags = append(append([]string(nil), flags...), stdFlags()...)
	h := sha256.New()
	fmt.Fprintln(h, goBin, flags, os.Getenv("GOOS"), os.Getenv("GOARCH"), os.Getenv("GOEXPERIMENT"), os.Getenv("CGO_ENABLED"))
	fs.WalkDir(rtSource, "rt", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			b, _ := rtSource.ReadFile(p)
			fmt.Fprintln(h, p, len(b))
			h.Write(b)
		}
		return nil
	})
	key := hex.EncodeToString(h.Sum(nil))[:20]
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "weave", "goweave", key)
	cfgPath := filepath.Join(dir, "importcfg")
	if b, err := os.ReadFile(cfgPath); err == nil {
		if m := parseImportcfg(b); m[RuntimePath] != "" && allExist(m) {
			return m, nil
		}
	}
	src := filepath.Join(dir, "src")
	if err := writeSource(src); err != nil {
		return nil, err
	}
	args := append([]string{"list", "-export", "-deps", "-f", "{{if .Export}}packagefile {{.ImportPath}}={{.Export}}{{end}}"}, flags...)
	cmd := exec.Command(goBin, append(args, RuntimePath)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GO111MODULE=on", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("building the runtime %s: %v\n%s", RuntimePath, err, stderr.Bytes())
	}
	m := parseImportcfg(out)
	if m[RuntimePath] == "" {
		return nil, fmt.Errorf("building the runtime %s: no export data", RuntimePath)
	}
	if err := writeAtomic(cfgPath, out); err != nil {
		return nil, err
	}
	return m, nil
}

// writeSource writes the runtime's source in dir, as the module whose
// path RuntimePath starts with.
func writeSource(dir string) error {
	module := strings.TrimSuffix(RuntimePath, "/goweave/rt")
	files := map[string][]byte{"go.mod": []byte("module " + module + "\n\ngo 1.22\n")}
	fs.WalkDir(rtSource, "rt", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, "_test.go") {
			files[filepath.Join("goweave", p)], _ = rtSource.ReadFile(p)
		}
		return nil
	})
	for name, b := range files {
		p := filepath.Join(dir, name)
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := writeAtomic(p, b); err != nil {
			return err
		}
	}
	return nil
}

// writeAtomic writes b to path, its directory made if missing.
func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return replacefile.Write(path, ".tmp-*", b)
}

// parseImportcfg returns the packagefile entries of an importcfg.
func parseImportcfg(b []byte) map[string]string {
	m := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "packagefile "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				m[k] = v
			}
		}
	}
	return m
}

func allExist(m map[string]string) bool {
	for _, f := range m {
		if _, err := os.Stat(f); err != nil {
			return false
		}
	}
	return true
}
