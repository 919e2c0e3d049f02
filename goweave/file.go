package goweave

import (
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
)

// FileResult is a woven file, with a note when the escape analysis could
// not be had (every allocation expression is then counted).
type FileResult struct {
	Out  []byte
	Note string
}

// WeaveFile weaves one file (`weave -o out.go in.go`). It is type-checked
// alone, or with the other files of its package in its directory when it
// needs them; the escape analysis comes from compiling the same files with
// -gcflags=-m. allFrames gives every function a frame (--frames all).
func WeaveFile(name string, lineDirectives, allFrames bool) (*FileResult, error) {
	abs, err := filepath.Abs(name)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		return nil, err
	}
	srcs := []Source{{abs, src}}
	if _, err := Parse(token.NewFileSet(), srcs); err != nil {
		return nil, err
	}
	opt := Options{ImportPath: "main", LineDirectives: lineDirectives, Sizes: sizes(), AllFrames: allFrames}
	opt.Dir, _ = os.Getwd()
	try := func(srcs []Source) ([][]byte, string, error) {
		fset := token.NewFileSet()
		opt.Importer = importer.ForCompiler(fset, "gc", nil)
		note := ""
		opt.Escapes, opt.Inlinable, note = escapes(filepath.Dir(abs), srcs)
		if f, err := parser.ParseFile(fset, abs, src, parser.PackageClauseOnly); err == nil && f.Name.Name != "main" {
			opt.ImportPath = f.Name.Name
		}
		out, err := Package(srcs, opt)
		return out, note, err
	}
	out, note, err := try(srcs)
	if err != nil {
		if more := siblings(abs); len(more) > 0 {
			if out2, note2, err2 := try(append(srcs, more...)); err2 == nil {
				out, note, err = out2, note2, nil
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if out[0] == nil {
		out[0] = src
	}
	return &FileResult{Out: out[0], Note: note}, nil
}

// siblings returns the other files of name's package in its directory.
func siblings(name string) []Source {
	dir := filepath.Dir(name)
	pkg, err := build.ImportDir(dir, 0)
	if err != nil {
		return nil
	}
	var out []Source
	for _, f := range pkg.GoFiles {
		p := filepath.Join(dir, f)
		if p == name {
			continue
		}
		if b, err := os.ReadFile(p); err == nil {
			out = append(out, Source{p, b})
		}
	}
	return out
}

// escapes compiles the files with -gcflags=-m and returns the escape
// analysis and the functions the compiler can inline, or nil and why not.
func escapes(dir string, srcs []Source) (esc map[Escape]bool, inl map[Pos]bool, note string) {
	args := []string{"build", "-gcflags=-m", "-o", os.DevNull}
	for _, s := range srcs {
		args = append(args, s.Name)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, nil, "no escape analysis (go build -gcflags=-m failed): every allocation expression is counted"
	}
	return ParseEscapes(out, dir), ParseInlinable(out, dir), ""
}

func sizes() types.Sizes {
	arch := os.Getenv("GOARCH")
	if arch == "" {
		arch = runtime.GOARCH
	}
	return types.SizesFor("gc", arch)
}
