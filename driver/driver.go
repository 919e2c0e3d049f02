// Package driver runs the user's C compiler the way a compiler driver does, weaving C sources on the way.
package driver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/weave-profiler/weave/api"
	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/runtime"
	"github.com/weave-profiler/weave/weave"
)

// Config is the environment of one weave run.
type Config struct {
	Compiler []string // the real compiler argv, e.g. ["gcc"] or ["ccache", "gcc"]
	Stdout   io.Writer
	Stderr   io.Writer
	Stdin    io.Reader    // the standard input (os.Stdin if nil), for the source "-"
	Verbose  bool         // list functions left unwoven or frameless
	Frames   weave.Frames // the frame policy (--frames, WEAVE_FRAMES)
	// Allocators are the declared allocators (--alloc, --calloc,
	// --realloc, --free).
	Allocators []weave.Allocator
	// Select is the functions to frame (--exclude, --include,
	// --exclude-file, --frame).
	Select weave.Selection
	Strict bool // a file that cannot be woven is an error, not a warning
	// Own are the pointcut patterns of weave cc's own command line (as
	// Options.Pointcut writes them), the ones it warns about when they
	// match nothing in a program it compiles whole (warnUnmatched).
	Own []string
	// ParseTimeout is how long a unit's parse may run (0: parse's
	// default): a parse that does not finish is given up, and weave cc
	// compiles the unit unwoven (WEAVE_PARSE_TIMEOUT).
	ParseTimeout time.Duration

	// portableGuard: weave.Options.PortableGuard, for a command line
	// with -masm=intel or without optimisation (at -O0 gcc spills every
	// operand of the asm fast paths: bigger frames, no time gained).
	portableGuard bool
	// prepareBeside starts cfg.prepare in a goroutine, once (CC).
	prepareBeside func()
	// callGuard: weave.Options.CallGuard, for a command line without
	// optimisation.
	callGuard bool
	// executable: weave.Options.Executable, for a command line whose
	// units certainly go into an executable (cmdline.forExecutable).
	executable bool
	// forCompiler: weave.Options.ForCompiler, for weave cc's units that
	// gcc compiles (cmdline.compilerPrune).
	forCompiler bool
	// asmThunks: weave.Options.AsmThunks, for weave cc's units that gcc
	// compiles (forCompiler) with flags asmThunkFlags allows.
	asmThunks bool
	// coverageFile: weave.Options.CoverageFile (coverageHeader), for a
	// unit compiled for gcov.
	coverageFile string
	// builtins: weave.Options.Builtins, from the compile's flags.
	builtins bool
	// unoptimized: weave.Options.Unoptimized, from the compile's flags.
	unoptimized bool
	// store is the frame store of a weave cc command (nil without), and
	// extern what it held when the command started.
	store  *frameStore
	extern map[string]bool
	// storeRead waits until store and extern are read (CC reads them
	// while the units preprocess).
	storeRead func()
	// runtime finds the runtime files of the command's link, once
	// (CC sets it: runtimeFiles).
	runtime func() (rtFiles, error)
	// runtimeReady is closed once runtime has returned (CC starts it
	// while the units compile).
	runtimeReady chan struct{}
}

// CompilerFromEnv returns $WEAVE_CC split into words, else ["cc"].
func CompilerFromEnv() []string {
	if f := strings.Fields(os.Getenv("WEAVE_CC")); len(f) > 0 {
		return f
	}
	return []string{"cc"}
}

