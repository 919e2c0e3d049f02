package driver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/weave-profiler/weave/api"
	"github.com/weave-profiler/weave/internal/samefile"
	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/weave"
)

// launchers are the compiler launchers WEAVE_CC may start with (ccache's
// convention: `ccache gcc`). The -E step that feeds the weaver runs the
// compiler without them: it is local and not worth caching.
var launchers = map[string]bool{
	"ccache": true, "distcc": true, "sccache": true, "icecc": true, "buildcache": true, "pump": true,
}

// preprocessedLang are the flags that tell the compiler the woven .i
// file is preprocessed C. None: its suffix says so to gcc and clang, and
// to the launchers (icecream refuses to distribute -x cpp-output). For
// gcc under sccache, -x c -fpreprocessed, the same compile: sccache
// before 0.13 caches no .i file, and preprocesses a C one first, which
// under -fpreprocessed leaves the text as it is.
func (cfg *Config) preprocessedLang() []string {
	cc := cfg.bareCompiler()
	for _, w := range cfg.Compiler[:len(cfg.Compiler)-len(cc)] {
		if filepath.Base(w) == "sccache" && !strings.Contains(filepath.Base(cc[0]), "clang") {
			return []string{"-x", "c", "-fpreprocessed"}
		}
	}
	return nil
}

// bareCompiler returns the compiler without its launchers.
func (cfg *Config) bareCompiler() []string {
	cc := cfg.Compiler
	for len(cc) > 1 && launchers[filepath.Base(cc[0])] {
		cc = cc[1:]
	}
	return cc
}

// CC runs a compiler command line (without argv[0]) as the real compiler
// would, with every C source woven and the runtime linked in. Command
// lines with nothing to weave (-E, -M, --version, only non-C inputs under
// -c, ...) go to the real compiler unchanged.
//
// A source that cannot be woven is compiled unwoven, with the one-line
// warning "weave: warning: file.c: not woven: reason" (an error under
// cfg.Strict). The compiler's own errors are reported as the compiler
// reports them; the returned *ExitError is then Quiet.
func (cfg *Config) CC(args []string) error {
	parse.PaceGC()
	go warmExec()
	defer asked.Wait()
	defer behind.Wait()
	if err := cfg.checkCompiler(); err != nil {
		return err
	}
	c := parseCmdline(expandResponseFiles(args))
	if err := samefile.Check(c.output, c.inputNames()...); err != nil {
		return err
	}
	if err := checkDepFile(c); err != nil {
		return err
	}
	cfg.unoptimized = !optimised(c.compileFlags())
	cfg.portableGuard, cfg.callGuard = portableGuard(c.compileFlags()), cfg.unoptimized
	cfg.executable = c.forExecutable()
	cfg.forCompiler = c.compilerPrune() && isGCC(cfg.bareCompiler()[0])
	cfg.asmThunks = cfg.forCompiler && asmThunkFlags(c.compileFlags())
	cfg.builtins = c.builtins()
	if c.coverage() && c.woven() > 0 {
		cfg.coverageFile = coverageHeader()
	}
	if c.passthrough || len(c.inputs) == 0 || c.probe() ||
		(c.stage != stageLink && (c.woven() == 0 || (c.output != "" && len(c.inputs) > 1))) ||
		(c.stage == stageLink && c.woven() == 0 && (c.relocatable || c.nostdlib)) {
		return cfg.passThrough(c, args)
	}

	if c.compiles() {
		cfg.warnCacheInFront()
	}
	cfg.runtime = sync.OnceValues(func() (rtFiles, error) { return cfg.runtimeFiles(c) })
	if c.stage == stageLink && !c.compiles() {
		return cfg.linkOnly(c)
	}
	cfg.prepareBeside = func() {}
	if c.woven() > 0 {
		// Once the first -E step has started (its start 0.5 ms later
		// with this beside it), or before a weave of a text needing no
		// -E (jobText); not left running (its predefined-macro cache
		// file half written) if weave ends first.
		var prepared sync.WaitGroup
		cfg.prepareBeside = sync.OnceFunc(func() { prepared.Go(func() { cfg.prepare(c) }) })
		defer prepared.Wait()
	}
	var sc scratch
	defer sc.remove()
	var stdin []byte
	for _, in := range c.inputs {
		if in.name == "-" && stdin == nil {
			var err error
			if stdin, err = io.ReadAll(cfg.stdin()); err != nil {
				return err
			}
		}
	}

	// Compile every input that needs it, in parallel, reporting in order.
	jobs, objects := c.jobs(sc.name())
	// The frame store and the link's runtime files are read while the
	// units preprocess (each unit waits for the store before its weave).
	var storeRead sync.WaitGroup
	if cfg.Frames == weave.FramesAuto {
		// Read once for all the command's units: what one of them
		// writes does not reach the others, whichever finishes first.
		storeRead.Go(func() {
			if cfg.store = openFrameStore(); cfg.store != nil {
				cfg.extern = cfg.store.load()
			}
		})
	}
	cfg.storeRead = storeRead.Wait
	if c.stage == stageLink {
		cfg.runtimeReady = make(chan struct{})
		go func() {
			cfg.runtime()
			close(cfg.runtimeReady)
		}()
		defer cfg.runtime() // no build of it left running if a compile fails
	}
	if j := cfg.oneStepJob(c, jobs); j != nil {
		j.oneStep = true
		j.startLink = func(text []byte) *earlyLink { return cfg.startEarlyLink(c, j, objects, &sc, text) }
	}
	defer func() { // an early link not given its text (earlyLink)
		for _, j := range jobs {
			if e := j.takeLink(); e != nil {
				e.abort()
			}
		}
	}()
	cfg.runJobs(c, jobs, &sc, stdin)
	var failed error
	for _, j := range jobs {
		if j == nil {
			continue
		}
		cfg.Stderr.Write(j.stderr.Bytes())
		if j.err != nil && failed == nil {
			failed = j.err
		}
	}
	if failed != nil || c.stage != stageLink {
		return failed
	}
	cfg.warnUnmatched(c, jobs)
	for _, j := range jobs {
		if j != nil && j.woven != "" {
			return cfg.oneStepLink(c, j, objects, &sc)
		}
	}
	return cfg.link(c, objects, &sc)
}

