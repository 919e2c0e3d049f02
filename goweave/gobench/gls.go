package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// runGLS measures the goroutine-state options of goweave/rt
// (BenchmarkCall), the g-field one with the runtime patched by an overlay:
// a field added to runtime.g and two accessors pushed to the rt package by
// go:linkname, as orchestrion weaves them.
func runGLS(root string, count int) error {
	tmp, err := os.MkdirTemp("", "weave-gls-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	goroot := strings.TrimSpace(output(root, "go", "env", "GOROOT"))
	src := filepath.Join(goroot, "src", "runtime", "runtime2.go")
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	// The field goes last: the assembly knows the offsets of the first ones.
	text := string(b)
	start := strings.Index(text, "type g struct {\n")
	end := strings.Index(text[max(start, 0):], "\n}\n")
	if start < 0 || end < 0 {
		return fmt.Errorf("%s: no g struct", src)
	}
	end += start
	patched := text[:end] + "\n\tweaveGLS unsafe.Pointer // added by goweave/gobench" + text[end:]
	acc := `package runtime

import "unsafe"

//go:linkname weaveGLSGet github.com/weave-profiler/weave/goweave/rt.glsGet
//go:nosplit
func weaveGLSGet() unsafe.Pointer { return getg().m.curg.weaveGLS }

//go:linkname weaveGLSSet github.com/weave-profiler/weave/goweave/rt.glsSet
//go:nosplit
func weaveGLSSet(p unsafe.Pointer) { getg().m.curg.weaveGLS = p }
`
	files := map[string]string{src: patched, filepath.Join(goroot, "src", "runtime", "weave_gls.go"): acc}
	overlay := map[string]map[string]string{"Replace": {}}
	for dst, text := range files {
		p := filepath.Join(tmp, filepath.Base(dst))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
		overlay["Replace"][dst] = p
	}
	ov, _ := json.Marshal(overlay)
	ovPath := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		return err
	}
	cmd := exec.Command("go", "test", "-tags", "weavegfield", "-overlay", ovPath, "-run", "^$",
		"-bench", "Call", "-benchtime", "3000000x", "-cpu", "1", "-count", fmt.Sprint(count), "./goweave/rt")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	return cmd.Run()
}

func output(dir string, argv ...string) string {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	out, _ := cmd.Output()
	return string(out)
}