// ParseTimeoutFromEnv returns $WEAVE_PARSE_TIMEOUT (seconds), 0 if unset.
func ParseTimeoutFromEnv() (time.Duration, error) {
	v := os.Getenv("WEAVE_PARSE_TIMEOUT")
	if v == "" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f <= 0 || f > 1e6 {
		return 0, fmt.Errorf("WEAVE_PARSE_TIMEOUT: %q is not a number of seconds", v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// FramesFromEnv returns the frame policy of $WEAVE_FRAMES (default auto).
func FramesFromEnv() (weave.Frames, error) {
	f, err := weave.ParseFrames(os.Getenv("WEAVE_FRAMES"))
	if err != nil {
		return 0, fmt.Errorf("WEAVE_FRAMES: %v", err)
	}
	return f, nil
}

// ExitError is a failure whose exit status the caller should exit with.
// Quiet means the failure has been reported already (by the compiler), so
// the caller should print nothing more.
type ExitError struct {
	Code  int
	Err   error
	Quiet bool
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// WeaveSource preprocesses src with flags, weaves it and returns the woven
// text. Errors are positioned in the original sources. flags are taken to
// be those the text will be compiled with, as weave cc takes its
// command's: without -O, an unoptimised compile (calls take no thunk, C
// guards); without -fno-builtin or -ffreestanding, the compiler's
// builtins (the advice warns as gcc's builtin malloc & co. do).
func (cfg *Config) WeaveSource(src string, flags []string) (*weave.Result, error) {
	if err := cfg.checkCompiler(); err != nil {
		return nil, err
	}
	if src != "-" {
		if err := checkSource(src); err != nil {
			return nil, err
		}
		if err := checkDepFile(parseCmdline(append(append([]string{}, flags...), src))); err != nil {
			return nil, err
		}
	}
	var stderr bytes.Buffer
	flags = append(append([]string{}, flags...), api.Flags(true)...)
	// Each token at its source column, for diagnostics (parse.Respace).
	text, err := parse.PreprocessRespaced(cfg.Compiler, flags, src, &stderr)
	cfg.Stderr.Write(stderr.Bytes())
	if err != nil {
		return nil, &ExitError{Code: 1, Err: fmt.Errorf("%s: preprocessing failed", src)}
	}
	cfg.unoptimized = !optimised(flags)
	cfg.portableGuard, cfg.callGuard = portableGuard(flags), cfg.unoptimized
	cfg.builtins = parseCmdline(flags).builtins()
	cfg.executable = compiledForExecutable(flags)
	return cfg.weaveUnit(src, text, parse.NewDialect(cfg.Compiler, flags), nil)
}

// checkSource tells, before the compiler sees it, why src cannot be a C
// source: missing, a directory (cc1 says "No such file"), or binary (the
// compiler prints a warning per NUL byte: megabytes for an executable).
func checkSource(src string) error {
	st, err := os.Stat(src)
	switch {
	case err != nil:
		return fmt.Errorf("%s: no such file", src)
	case st.IsDir():
		return fmt.Errorf("%s: is a directory", src)
	case !st.Mode().IsRegular():
		return nil // a pipe or device: read once, by the compiler
	}
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("%s: %v", src, errors.Unwrap(err))
	}
	defer f.Close()
	head := make([]byte, 8192)
	n, _ := io.ReadFull(f, head)
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return fmt.Errorf("%s: a binary file (NUL bytes), not C source", src)
	}
	return nil
}

// weaveUnit parses preprocessed text in dialect d and weaves it, listing
// the functions it left unwoven when Verbose. A panic of the parser or the
// weaver is returned as an error: the caller may still build the source
// unwoven.
func (cfg *Config) weaveUnit(src string, text []byte, d parse.Dialect, extern map[string]bool) (res *weave.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, fmt.Errorf("internal error: %v", r)
		}
	}()
	// The declared allocators' prototypes are checked (and found) even
	// where the unit does not call them.
	keep := make([]string, len(cfg.Allocators))
	for i, a := range cfg.Allocators {
		keep[i] = a.Name
	}
	u, err := parse.ParseWithin(src+".i", text, d, cfg.ParseTimeout, keep...)
	var te *parse.TimeoutError
	if errors.As(err, &te) {
		te.Name = src
	}
	if err != nil {
		return nil, err
	}
	res, err = weave.Weave(u, cfg.weaveOptions(extern))
	var ce *weave.ConfigError
	if errors.As(err, &ce) {
		return nil, ce // positioned already; stops the build
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	if cfg.Verbose {
		for _, f := range res.Skipped {
			fmt.Fprintf(cfg.Stderr, "weave: %s:%d: %s not woven: %s\n", f.File, f.Line, f.Name, f.Reason)
		}
		for _, f := range res.Functions {
			if f.Excluded {
				fmt.Fprintf(cfg.Stderr, "weave: %s:%d: %s frameless: excluded\n", f.File, f.Line, f.Name)
			}
			switch {
			case f.SiteFrames:
				fmt.Fprintf(cfg.Stderr, "weave: %s:%d: %s frameless: an allocation leaf, its allocations make its frame\n", f.File, f.Line, f.Name)
			case f.Frameless:
				fmt.Fprintf(cfg.Stderr, "weave: %s:%d: %s frameless: cannot be on an allocation chain\n", f.File, f.Line, f.Name)
			case f.Kept:
				fmt.Fprintf(cfg.Stderr, "weave: %s:%d: %s framed at its calls: its calls that may allocate are through pointers or of such functions, several a run; the first that runs pushes its frame, kept until it returns\n", f.File, f.Line, f.Name)
			case f.CallFrames:
				fmt.Fprintf(cfg.Stderr, "weave: %s:%d: %s framed at its calls: its calls that may allocate are through pointers, of such functions, on cold paths, or at most one a run outside loops\n", f.File, f.Line, f.Name)
			}
		}
		verboseNotes.Do(func() { fmt.Fprint(cfg.Stderr, verboseNote) })
	}
	return res, nil
}

// verboseNote is what weave -v says once about what the reports count.
const verboseNote = `weave: note: a frameless function (--frames auto) has no frame: its time is its caller's,
weave: note:   its calls are not counted (the reports say "not counted", never 0) and it has
weave: note:   no tracepoint; --frame GLOB keeps a frame on the functions it matches, and
weave: note:   --frames=all on every function. One framed at its calls counts those calls (kept: its runs).
weave: note: the counts are the source's: every allocation call the source makes is counted,
weave: note:   one that gcc -O2 deletes too (a malloc/free pair whose block is never used),
weave: note:   so weave may count more allocations than valgrind on the plain -O2 build.
`

var verboseNotes sync.Once

// weaveOptions are the weave's options for a unit (the woven cache's key
// holds them all: wovenCacheKey).
func (cfg *Config) weaveOptions(extern map[string]bool) weave.Options {
	opts := cfg.keyOptions()
	opts.Prologue, opts.Extern = runtime.Header(), extern
	return opts
}

// keyOptions are weaveOptions without the prologue (part of weave's
// binary, made only for a weave: 3% of a compile served from the caches)
// and without extern: what the woven cache keys.
func (cfg *Config) keyOptions() weave.Options {
	return weave.Options{Frames: cfg.Frames, Allocators: cfg.Allocators, Select: cfg.Select,
		PortableGuard: cfg.portableGuard, CallGuard: cfg.callGuard, Executable: cfg.executable,
		ForCompiler: cfg.forCompiler, CoverageFile: cfg.coverageFile, Builtins: cfg.builtins, Unoptimized: cfg.unoptimized,
		AsmThunks: cfg.asmThunks}
}

// weaveText weaves the preprocessed text of src for the compile step and
// returns the text to compile. Text woven already (weave's own output fed
// back) is returned as it is. The woven text starts with linemarkers that
// name src's main file, so that the object's file symbol and debug
// information name it (not the temporary file), and the runtime interface
// as a system header.
// The result (nil for text woven already) tells which patterns it matched.
func (cfg *Config) weaveText(src string, text []byte, d parse.Dialect, extern map[string]bool) ([]byte, *weave.Result, error) {
	if bytes.Contains(text, []byte("__weave_enter_slow(const struct __weave_fn *fn)")) {
		return text, nil, nil
	}
	res, err := cfg.weaveUnit(src, text, d, extern)
	if err != nil {
		return nil, nil, err
	}
	return nameMainFile(res.Text, mainFile(text), cfg.coverageFile), res, nil
}

// nameMainFile wraps the prologue of woven text (everything before its
// first linemarker) in linemarkers: the main file first, so that it names
// the translation unit, then the prologue as a system header "<weave>"
// included from it, starting with weave's #ident (weaveIdent; in a
// system header, -pedantic says nothing of it). In a coverage build
// (header: coverageHeader's file) the prologue is that file's text.
func nameMainFile(text []byte, main, header string) []byte {
	end := -1
	for i := 0; i+2 < len(text); {
		if (i == 0 || text[i-1] == '\n') && text[i] == '#' && text[i+1] == ' ' && text[i+2] >= '0' && text[i+2] <= '9' {
			end = i
			break
		}
		k := bytes.IndexByte(text[i:], '\n')
		if k < 0 {
			break
		}
		i += k + 1
	}
	if main == "" || end < 0 {
		return text
	}
	var b bytes.Buffer
	b.Grow(len(text) + 2*len(main) + 32)
	if header != "" {
		fmt.Fprintf(&b, "# 0 %s\n# 1 %s 1 3\n", main, weave.CString(header))
		b.Write(coverageText(text[:end]))
	} else {
		fmt.Fprintf(&b, "# 0 %s\n# 1 \"<weave>\" 1 3\n%s", main, weaveIdent())
		b.Write(text[:end])
	}
	fmt.Fprintf(&b, "# 1 %s 2\n", main)
	b.Write(text[end:])
	return b.Bytes()
}

// mainFile returns the quoted file name of the first linemarker of
// preprocessed text, or "".
func mainFile(text []byte) string {
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte{'\n'})
		if len(line) == 0 {
			continue
		}
		if line[0] != '#' {
			return ""
		}
		f := bytes.Fields(line[1:])
		if len(f) >= 2 && f[0][0] >= '0' && f[0][0] <= '9' && f[1][0] == '"' {
			q := bytes.TrimSpace(line[bytes.IndexByte(line, '"'):])
			if i := bytes.LastIndexByte(q, '"'); i > 0 {
				return string(q[:i+1])
			}
		}
	}
	return ""
}

