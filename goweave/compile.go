package goweave

import (
	"bytes"
	"fmt"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/internal/samefile"
)

// compile weaves the package being compiled, when it is selected, and
// compiles the woven files; a package that cannot be woven (it does not
// type-check, say) is compiled as it is, with one warning.
func compile(args, patterns []string, stderr io.Writer) error {
	t := splitArgs(args)
	if t.importcfg < 0 || len(t.files) == 0 {
		return run(args, os.Stdout, stderr)
	}
	files := make([]string, len(t.files))
	for i, j := range t.files {
		files[i] = args[j]
	}
	if err := samefile.Check(t.out, files...); err != nil {
		return err
	}
	testmain := t.pkg == "main" && len(files) == 1 && filepath.Base(files[0]) == "_testmain.go"
	if !testmain && !Selected(t.pkg, pkgDir(files), goRoot(args[0]), patterns) {
		return run(args, os.Stdout, stderr)
	}
	rt, err := runtimeCfg(goBin(args[0]), t.flags)
	if err != nil {
		return err
	}
	if _, dep := rt[t.pkg]; dep || t.pkg == RuntimePath {
		return run(args, os.Stdout, stderr) // the runtime and what it imports
	}
	cfg, err := os.ReadFile(args[t.importcfg])
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "weave-go-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var woven [][]byte
	if testmain {
		woven, err = weaveTestmain(files[0])
	} else {
		woven, err = weaveCompile(args, t, files, patterns, cfg, tmp, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "weave: %s: not woven: %v\n", t.pkg, err)
		return run(args, os.Stdout, stderr)
	}
	args = append([]string(nil), args...)
	for i, b := range woven {
		if b == nil {
			continue
		}
		p := filepath.Join(tmp, fmt.Sprintf("%d_%s", i, filepath.Base(files[i])))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		args[t.files[i]] = p
	}
	newCfg, err := tempWith(cfg, []byte("packagefile "+RuntimePath+"="+rt[RuntimePath]+"\n"))
	if err != nil {
		return err
	}
	defer os.Remove(newCfg)
	args[t.importcfg] = newCfg
	return run(args, os.Stdout, stderr)
}

// weaveCompile runs the compiler once with -m for the escape analysis and
// the functions it inlines, then weaves the package's files.
func weaveCompile(args []string, t *toolArgs, files, patterns []string, cfg []byte, tmp string, stderr io.Writer) ([][]byte, error) {
	for _, f := range files {
		if cgoFile(filepath.Base(f)) {
			return nil, fmt.Errorf("cgo packages are not woven")
		}
	}
	srcs := make([]Source, len(files))
	for i, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		abs, _ := filepath.Abs(f)
		srcs[i] = Source{abs, b}
	}
	if _, err := Parse(token.NewFileSet(), srcs); err != nil {
		return nil, err
	}
	cwd, _ := os.Getwd()
	esc, escErr := escapeAnalysis(args, tmp)
	opt := Options{ImportPath: t.pkg, Sizes: sizes(), LineDirectives: true}
	var err error
	if opt.AllFrames, err = ParseFrames(os.Getenv(FramesEnv)); err != nil {
		return nil, fmt.Errorf("%s: %v", FramesEnv, err)
	}
	goroot := goRoot(args[0])
	opt.Woven = func(path string) bool {
		for _, p := range patterns {
			if match(p, path) {
				return true
			}
		}
		return !isStd(goroot, path)
	}
	if t.lang != "" && versionBefore(t.lang, 18) {
		opt.NoAllocations = true
		fmt.Fprintf(stderr, "weave: %s: calls woven, allocation sites not: its language version is %s (go.mod), the allocation advice needs go1.18\n", t.pkg, t.lang)
	}
	if escErr == nil {
		opt.Escapes, opt.Inlinable = ParseEscapes(esc, cwd), ParseInlinable(esc, cwd)
	}
	fset := token.NewFileSet()
	opt.Importer = gcImporter(fset, cfg)
	return Package(srcs, opt)
}

