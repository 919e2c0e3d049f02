// Package driver runs the user's C compiler the way a compiler driver does, weaving C sources on the way.
package driver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"weave/parse"
	"weave/runtime"
	"weave/weave"
)

// Config is the environment of one weave run.
type Config struct {
	Compiler []string // the real compiler argv, e.g. ["gcc"] or ["ccache", "gcc"]
	Stdout   io.Writer
	Stderr   io.Writer
	Verbose  bool // list functions left unwoven
	Strict   bool // a file that cannot be woven is an error, not a warning
}

// CompilerFromEnv returns $WEAVE_CC split into words, else ["cc"].
func CompilerFromEnv() []string {
	if f := strings.Fields(os.Getenv("WEAVE_CC")); len(f) > 0 {
		return f
	}
	return []string{"cc"}
}

// ExitError is a failure whose exit status the caller should exit with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// WeaveSource preprocesses src with flags, weaves it and returns the woven
// text. Errors are positioned in the original sources.
func (cfg *Config) WeaveSource(src string, flags []string) (*weave.Result, error) {
	if src != "-" {
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("%s: no such file", src)
		}
	}
	var stderr bytes.Buffer
	text, err := parse.Preprocess(cfg.Compiler, flags, src, &stderr)
	cfg.Stderr.Write(stderr.Bytes())
	if err != nil {
		return nil, &ExitError{Code: 1, Err: fmt.Errorf("%s: preprocessing failed", src)}
	}
	u, err := parse.Parse(src+".i", text)
	if err != nil {
		return nil, err
	}
	res, err := weave.Weave(u, weave.Options{Prologue: runtime.Header()})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	if cfg.Verbose {
		for _, f := range res.Skipped {
			fmt.Fprintf(cfg.Stderr, "weave: %s:%d: %s not woven: %s\n", f.File, f.Line, f.Name, f.Reason)
		}
	}
	return res, nil
}

// WeaveFile weaves src into out (the `weave -o out.c prog.c` path). out is
// written atomically; on any error nothing is left behind.
func (cfg *Config) WeaveFile(src, out string, flags []string) error {
	res, err := cfg.WeaveSource(src, flags)
	if err != nil {
		return err
	}
	if out == "" || out == "-" {
		_, err := cfg.Stdout.Write(res.Text)
		return err
	}
	return WriteFileAtomic(out, res.Text)
}

// WriteFileAtomic writes data to a temporary file beside path and renames
// it into place.
func WriteFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err = f.Write(data); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// run runs argv with the configured output streams and returns its exit
// status as an *ExitError when it fails.
func (cfg *Config) run(argv []string) error {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = os.Stdin
	cmd.Stdout = cfg.Stdout
	cmd.Stderr = cfg.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return &ExitError{Code: ee.ExitCode(), Err: fmt.Errorf("%s failed: exit status %d", filepath.Base(argv[0]), ee.ExitCode())}
		}
		return &ExitError{Code: 127, Err: err}
	}
	return nil
}

// CC runs a compiler command line (without argv[0]) with every C source
// woven and the runtime linked in.
func (cfg *Config) CC(args []string) error {
	args = expandResponseFiles(args)
	c := parseCmdline(args)
	cc := cfg.Compiler
	nC := 0
	for _, in := range c.inputs {
		if in.lang == "c" {
			nC++
		}
	}
	if c.pre || c.depOnly || len(c.inputs) == 0 || (nC == 0 && (c.compile || c.asm)) {
		return cfg.run(append(append([]string{}, cc...), args...)) // nothing to weave
	}
	tmp, err := os.MkdirTemp("", "weave-cc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	var linkInputs []string
	for i, in := range c.inputs {
		if in.lang != "c" {
			linkInputs = append(linkInputs, in.name)
			continue
		}
		var out string
		switch {
		case (c.compile || c.asm) && c.output != "" && nC == 1:
			out = c.output
		case c.compile:
			out = objectName(in.name, ".o")
		case c.asm:
			out = objectName(in.name, ".s")
		default:
			out = filepath.Join(tmp, fmt.Sprintf("%d-%s", i, objectName(in.name, ".o")))
			linkInputs = append(linkInputs, out)
		}
		if err := cfg.compileOne(c, in.name, out, tmp); err != nil {
			return err
		}
	}
	if c.compile || c.asm {
		return cfg.compileOthers(c)
	}
	link := append([]string{}, cc...)
	for _, f := range c.flags {
		link = append(link, f)
	}
	link = append(link, linkInputs...)
	if !c.shared {
		rt, err := runtime.Object(cc, c.targetFlags())
		if err != nil {
			return fmt.Errorf("building the runtime: %v", err)
		}
		link = append(link, rt, "-pthread")
	}
	if c.output != "" {
		link = append(link, "-o", c.output)
	}
	return cfg.run(link)
}

// compileOthers compiles the inputs of a -c or -S command line that are
// not C (assembly, C++, ...) with the real compiler, untouched.
func (cfg *Config) compileOthers(c *cmdline) error {
	var others []string
	for _, in := range c.inputs {
		if in.lang != "c" {
			others = append(others, in.name)
		}
	}
	if len(others) == 0 {
		return nil
	}
	argv := append(append(append([]string{}, cfg.Compiler...), c.flags...), others...)
	if c.output != "" && len(c.inputs) == 1 {
		argv = append(argv, "-o", c.output)
	}
	return cfg.run(argv)
}

// compileOne weaves src and compiles it to out (an object, or assembly
// under -S). If weaving fails the source is compiled unwoven, with a
// warning, unless cfg.Strict.
func (cfg *Config) compileOne(c *cmdline, src, out, tmp string) error {
	mode := "-c"
	if c.asm && !c.compile {
		mode = "-S"
	}
	pflags := c.preprocessFlags()
	if c.depGen { // dependencies come from the -E step, named after out
		if c.depFile == "" {
			pflags = append(pflags, "-MF", strings.TrimSuffix(out, filepath.Ext(out))+".d")
		}
		if !c.depTarg {
			pflags = append(pflags, "-MT", out)
		}
	}
	res, err := cfg.WeaveSource(src, pflags)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) { // the compiler rejected the source itself
			return ee
		}
		if cfg.Strict {
			return err
		}
		fmt.Fprintf(cfg.Stderr, "weave: warning: %s: not woven: %s\n", src, firstLine(err.Error()))
		argv := append(append([]string{}, cfg.Compiler...), c.flags...)
		argv = removeFlag(argv, "-c", "-S")
		return cfg.run(append(argv, mode, src, "-o", out))
	}
	woven := filepath.Join(tmp, objectName(src, ".woven.i"))
	if err := os.WriteFile(woven, res.Text, 0o644); err != nil {
		return err
	}
	argv := append(append([]string{}, cfg.Compiler...), c.compileFlags()...)
	return cfg.run(append(argv, "-x", "cpp-output", mode, woven, "-o", out))
}

func removeFlag(argv []string, flags ...string) []string {
	var r []string
	for _, a := range argv {
		keep := true
		for _, f := range flags {
			if a == f {
				keep = false
			}
		}
		if keep {
			r = append(r, a)
		}
	}
	return r
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