// passThrough gives a command with nothing to weave to the compiler as
// it is: the compiler in weave's place (configure's probes, -E, -M: a
// probe's compile and link spent about 1 ms of CPU in the weave process
// waiting for it), but for --help, which weave's own flags follow
// (cmd/weave).
func (cfg *Config) passThrough(c *cmdline, args []string) error {
	if err := cfg.warnUnusedInputs(c); err != nil {
		return err
	}
	argv := append(append([]string{}, cfg.Compiler...), args...)
	if (c.passthrough || c.probe()) && len(c.inputs) > 0 && !c.valueMissing {
		argv = append(argv, api.Flags(false)...) // -E, -fsyntax-only & co. find weave_api.h
	}
	if !slices.Contains(args, "--help") && !slices.Contains(args, "-help") {
		cfg.execCompiler(argv)
	}
	return cfg.run(argv)
}

// jobs returns the command's compile jobs, one per input that needs it
// (nil for the others), each with its output; objects maps the inputs
// compiled for the link to their objects (in tmp, or kept by -save-temps).
func (c *cmdline) jobs(tmp string) ([]*job, map[*input]string) {
	jobs := make([]*job, len(c.inputs))
	objects := map[*input]string{}
	for i, in := range c.inputs {
		if in.kind == inOther && c.stage == stageLink {
			continue // the link step compiles it (.S, .cc) or takes it as it is
		}
		j := &job{in: in, n: i}
		switch {
		case c.stage != stageLink && c.output != "":
			j.out = c.output
		case c.stage == stageCompile:
			j.out = outputName(in.name, ".o")
		case c.stage == stageAsm:
			j.out = outputName(in.name, ".s")
		case c.saveTemps():
			j.out = c.tempsBase(in, "") + ".o" // where gcc keeps a linked unit's object
			objects[in] = j.out
		default:
			j.out = filepath.Join(tmp, fmt.Sprintf("%d-%s", i, outputName(in.name, ".o")))
			objects[in] = j.out
		}
		jobs[i] = j
	}
	return jobs, objects
}