// escapeAnalysis runs the compile with -m, its outputs thrown away, and
// returns the compiler's messages. Without -trimpath: its positions must
// be the files' own (go build -trimpath made them module paths, and no
// site escaped, no function inlined).
func escapeAnalysis(args []string, tmp string) ([]byte, error) {
	a := []string{"-m"}
	for i := 1; i < len(args); i++ {
		switch args[i] {
		case "-trimpath":
			i++
			continue
		case "-o", "-linkobj", "-asmhdr", "-symabis_out":
			if i+1 < len(args) {
				a = append(a, args[i], filepath.Join(tmp, "m-"+strings.TrimPrefix(args[i], "-")))
				i++
				continue
			}
		}
		a = append(a, args[i])
	}
	cmd := exec.Command(args[0], a...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// weaveTestmain makes the generated test main write the profile before it
// exits: its os.Exit becomes the runtime's.
func weaveTestmain(file string) ([][]byte, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	s := string(b)
	if !strings.Contains(s, "\tos.Exit(") {
		return nil, fmt.Errorf("%s: no os.Exit", file)
	}
	s = strings.ReplaceAll(s, "\tos.Exit(", "\t"+rtName+".Exit(")
	s = strings.Replace(s, "\npackage main\n", "\npackage main\n\nimport "+rtName+" "+quote(RuntimePath)+"\n", 1)
	s += "\nvar _ = os.Exit\n"
	return [][]byte{[]byte(s)}, nil
}

// versionBefore reports whether a go1.N[.M] language version is before go1.minor.
func versionBefore(lang string, minor int) bool {
	rest, ok := strings.CutPrefix(lang, "go1.")
	if !ok {
		return false
	}
	if i := strings.IndexAny(rest, ".rc"); i >= 0 {
		rest = rest[:i]
	}
	n, err := strconv.Atoi(rest)
	return err == nil && n < minor
}

func quote(s string) string { return `"` + s + `"` }

// Selected reports whether a package is woven: its directory is outside
// GOROOT and the module cache (the main module, the workspace's, local
// replacements), or its path matches one of the patterns (as the go
// command's: "..." matches any string; "std" the standard library). A
// test package (path_test) goes with its package.
func Selected(pkg, dir, goroot string, patterns []string) bool {
	path := strings.TrimSuffix(pkg, "_test")
	for _, p := range patterns {
		if match(p, path) {
			return true
		}
	}
	if dir == "" {
		return false
	}
	for _, root := range []string{goroot, modCache()} {
		if root != "" && (dir == root || strings.HasPrefix(dir, root+string(filepath.Separator))) {
			return false
		}
	}
	return true
}

// pkgDir is the source directory of a compile's files: cgo's rewritten
// files (x.cgo1.go, in the build's work directory) name it in their
// //line directives.
func pkgDir(files []string) string {
	for _, f := range files {
		base := filepath.Base(f)
		switch {
		case strings.HasSuffix(base, ".cgo1.go"):
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(string(b), "\n") {
				if rest, ok := strings.CutPrefix(line, "//line "); ok {
					if i := strings.Index(rest, ".go:"); i > 0 {
						return filepath.Dir(rest[:i+3])
					}
				}
			}
		case cgoFile(base):
		default:
			abs, _ := filepath.Abs(f)
			return filepath.Dir(abs)
		}
	}
	return ""
}

// cgoFile reports whether a compile's file is one cgo made (x.cgo1.go,
// _cgo_gotypes.go, in the build's work directory): the go command ignores
// a package's files named with a leading _, and a file of the user's may
// well have cgo in its name (nocgo.go) in a package without cgo.
func cgoFile(base string) bool {
	return strings.HasPrefix(base, "_cgo_") || strings.HasSuffix(base, ".cgo1.go")
}

func modCache() string {
	if c := os.Getenv("GOMODCACHE"); c != "" {
		return c
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		home, _ := os.UserHomeDir()
		gopath = filepath.Join(home, "go")
	}
	return filepath.Join(strings.Split(gopath, string(filepath.ListSeparator))[0], "pkg", "mod")
}

func match(pattern, path string) bool {
	if pattern == "std" {
		first, _, _ := strings.Cut(path, "/")
		return !strings.Contains(first, ".") && path != "main"
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok && (path == prefix || strings.HasPrefix(path, prefix+"/")) {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "..."); ok {
		return strings.HasPrefix(path, prefix)
	}
	return pattern == path
}