// WeaveFile weaves src into out (the `weave -o out.c prog.c` path). out is
// written atomically; on any error nothing is left behind.
func (cfg *Config) WeaveFile(src, out string, flags []string) error {
	res, err := cfg.WeaveSource(src, flags)
	if err != nil {
		return err
	}
	for _, p := range res.Unmatched {
		fmt.Fprintf(cfg.Stderr, "weave: warning: %s: %s matches nothing in this translation unit\n", src, p)
	}
	if out == "" || out == "-" {
		_, err := cfg.Stdout.Write(res.Text)
		return err
	}
	return WriteFileAtomic(out, res.Text)
}

// WriteFileAtomic writes data to path as WriteAtomic does.
func WriteFileAtomic(path string, data []byte) error {
	return WriteAtomic(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// run runs argv with the configured output streams and returns its exit
// status as an *ExitError when it fails.
// The compiler has reported the failure: the error is Quiet.
func (cfg *Config) run(argv []string) error {
	argv, cleanup, err := responseFileIfLong(argv)
	if err != nil {
		return err
	}
	defer cleanup()
	cmd := command(argv[0], argv[1:]...)
	cmd.Stdin = cfg.stdin()
	cmd.Stdout = cfg.Stdout
	cmd.Stderr = cfg.Stderr
	err = exitError(argv[0], runChild(cmd))
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code != 127 {
		ee.Quiet = true
	}
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// portableGuard tells whether a compile with flags should frame with
// weave.h's C fast paths: under -masm=intel (the asm ones are AT&T
// syntax), or without optimisation.
func portableGuard(flags []string) bool {
	return !optimised(flags) || slices.Contains(flags, "-masm=intel")
}

// optimised tells whether a compile with flags optimises (its last -O
// option is not -O0).
func optimised(flags []string) bool {
	opt := false
	for _, f := range flags {
		if strings.HasPrefix(f, "-O") {
			opt = f != "-O0"
		}
	}
	return opt
}

// asmThunkFlags reports whether a gcc compile with flags may take call
// thunks as assembly (weave.Options.AsmThunks): not one making LTO
// bytecode (LTO does not see the thunk's call of the callee: it dropped
// the callee), keeping frame pointers (-pg too: the thunk makes none),
// splitting stacks (it checks none), with CFI written by gcc itself
// rather than the assembler's directives (the thunk's), or changing what
// its code assumes: the code model, the calling convention, the
// registers, the return.
func asmThunkFlags(flags []string) bool {
	var lto, cmodel, ret, fp bool // the last of each kind of flag decides
	for _, f := range flags {
		switch {
		case f == "-pg" || f == "-fsplit-stack" || strings.HasPrefix(f, "-ffixed-") ||
			strings.HasPrefix(f, "-fcall-used-") || strings.HasPrefix(f, "-fcall-saved-") ||
			strings.HasPrefix(f, "-mharden-sls") || f == "-mabi=ms" || f == "-fno-dwarf2-cfi-asm":
			return false
		case strings.HasPrefix(f, "-flto") || f == "-fno-lto":
			lto = f != "-fno-lto" && f != "-flto=none"
		case strings.HasPrefix(f, "-mcmodel="):
			cmodel = f != "-mcmodel=small"
		case strings.HasPrefix(f, "-mfunction-return="):
			ret = f != "-mfunction-return=keep"
		case f == "-fno-omit-frame-pointer" || f == "-fomit-frame-pointer":
			fp = f == "-fno-omit-frame-pointer"
		}
	}
	return !lto && !cmodel && !ret && !fp
}