// A job compiles one input of the command line.
type job struct {
	in     *input
	n      int    // its index among the inputs
	out    string // the object (or assembly) to write
	stderr bytes.Buffer
	err    error
	// res is the woven unit (nil if not woven here), whose Unmatched
	// warnUnmatched reads.
	res *weave.Result
	// oneStep: the woven text is compiled by the link command
	// (oneStepLink); woven is its file, finish compiles it on its own
	// (and saves the unit's summary) if that link fails.
	oneStep bool
	woven   string
	pp      []byte // the -E step's diagnostics
	finish  func()
	save    func()
	// startLink starts the one-step link before the weave (earlyLink),
	// given the preprocessed text; link waits for that start and returns
	// the link (takeLink), and wovenText is what it is to compile.
	startLink func(text []byte) *earlyLink
	link      func() *earlyLink
	wovenText []byte
	// writeWoven writes wovenText to the woven file, where the compile or
	// link of it needs it (written already unless oneStep).
	writeWoven func() error
	// stage writes the unit's summary but for its rename (frameStore.stage),
	// while the early link runs.
	stage func() func(ok bool) bool
}

// startLinkBeside starts j's early link (startLink) in a goroutine, unless
// it is started: the child's start is not the weave's to wait for.
func (j *job) startLinkBeside(text []byte) {
	if j.link != nil {
		return
	}
	started := make(chan *earlyLink, 1)
	go func() { started <- j.startLink(text) }()
	j.link = sync.OnceValue(func() *earlyLink { return <-started })
}

// dropLink aborts j's early link unless the woven text is to go to it.
func (j *job) dropLink() {
	if j.woven == "" {
		if e := j.takeLink(); e != nil {
			e.abort()
		}
	}
}

// takeLink returns j's early link once started (nil if there is none),
// which is then the caller's.
func (j *job) takeLink() *earlyLink {
	if j == nil || j.link == nil {
		return nil
	}
	e := j.link()
	j.link = nil
	return e
}

// warnUnmatched warns about the patterns of weave cc's own command line
// (cfg.Own) that match nothing in any of the sources of a program it
// compiles and links whole (every input a C source, all woven; not a
// build system's probe). A -c step, a link with objects, and the patterns
// of the config file and WEAVE_FLAGS (the project's, which one program of
// it may well not use) get none: one translation unit cannot know about
// the others.
func (cfg *Config) warnUnmatched(c *cmdline, jobs []*job) {
	if len(cfg.Own) == 0 || c.relocatable || isProbe(c.output) {
		return
	}
	count := map[string]int{}
	for _, j := range jobs {
		if j == nil || j.res == nil {
			return // an object, or a source not woven: it may match there
		}
		for _, p := range j.res.Unmatched {
			count[p]++
		}
	}
	for _, p := range cfg.Own {
		if count[p] == len(jobs) {
			fmt.Fprintf(cfg.Stderr, "weave: warning: %s matches nothing in the program's sources\n", p)
		}
	}
}

// warnUnusedInputs says why a compile (-c, -S) of one C source with -o
// and other inputs, which the compiler does not use, goes unwoven: most
// often the compiler given twice, as a CMake launcher list "weave;cc"
// makes (weave cc /usr/bin/cc -c x.c -o x.o), where the only other sign
// was gcc's "linker input file unused". An error under cfg.Strict.
func (cfg *Config) warnUnusedInputs(c *cmdline) error {
	if c.passthrough || c.probe() || c.stage == stageLink || c.output == "" || c.woven() != 1 || len(c.inputs) < 2 {
		return nil
	}
	var src string
	var others []string
	for _, in := range c.inputs {
		if in.kind == inOther {
			others = append(others, in.name)
		} else {
			src = displayName(in.name)
		}
	}
	msg := fmt.Sprintf("%s: not woven: -o with inputs the compiler does not use (%s); was the compiler named twice?", src, strings.Join(others, " "))
	if cfg.Strict {
		return &ExitError{Code: 1, Err: errors.New("error: " + msg)}
	}
	fmt.Fprintf(cfg.Stderr, "weave: warning: %s\n", msg)
	return nil
}

// isProbe reports whether an output is a build system's probe program
// (autoconf's conftest, CMake's cmTC_*), which runtime/save.c leaves
// silent too.
func isProbe(output string) bool {
	b := filepath.Base(output)
	return b == "conftest" || b == "conftest.exe" || strings.HasPrefix(b, "cmTC_")
}

