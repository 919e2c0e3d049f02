package goweave

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// PackagesEnv names the environment variable that carries --packages
// patterns from `weave go` to `weave toolexec`.
const PackagesEnv = "WEAVE_GO_PACKAGES"

// Toolexec runs one tool of a Go build (`go build -toolexec "weave
// toolexec"`): args are the tool's path and arguments. It weaves the
// packages selected (see Selected) before the compiler sees them, adds the
// runtime to the woven compiles' and the link's importcfg, and marks the
// tools' version (-V=full) so that the go build cache keeps woven and plain
// builds apart.
func Toolexec(args []string, patterns []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("toolexec: no tool")
	}
	tool := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	switch {
	case len(args) == 2 && args[1] == "-V=full" && (tool == "compile" || tool == "link"):
		return version(args, patterns, stdout, stderr)
	case tool == "compile":
		return compile(args, patterns, stderr)
	case tool == "link":
		return link(args, stderr)
	}
	return run(args, stdout, stderr)
}

func run(args []string, stdout, stderr io.Writer) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	return cmd.Run()
}

// version prints the tool's version with weave's build, the selection and
// the frame policy appended: the go command keys its cache on that line.
func version(args, patterns []string, stdout, stderr io.Writer) error {
	var out bytes.Buffer
	if err := run(args, &out, stderr); err != nil {
		return err
	}
	h := sha256.New()
	if exe, err := os.Executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			io.Copy(h, f)
			f.Close()
		}
	}
	fmt.Fprintln(h, patterns)
	fmt.Fprintln(h, os.Getenv(FramesEnv))
	line := strings.TrimRight(out.String(), "\n")
	_, err := fmt.Fprintf(stdout, "%s weave-go:%s\n", line, hex.EncodeToString(h.Sum(nil))[:16])
	return err
}

// toolArgs is a compile or link command line, split.
type toolArgs struct {
	args      []string
	importcfg int // index of the importcfg file argument, or -1
	pkg       string
	files     []int  // indexes of the .go file arguments
	out       string // -o
	flags     []string
	lang      string // -lang=go1.N
}

func splitArgs(args []string) *toolArgs {
	t := &toolArgs{args: args, importcfg: -1}
	for i := 1; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-importcfg" && i+1 < len(args):
			t.importcfg = i + 1
			i++
		case a == "-o" && i+1 < len(args):
			t.out = args[i+1]
			i++
		case a == "-p" && i+1 < len(args):
			t.pkg = args[i+1]
			i++
		case strings.HasPrefix(a, "-lang="):
			t.lang = strings.TrimPrefix(a, "-lang=")
		case a == "-race" || a == "-msan" || a == "-asan":
			t.flags = append(t.flags, a)
		case strings.HasSuffix(a, ".go") && !strings.HasPrefix(a, "-"):
			t.files = append(t.files, i)
		}
	}
	return t
}

// goBin is the go command of the toolchain a tool belongs to
// ($GOROOT/pkg/tool/$GOOS_$GOARCH/compile).
func goBin(tool string) string {
	if p := filepath.Join(goRoot(tool), "bin", "go"); fileExists(p) {
		return p
	}
	return "go"
}

// goRoot is the GOROOT of a tool ($GOROOT/pkg/tool/$GOOS_$GOARCH/compile).
func goRoot(tool string) string {
	if abs, err := filepath.Abs(tool); err == nil {
		tool = abs
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(tool))))
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// link adds the runtime and its dependencies to the link's importcfg.
func link(args []string, stderr io.Writer) error {
	t := splitArgs(args)
	if t.importcfg < 0 {
		return run(args, os.Stdout, stderr)
	}
	rt, err := runtimeCfg(goBin(args[0]), t.flags)
	if err != nil {
		return err
	}
	cfg, err := os.ReadFile(args[t.importcfg])
	if err != nil {
		return err
	}
	// Unused entries cost the linker nothing: it loads what is referred to.
	have := parseImportcfg(cfg)
	var add bytes.Buffer
	for p, f := range rt {
		if _, ok := have[p]; !ok {
			fmt.Fprintf(&add, "packagefile %s=%s\n", p, f)
		}
	}
	if add.Len() == 0 {
		return run(args, os.Stdout, stderr)
	}
	newCfg, err := tempWith(cfg, add.Bytes())
	if err != nil {
		return err
	}
	defer os.Remove(newCfg)
	args = append([]string(nil), args...)
	args[t.importcfg] = newCfg
	return run(args, os.Stdout, stderr)
}

// tempWith writes a temporary importcfg: cfg followed by more.
func tempWith(cfg, more []byte) (string, error) {
	f, err := os.CreateTemp("", "weave-importcfg-*")
	if err != nil {
		return "", err
	}
	_, err = f.Write(append(append(append([]byte(nil), cfg...), '\n'), more...))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return f.Name(), err
}

// gcImporter returns a types importer reading the export data the
// importcfg names.
func gcImporter(fset *token.FileSet, cfg []byte) types.Importer {
	files := parseImportcfg(cfg)
	alias := map[string]string{}
	for _, line := range strings.Split(string(cfg), "\n") {
		if rest, ok := strings.CutPrefix(line, "importmap "); ok {
			if k, v, ok := strings.Cut(rest, "="); ok {
				alias[k] = v
			}
		}
	}
	return importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		if a, ok := alias[path]; ok {
			path = a
		}
		f, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("%s not in importcfg", path)
		}
		return os.Open(f)
	})
}