// probe reports whether the command builds a build system's probe:
// autoconf's conftest.c, conftest.o, conftest, CMake's try-compiles (an
// output under cmTC_*.dir, or cmTC_*), Meson's and SCons's checks. weave
// cc hands those to the real compiler unwoven, with weave_api.h on the
// include path: a probe asks what the compiler and the system do, which
// weaving does not change (a woven program behaves as the unwoven one,
// and a probe's profile is never written: runtime/save.c), and
// configure's hundreds of probes would pay the weave's preprocessing,
// parse and runtime link each.
// If the woven build of a real unit fails where its probe did not, that
// unit falls back to an unwoven compile as any other would.
func (c *cmdline) probe() bool {
	out := c.output
	if out == "" && c.stage == stageCompile && len(c.inputs) == 1 {
		out = outputName(c.inputs[0].name, ".o")
	}
	if isProbe(out) || filepath.Base(out) == "conftest.o" || filepath.Base(out) == "conftest.obj" ||
		strings.Contains(filepath.ToSlash(out), "/cmTC_") || checkProgram(out) {
		return !c.linksWoven()
	}
	for _, in := range c.inputs {
		if filepath.Base(in.name) == "conftest.c" && (out == "" || out == "a.out") {
			return !c.linksWoven()
		}
	}
	return false
}

// warnCacheInFront warns when a compiler cache runs weave (CC="ccache
// weave cc", or a CMake project's ccache launcher in front of
// CC=weave-cc). It keys an object by weave's command line and the
// source's text alone, so what else decides the woven text (WEAVE_FRAMES,
// WEAVE_FLAGS, WEAVE_CC, weave.conf) it cannot see: change one, and it
// serves objects woven before. The cache stores the warning with the
// object and prints it again each time it serves it. Behind weave
// (WEAVE_CC="ccache gcc") it is keyed by the woven text itself.
func (cfg *Config) warnCacheInFront() {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", os.Getppid()))
	if err != nil {
		return
	}
	if name := filepath.Base(exe); name == "ccache" || name == "sccache" {
		fmt.Fprintf(cfg.Stderr, "weave: warning: %s runs weave: it cannot see WEAVE_FRAMES, WEAVE_FLAGS, WEAVE_CC or weave.conf, and serves objects woven under the settings of their first build; run it behind weave instead: WEAVE_CC=\"%s cc\" (docs/building.md)\n", name, name)
	}
}

// checkProgram reports whether an output is one of Meson's or SCons's
// checks, which both name by the directories around it: the output's
// absolute path (meson-private is the sanity check's working directory).
func checkProgram(out string) bool {
	abs, err := filepath.Abs(out)
	if err != nil {
		return false
	}
	return mesonProbe(abs) || sconsProbe(abs)
}

// mesonProbe reports whether an absolute output path is one of Meson's:
// its compiler's sanity check (meson-private/sanitycheckc.exe, which it
// runs in the directory meson was started in, the user's source tree) or
// a check's (meson-private/tmpXXXXXXXX/output.exe or output.obj; cc.run
// and a native cc.sizeof run the program there too).
func mesonProbe(abs string) bool {
	dir := filepath.Dir(abs)
	switch filepath.Base(abs) {
	case "sanitycheckc.exe":
		return filepath.Base(dir) == "meson-private"
	case "output.exe", "output.obj":
		return strings.HasPrefix(filepath.Base(dir), "tmp") && filepath.Base(filepath.Dir(dir)) == "meson-private"
	}
	return false
}

// sconsProbe reports whether an absolute output path is an SCons
// Configure check's (.sconf_temp/conftest_HASH_0 and its objects; TryRun
// runs the program in the SConstruct's directory).
func sconsProbe(abs string) bool {
	return strings.HasPrefix(filepath.Base(abs), "conftest_") && filepath.Base(filepath.Dir(abs)) == ".sconf_temp"
}

// linksWoven reports whether a link's objects or static libraries (named,
// or -lNAME found in a -L directory of the command line) hold woven code,
// which needs the runtime: gnulib's wchar.h check links conftest from the
// woven conftest1.o and conftest2.o, a CMake try-compile may link the
// project's woven static library.
func (c *cmdline) linksWoven() bool {
	if c.stage != stageLink {
		return false
	}
	var dirs, libs []string
	for _, a := range c.args {
		switch {
		case a.in != nil && a.in.kind == inOther:
			libs = append(libs, a.in.name)
		case a.flag == "-L" && a.sep:
			dirs = append(dirs, a.value)
		case strings.HasPrefix(a.flag, "-L"):
			dirs = append(dirs, a.flag[2:])
		}
	}
	for _, a := range c.args {
		name := a.flag[min(len(a.flag), 2):]
		if a.flag == "-l" && a.sep {
			name = a.value
		} else if a.in != nil || !strings.HasPrefix(a.flag, "-l") {
			continue
		}
		for _, d := range dirs {
			libs = append(libs, filepath.Join(d, "lib"+name+".a"))
		}
	}
	return slices.ContainsFunc(libs, holdsWoven)
}

// holdsWoven reports whether a file names one of the runtime's symbols.
func holdsWoven(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	mark := []byte("__weave_")
	buf := make([]byte, 1<<20)
	keep := 0 // the end of the last chunk, which a mark may straddle
	for {
		n, err := io.ReadFull(f, buf[keep:])
		if bytes.Contains(buf[:keep+n], mark) {
			return true
		}
		if err != nil {
			return false
		}
		keep = copy(buf, buf[keep+n-len(mark)+1:keep+n])
	}
}

// runJobs runs the jobs, as many at a time as there are CPUs.
func (cfg *Config) runJobs(c *cmdline, jobs []*job, sc *scratch, stdin []byte) {
	n := 0
	for _, j := range jobs {
		if j != nil {
			n++
		}
	}
	par := min(goruntime.NumCPU(), n)
	if c.depGen && (c.depFile != "" || c.stage == stageLink && c.output != "") {
		par = 1 // one dependency file for all: the last source's wins, as with gcc
	}
	sem := make(chan struct{}, max(par, 1))
	var wg sync.WaitGroup
	for _, j := range jobs {
		if j == nil {
			continue
		}
		if n == 1 {
			cfg.compile(c, j, sc, stdin)
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			cfg.compile(c, j, sc, stdin)
			<-sem
		}()
	}
	wg.Wait()
}

// compile compiles one input under -c or -S, or to a temporary object
// for the link step. The scratch directory is made first, but for the
// job of a one-step link, which may write nothing there.
func (cfg *Config) compile(c *cmdline, j *job, sc *scratch, stdin []byte) {
	in := j.in
	if !j.oneStep {
		if _, j.err = sc.path(); j.err != nil {
			return
		}
	}
	if in.kind == inOther {
		j.err = cfg.runTo(&j.stderr, nil, cfg.otherArgv(c, in, j.out))
		return
	}
	var stdinText []byte
	if in.name == "-" {
		stdinText = stdin
	}
	deps := []string(nil)
	if in.kind == inC {
		deps = c.depGenFlags(in.name, j.out)
	}

	var ppErr bytes.Buffer
	if j.startLink != nil {
		defer j.dropLink()
	}
	text, reason := cfg.jobText(c, j, deps, stdinText, &ppErr)

	// Weave and compile the woven text.
	if reason == "" {
		d := parse.NewDialect(cfg.bareCompiler(), c.preprocessFlags())
		cfg.storeRead()
		store, extern := cfg.store, cfg.extern
		storeOut := j.out
		if c.stage == stageLink {
			storeOut = "" // a temporary object: the source names the unit
		}
		woven, res, err := cfg.weaveCached(displayName(in.name), text, d, extern)
		var ce *weave.ConfigError
		if errors.As(err, &ce) {
			j.err = &ExitError{Code: 1, Err: err}
			return
		}
		if err == nil && c.hidesSymbols() {
			woven = append(woven[:len(woven):len(woven)], curatedMark...)
		}
		if err != nil {
			reason = firstLine(err.Error())
		} else {
			wfile := filepath.Join(sc.name(), fmt.Sprintf("%d-%s", j.n, outputName(in.name, ".woven.i")))
			stage := func() func(bool) bool {
				if store != nil && res != nil && res.Summary != nil && in.name != "-" {
					return store.stage(in.name, storeOut, res.Summary)
				}
				return func(bool) bool { return false }
			}
			save := func() { stage()(true) }
			ccArgv := append(append(append(append([]string{}, cfg.Compiler...), c.compileFlags()...),
				cfg.preprocessedLang()...), modeFlag(c))
			objKey := ""
			if c.stage != stageAsm && j.out != "-" {
				objKey = cfg.objKey(ccArgv, woven, wfile)
			}
			if objKey != "" {
				if diags, ok := loadObject(objKey, j.out, sc); ok {
					j.res = res
					j.stderr.Write(ppErr.Bytes())
					j.stderr.Write(diags)
					save()
					return
				}
				// The object is to be cached, but for a command that
				// compiles and links one file, whose link compiles it
				// (one step less: 5% of a small program's first
				// compile), the first time it is seen.
				j.oneStep = j.oneStep && firstMiss(objKey)
			}
			if wfile = j.stageWoven(c, text, woven, wfile, sc); j.err != nil {
				return
			}
			outArgs := []string{wfile, "-o", j.out}
			if c.stage == stageLink && !c.saveTemps() && in.name != "-" && c.namesAuxFiles() && isGCC(cfg.bareCompiler()[0]) {
				// Its profile data, stack usage, split DWARF named as
				// gcc names them, not after the temporary object.
				outArgs = append(outArgs, c.auxNames(in)...)
			}
			finish := func() {
				var ccErr bytes.Buffer
				err := cfg.runTo(&ccErr, nil, append(ccArgv, outArgs...))
				if off := macroWarnings(ccErr.String()); err != nil && off != nil && cfg.plainCompiles(c, j, deps, stdinText, sc) {
					// Warnings the compiler leaves out in a macro's
					// expansion, which the woven text no longer marks:
					// the plain unit draws none under the same flags.
					ccErr.Reset()
					err = cfg.runTo(&ccErr, nil, slices.Concat(ccArgv, off, outArgs))
				}
				if err == nil {
					diags := wovenDiagnostics(ccErr.Bytes(), woven, ccArgv)
					j.res = res
					j.stderr.Write(ppErr.Bytes())
					j.stderr.Write(diags)
					if objKey != "" {
						storeObject(objKey, j.out, diags)
					}
					save()
					return
				}
				cfg.fallback(c, j, deps, stdinText, "the woven code does not compile: "+firstDiag(ccErr.String()), sc)
			}
			if j.oneStep {
				j.res, j.woven, j.wovenText, j.pp, j.save, j.stage = res, wfile, woven, ppErr.Bytes(), save, stage
				j.finish = func() {
					j.res, j.woven = nil, ""
					if err := j.writeWoven(); err != nil {
						j.err = err
						return
					}
					finish()
				}
				return
			}
			finish()
			return
		}
	}
	cfg.fallback(c, j, deps, stdinText, reason, sc)
}

// stageWoven writes j's woven text to wfile for its compile and, under
// -save-temps, keeps it beside the unit's .i; it returns the file to
// compile (j.err set on failure). A one-step link given the text on its
// standard input (earlyLink) needs no file: it is written if the link is
// run on the file after all, or the text compiled alone (j.writeWoven).
func (j *job) stageWoven(c *cmdline, text, woven []byte, wfile string, sc *scratch) string {
	j.writeWoven = func() error {
		if _, err := sc.path(); err != nil {
			return err
		}
		return os.WriteFile(wfile, woven, 0o644)
	}
	if !j.oneStep || c.saveTemps() {
		if j.err = j.writeWoven(); j.err != nil {
			return wfile
		}
		j.writeWoven = func() error { return nil }
	}
	if c.saveTemps() {
		kept, err := saveTemps(c.tempsBase(j.in, j.out), c.inputNames(), text, woven)
		if j.err = err; err != nil {
			return wfile
		}
		if kept != "" {
			// Compiled from there, so that the compiler's own
			// temporaries are named after it (clang names them after
			// the input, in the working directory), not after weave's
			// temporary file.
			return kept
		}
	}
	return wfile
}

// jobText is unitText for j, once the -E step has started with
// cfg.prepare and j's early link beside it (the link's driver's and cc1's
// start, 4-5 ms, on the CPU the -E step leaves idle; the text from the
// direct cache: beside the weave); reason also says why the unit is not
// to be woven.
func (cfg *Config) jobText(c *cmdline, j *job, deps []string, stdinText []byte, ppErr *bytes.Buffer) (text []byte, reason string) {
	packed := c.packedStructs()
	early := j.startLink != nil && packed == ""
	text, reason = cfg.unitText(c, j.in, deps, stdinText, ppErr, func() {
		cfg.prepareBeside()
		if early {
			j.startLinkBeside(nil)
		}
	})
	if j.in.kind != inC {
		// No -E step: before the weave. A C unit's text from the direct
		// cache prepares nothing: its weave is in the woven cache too, as
		// a rule, and prepare was 8% of weave's CPU in a compile served
		// whole from the caches; a weave makes what it needs itself.
		cfg.prepareBeside()
	}
	if reason == "" && packed != "" {
		return text, packed + " changes the layout of weave's runtime interface"
	}
	if reason == "" && early {
		j.startLinkBeside(text)
	}
	return text, reason
}

// unitText returns the preprocessed text of input in (preprocessed with
// deps, the dependency flags, unless it is preprocessed already), its
// diagnostics in ppErr; reason says why there is none. running, if not
// nil, is called once a -E step has started.
func (cfg *Config) unitText(c *cmdline, in *input, deps []string, stdinText []byte, ppErr *bytes.Buffer, running func()) (text []byte, reason string) {
	switch {
	case in.kind == inC:
		flags := slices.Concat(c.preprocessFlags(), api.Flags(true), deps)
		text, err := cfg.preprocessC(c, in, flags, stdinText, ppErr, running) // comments.go
		if err != nil {
			return nil, "preprocessing failed"
		}
		// Each token at its source column, for diagnostics' columns.
		return parse.Respace(text, nil), ""
	case in.name == "-":
		return stdinText, ""
	}
	text, err := os.ReadFile(in.name)
	if err != nil {
		return nil, err.Error()
	}
	return text, ""
}

// stdinName is how gcc names standard input in linemarkers, and
// stdinAlias a name of the same length the weaver takes for a user's file
// (it leaves "<...>" files, such as <built-in>, alone).
const (
	stdinName  = `"<stdin>"`
	stdinAlias = `"stdin#0"`
)

// weaveStdinText is weaveText, also for text read from standard input:
// its file is renamed for the weaver, and back in the woven text.
func (cfg *Config) weaveStdinText(src string, text []byte, d parse.Dialect, extern map[string]bool) ([]byte, *weave.Result, error) {
	if src != "<stdin>" || !bytes.Contains(text, []byte(stdinName)) || bytes.Contains(text, []byte(stdinAlias)) {
		return cfg.weaveText(src, text, d, extern)
	}
	woven, res, err := cfg.weaveText(src, bytes.ReplaceAll(text, []byte(stdinName), []byte(stdinAlias)), d, extern)
	if err != nil {
		return nil, nil, errors.New(strings.ReplaceAll(err.Error(), "stdin#0", "<stdin>"))
	}
	return bytes.ReplaceAll(woven, []byte(stdinAlias), []byte(stdinName)), res, nil
}

// otherArgv is the command line compiling an input that is not C (an
// assembly file, C++) under -c or -S, as the user's command line would.
func (cfg *Config) otherArgv(c *cmdline, in *input, out string) []string {
	argv := append([]string{}, cfg.Compiler...)
	for _, a := range c.args {
		if a.in != nil || isModeFlag(a.flag) && a.flag != "-c" && a.flag != "-S" {
			continue
		}
		argv = append(argv, a.words()...)
	}
	if in.lang != "" {
		argv = append(argv, "-x", in.lang)
	}
	argv = append(argv, in.name)
	if c.output != "" {
		argv = append(argv, "-o", out)
	}
	return argv
}

func modeFlag(c *cmdline) string {
	if c.stage == stageAsm {
		return "-S"
	}
	return "-c"
}

// displayName is how a source is named in messages.
func displayName(src string) string {
	if src == "-" {
		return "<stdin>"
	}
	return src
}

// preprocess runs the -E step on src (stdin's text if src is "-") and
// returns the preprocessed text; diagnostics go to stderr. It runs cc1
// itself where it can (cc1Command).
func (cfg *Config) preprocess(flags []string, src string, stdin []byte, stderr *bytes.Buffer, started func()) ([]byte, error) {
	cmd, ask := cfg.cc1Command(flags, src)
	if ask != nil {
		asked.Go(ask)
	}
	if cmd == nil {
		cc := cfg.bareCompiler()
		cmd = command(cc[0], append(append(append([]string{}, cc[1:]...), flags...), "-E", "-x", "c", src)...)
	}
	// Room for a unit's text at once (Lua's lapi.c under -C: 317 KB):
	// grown from nothing, the buffer was copied and cleared at each
	// doubling. Fresh memory, its untouched pages cost nothing.
	out := bytes.NewBuffer(make([]byte, 0, 1<<20))
	cmd.Stdout = out
	cmd.Stderr = stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if err := startChild(cmd); err != nil {
		return nil, err
	}
	started()
	if err := waitChild(cmd); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// runTo runs argv with its diagnostics (stderr) into w. Its standard
// output (the assembly of -S -o -) goes to the driver's.
func (cfg *Config) runTo(w *bytes.Buffer, stdin []byte, argv []string) error {
	argv, cleanup, err := responseFileIfLong(argv)
	if err != nil {
		return err
	}
	defer cleanup()
	cmd := command(argv[0], argv[1:]...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	cmd.Stdout = cfg.Stdout
	cmd.Stderr = w
	return exitError(argv[0], runChild(cmd))
}

func exitError(name string, err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code := ee.ExitCode()
		if code < 0 {
			code = 1
			if st, ok := ee.Sys().(syscall.WaitStatus); ok && st.Signaled() {
				code = 128 + int(st.Signal())
			}
		}
		return &ExitError{Code: code, Err: fmt.Errorf("%s failed: exit status %d", filepath.Base(name), code)}
	}
	return &ExitError{Code: 127, Err: err}
}

func (cfg *Config) stdin() io.Reader {
	if cfg.Stdin != nil {
		return cfg.Stdin
	}
	return os.Stdin
}

// checkCompiler refuses a real compiler that is not found, or is weave itself, which
// would start weave again and again.
func (cfg *Config) checkCompiler() error {
	if len(cfg.Compiler) == 0 {
		return errors.New("no compiler (WEAVE_CC is empty)")
	}
	self, err := os.Executable()
	if err == nil {
		self, _ = filepath.EvalSymlinks(self)
	}
	for _, w := range cfg.bareCompiler()[:1] {
		p, err := lookPath(w)
		if err != nil {
			// Else the fallback compile fails too, and exits 127 silently.
			return &ExitError{Code: 127, Err: fmt.Errorf("%s: compiler not found (WEAVE_CC names it)", w)}
		}
		if p, _ = filepath.EvalSymlinks(p); p == self {
			return fmt.Errorf("the real compiler %q is weave itself; set WEAVE_CC to a C compiler", w)
		}
	}
	return nil
}

// firstDiag returns the first error line of a compiler's output, or its
// first line.
func firstDiag(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return firstLine(strings.TrimSpace(s))
}

// saveTemps keeps a woven unit's texts for -save-temps beside the files the
// compiler keeps there (base.s, base.o): base.i, the preprocessor's output,
// as gcc keeps it, and base.woven.i, what the compiler was given, whose
// name it returns ("" if not written). A file that is one of the command's
// inputs (a .i compiled again) is left alone.
func saveTemps(base string, inputs []string, text, woven []byte) (wovenFile string, err error) {
	for _, f := range []struct {
		name string
		data []byte
	}{{base + ".i", text}, {base + ".woven.i", woven}} {
		if samefile.Check(f.name, inputs...) != nil {
			continue
		}
		if err := WriteAtomic(f.name, func(w io.Writer) error { _, err := w.Write(f.data); return err }); err != nil {
			return "", err
		}
		wovenFile = f.name
	}
	if wovenFile != base+".woven.i" {
		wovenFile = ""
	}
	return wovenFile, nil
}

// checkDepFile refuses a dependency file (-MF) that is one of the inputs:
// the woven build preprocesses a source more than once, and a later pass
// would read the make rules written over it.
func checkDepFile(c *cmdline) error {
	if err := samefile.Check(c.depFile, c.inputNames()...); err != nil {
		return fmt.Errorf("-MF: %v", err)
	}
	return nil
}
