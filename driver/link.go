package driver

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/weave-profiler/weave/runtime"
)

// link runs the link step: the user's command line in its order, with each
// woven input replaced by its object, and the runtime added.
//
// The runtime goes into every executable and every shared object that
// weave links. When a process holds several copies (an executable and its
// libraries), the dynamic linker binds every reference to the __weave_*
// symbols, from all of them, to the first copy in lookup order: one
// runtime instance per process (the others' constructors and destructors
// do nothing; see runtime/init.c). For that the runtime's symbols must
// stay exported from shared objects, also under a version script that
// makes everything else local.
func (cfg *Config) link(c *cmdline, objects map[*input]string, sc *scratch) error {
	argv, err := cfg.linkArgv(c, objects, sc)
	if err != nil {
		return err
	}
	return cfg.run(argv)
}

// compiles reports whether the command compiles an input itself: under -c
// or -S any, else a C source or .i (the link compiles the others).
func (c *cmdline) compiles() bool {
	for _, in := range c.inputs {
		if in.kind != inOther || c.stage != stageLink {
			return true
		}
	}
	return false
}

// linkOnly runs a command that only links (objects, libraries, sources
// the compiler compiles itself: nothing woven here) with the runtime
// added. Without a temporary directory to remove afterwards (one is made
// only for a -shared link's version scripts, or a runtime object whose
// symbols could not be listed), the compiler runs in place of weave's
// process (execCompiler): weave has nothing left to do. A Lua link (lua,
// luac) spent about 1 ms of CPU in the waiting weave process and its
// temporary directory.
func (cfg *Config) linkOnly(c *cmdline) error {
	var sc scratch
	defer sc.remove()
	argv, err := cfg.linkArgv(c, nil, &sc)
	if err != nil {
		return err
	}
	if sc.dir == "" {
		cfg.execCompiler(argv)
	}
	return cfg.run(argv)
}

// execCompiler runs argv in place of weave's process (execve): its exit status
// is weave's, its output goes where weave's did. It returns only where
// that cannot be done as cfg.run would run it (the output streams not the
// process's own, a command line long enough for a response file, no
// such program, exec failing), and then the caller runs argv itself.
func (cfg *Config) execCompiler(argv []string) {
	if cfg.Stdout != os.Stdout || cfg.Stderr != os.Stderr || cfg.Stdin != nil && cfg.Stdin != os.Stdin {
		return
	}
	if long(argv) {
		return
	}
	path, err := lookPath(argv[0])
	if err != nil {
		return
	}
	syscall.Exec(path, argv, os.Environ())
}

// rtFiles are the runtime object of a link and its dynamic list (""
// for a -shared or -static link, or if the object's symbols could not be
// listed).
type rtFiles struct{ obj, list string }

// runtimeFiles returns the runtime files of the link of c, found or
// built (runtime.Object). CC calls it once per command, through
// cfg.runtime, and starts it while the units compile.
func (cfg *Config) runtimeFiles(c *cmdline) (rtFiles, error) {
	obj, err := runtime.Object(cfg.bareCompiler(), c.runtimeFlags()) // local: launchers gain nothing on it
	if err != nil {
		return rtFiles{}, fmt.Errorf("building the runtime: %v", err)
	}
	f := rtFiles{obj: obj}
	if !c.shared && !c.static {
		f.list, _ = runtime.DynamicList(obj)
	}
	return f, nil
}

// runtimeFlags returns the flags the runtime of c's link is compiled
// with: the target's, and what the link makes of it.
func (c *cmdline) runtimeFlags() []string {
	flags := c.targetFlags()
	if c.shared {
		// No exit-family symbol linked into a library (runtime/exit.c).
		flags = append(flags, "-DWEAVE_SHARED_OBJECT")
	} else if c.forExecutable() {
		// Its thread-locals local-exec (runtime/internal.h).
		flags = append(flags, "-DWEAVE_EXECUTABLE")
	}
	return flags
}

// linkArgv returns the command line of the link step.
func (cfg *Config) linkArgv(c *cmdline, objects map[*input]string, sc *scratch) ([]string, error) {
	argv := append([]string{}, cfg.Compiler...)
	for _, a := range c.args {
		switch {
		case a.in != nil:
			if obj, ok := objects[a.in]; ok && obj == earlyInput {
				argv = append(argv, "-x", "cpp-output", earlyInput, "-x", "none")
			} else if ok {
				argv = append(argv, obj)
			} else if a.in.lang != "" {
				argv = append(argv, "-x", a.in.lang, a.in.name, "-x", "none")
			} else {
				argv = append(argv, a.in.name)
			}
		case a.flag == "-o" || a.flag == "--output" || strings.HasPrefix(a.flag, "-o") || strings.HasPrefix(a.flag, "--output="):
			argv = append(argv, a.words()...)
		case isModeFlag(a.flag) || strings.HasPrefix(a.flag, "-M") || strings.HasPrefix(a.flag, "-Wp,"):
			// -x applies to the inputs, which are objects now; dependencies
			// were written by the compile steps.
		default:
			argv = append(argv, a.words()...)
		}
	}
	if !c.relocatable && (!c.nostdlib || len(objects) > 0) {
		rt, err := cfg.runtime()
		if err != nil {
			return nil, err
		}
		obj, err := c.runtimeObject(rt.obj)
		if err != nil {
			return nil, err
		}
		argv = append(argv, obj)
		if !c.pthread {
			argv = append(argv, "-pthread")
		}
		switch {
		case c.shared:
			tmp, err := sc.path()
			if err != nil {
				return nil, err
			}
			argv = append(append([]string{}, cfg.Compiler...), exportRuntime(argv[len(cfg.Compiler):], tmp)...)
			mode := c.symbolic()
			curated := !c.hasVersionScript() && c.curatesExports(objects)
			if mode == "" && !curated {
				break
			}
			names, err := runtime.Exported(rt.obj)
			if err != nil {
				return nil, err
			}
			if curated {
				// A library that hides its own symbols gets no name of
				// the runtime's in its exports but __weave_* (ABI checks:
				// wayland-egl's symbols-check): the malloc family, exec*,
				// _exit... are local, as a version script's local: *
				// makes them; its unwoven calls of them forward to the
				// active copy (interpose.c, real_lookup).
				hide, keep := hiddenRuntimeNames(names)
				script := filepath.Join(tmp, "hide-runtime.map")
				if err := os.WriteFile(script, []byte("{ local: "+strings.Join(hide, "; ")+"; };\n"), 0o644); err != nil {
					return nil, err
				}
				argv, names = append(argv, "-Wl,--version-script="+script), keep
			}
			if mode != "" {
				// -Bsymbolic binds the library's calls to the runtime,
				// and the library's own malloc, free, exit..., to its own
				// copy of the runtime, which then is a second active one
				// (its own profile and leak summary) or forwards its
				// allocations past the profile: a dynamic list keeps the
				// runtime's exported names preemptible, as without
				// -Bsymbolic, and only them, as -Bsymbolic binds all
				// others (the functions alone under -Bsymbolic-functions:
				// data stays as it was).
				list := filepath.Join(tmp, "symbolic.dynlist")
				if err := os.WriteFile(list, []byte("{ "+strings.Join(names, "; ")+"; };\n"), 0o644); err != nil {
					return nil, err
				}
				argv = append(argv, "-Wl,--dynamic-list="+list)
				if mode == "functions" {
					argv = append(argv, "-Wl,--dynamic-list-data")
				}
			}
		case !c.static && !c.exportsDynamic():
			// An executable exports the runtime, so that woven plugins it
			// loads with dlopen use its copy too: the runtime's symbols
			// by name (runtime/dynlist.go), else by pattern. Not if it
			// exports every symbol already (-rdynamic, -Wl,-E: Lua's),
			// where the list changes nothing in the output but ld's
			// work (it checks every symbol against it: 7% of Lua's link).
			list, err := runtimeList(rt, sc)
			if err != nil {
				return nil, err
			}
			argv = append(argv, "-Wl,--dynamic-list="+list)
		}
	}
	return argv, nil
}

// runtimeList returns a linker dynamic list of the runtime's symbols: by
// name (runtime/dynlist.go), else the pattern __weave_*.
func runtimeList(rt rtFiles, sc *scratch) (string, error) {
	if rt.list != "" {
		return rt.list, nil
	}
	tmp, err := sc.path()
	if err != nil {
		return "", err
	}
	list := filepath.Join(tmp, "runtime.dynlist")
	return list, os.WriteFile(list, []byte("{ __weave_*; };\n"), 0o644)
}

// hiddenRuntimeNames splits the runtime's exported names: those a library
// that curates its exports keeps local (the C library's functions the
// runtime interposes, the pool API's, which forward to __weave_ entries),
// and its __weave_* entry points, which stay exported.
func hiddenRuntimeNames(names []string) (hide, keep []string) {
	for _, n := range names {
		if strings.HasPrefix(n, "__weave_") {
			keep = append(keep, n)
		} else {
			hide = append(hide, n)
		}
	}
	return hide, keep
}

// hasVersionScript reports whether the link names a linker version script.
func (c *cmdline) hasVersionScript() bool {
	has := false
	c.linkerWords(func(w string) {
		has = has || w == "--version-script" || w == "-version-script" ||
			strings.HasPrefix(w, "--version-script=") || strings.HasPrefix(w, "-version-script=")
	})
	return has
}

// curatesExports reports whether the link compiles with -fvisibility=hidden,
// or an object of it (one it compiled, or one it was given) defines a
// global symbol of hidden visibility: its library chooses what it exports,
// and an ABI check may list them.
func (c *cmdline) curatesExports(objects map[*input]string) bool {
	if c.hidesSymbols() {
		return true // a link that compiles its sources too
	}
	var paths []string
	for _, a := range c.args {
		if a.in == nil {
			continue
		}
		if obj, ok := objects[a.in]; ok && obj != earlyInput {
			paths = append(paths, obj)
		} else if !ok && (strings.HasSuffix(a.in.name, ".o") || strings.HasSuffix(a.in.name, ".lo")) {
			paths = append(paths, a.in.name)
		}
	}
	for _, p := range paths {
		if hasHiddenGlobal(p) {
			return true
		}
	}
	return false
}

// hidesSymbols reports whether c compiles with -fvisibility=hidden (or
// internal): its library exports what it marks (wayland's WL_EXPORT).
func (c *cmdline) hidesSymbols() bool {
	hides := false
	for _, a := range c.args {
		if strings.HasPrefix(a.flag, "-fvisibility=") {
			hides = a.flag == "-fvisibility=hidden" || a.flag == "-fvisibility=internal"
		}
	}
	return hides
}

// curatedName is a hidden symbol a woven object compiled with
// -fvisibility=hidden defines (curatedMark, at the end of its woven text),
// for its library's link to see: its other hidden names may all be static.
const curatedName = "__weave_curated_exports"

var curatedMark = []byte("\n# 1 \"<weave>\"\nextern __attribute__((__visibility__(\"hidden\"), __weak__)) const char " + curatedName +
	";\n__attribute__((__visibility__(\"hidden\"), __weak__)) const char " + curatedName + " = 1;\n")

// hasHiddenGlobal reports whether the ELF object at path defines a global
// or weak symbol of hidden or internal visibility (weave's own but
// curatedName left out).
func hasHiddenGlobal(path string) bool {
	f, err := elf.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	syms, _ := f.Symbols()
	for _, s := range syms {
		bind, vis := elf.ST_BIND(s.Info), elf.ST_VISIBILITY(s.Other)
		if s.Section != elf.SHN_UNDEF && (bind == elf.STB_GLOBAL || bind == elf.STB_WEAK) &&
			(vis == elf.STV_HIDDEN || vis == elf.STV_INTERNAL) && (s.Name == curatedName || !strings.HasPrefix(s.Name, "__weave_")) {
			return true
		}
	}
	return false
}

// runtimeObject returns the runtime object for c's link: a copy of obj
// holding the directory of the link's output (runtime.WithLinkDir), where
// the program writes its profile by default. libtool links a program in
// .libs and runs it through a script in the directory above: that one.
func (c *cmdline) runtimeObject(obj string) (string, error) {
	out := c.output
	if out == "" {
		out = "a.out"
	}
	dir, err := filepath.Abs(filepath.Dir(out))
	if err != nil {
		return obj, nil
	}
	if filepath.Base(dir) == ".libs" {
		dir = filepath.Dir(dir)
	}
	return runtime.WithLinkDir(obj, dir)
}

// exportsDynamic reports whether the link exports every symbol of the
// executable: -rdynamic, or the linker's -E, --export-dynamic (through
// -Wl, or -Xlinker), not undone by a later --no-export-dynamic.
func (c *cmdline) exportsDynamic() bool {
	all := false
	c.linkerWords(func(w string) {
		switch w {
		case "-rdynamic", "-E", "--export-dynamic", "-export-dynamic":
			all = true
		case "--no-export-dynamic", "-no-export-dynamic":
			all = false
		}
	})
	return all
}

// symbolic reports how a -shared link binds the library's references to
// its own definitions: "" (through the dynamic symbol table, the default),
// "all" (-Bsymbolic, or the driver's -symbolic) or "functions"
// (-Bsymbolic-functions); the last of them wins, and -Bno-symbolic undoes.
func (c *cmdline) symbolic() string {
	mode := ""
	c.linkerWords(func(w string) {
		switch w {
		case "-symbolic", "-Bsymbolic", "--Bsymbolic":
			mode = "all"
		case "-Bsymbolic-functions", "--Bsymbolic-functions":
			mode = "functions"
		case "-Bno-symbolic", "--Bno-symbolic":
			mode = ""
		}
	})
	return mode
}

// linkerWords calls visit with each of the link's linker options in order:
// the driver's own (-rdynamic, -symbolic) and each word passed through -Wl,
// or -Xlinker, but not an option's value (-Wl,-soname,NAME's NAME).
func (c *cmdline) linkerWords(visit func(string)) {
	words := func(ws []string) {
		for i, w := range ws {
			if i > 0 && linkerArgOptions[ws[i-1]] {
				continue
			}
			visit(w)
		}
	}
	for i, a := range c.args {
		switch {
		case a.flag == "-rdynamic" || a.flag == "-symbolic":
			visit(a.flag)
		case strings.HasPrefix(a.flag, "-Wl,"):
			words(strings.Split(a.flag[len("-Wl,"):], ","))
		case a.flag == "-Xlinker" && a.sep && (i == 0 || c.args[i-1].flag != "-Xlinker" || !linkerArgOptions[c.args[i-1].value]):
			visit(a.value)
		}
	}
}

// linkerArgOptions are GNU ld's options whose value may be the next word.
var linkerArgOptions = map[string]bool{
	"-soname": true, "-h": true, "--version-script": true, "-version-script": true, "-T": true, "-o": true,
	"-e": true, "--entry": true, "-L": true, "-l": true, "-u": true, "-z": true, "-rpath": true, "-R": true,
	"--dynamic-list": true, "-Map": true, "--defsym": true, "-y": true, "--undefined": true, "-m": true,
	"--export-dynamic-symbol": true, "--wrap": true, "-f": true, "-F": true, "--filter": true, "--auxiliary": true,
}

// exportRuntime rewrites the linker version scripts of a -shared link
// (-Wl,--version-script,FILE and its other spellings) so that they export
// the runtime's symbols: a copy of each script, with __weave_* added to
// the globals of its first version node.
func exportRuntime(args []string, tmp string) []string {
	n := 0
	rewrite := func(file string) string {
		data, err := os.ReadFile(file)
		if err != nil {
			return file // the linker reports it
		}
		out, ok := addGlobal(string(data), "__weave_*")
		if !ok {
			return file
		}
		n++
		p := filepath.Join(tmp, fmt.Sprintf("version-%d.map", n))
		if os.WriteFile(p, []byte(out), 0o644) != nil {
			return file
		}
		return p
	}
	r := append([]string{}, args...)
	for i := 0; i < len(r); i++ {
		a := r[i]
		switch {
		case strings.HasPrefix(a, "-Wl,"):
			parts := strings.Split(a[4:], ",")
			for k := 0; k < len(parts); k++ {
				p := parts[k]
				switch {
				case (p == "--version-script" || p == "-version-script") && k+1 < len(parts):
					parts[k+1] = rewrite(parts[k+1])
					k++
				case strings.HasPrefix(p, "--version-script="):
					parts[k] = "--version-script=" + rewrite(p[len("--version-script="):])
				case strings.HasPrefix(p, "-version-script="):
					parts[k] = "-version-script=" + rewrite(p[len("-version-script="):])
				}
			}
			r[i] = "-Wl," + strings.Join(parts, ",")
			// libtool's spelling: -Wl,-version-script -Wl,FILE
			if last := parts[len(parts)-1]; (last == "--version-script" || last == "-version-script") &&
				i+1 < len(r) && strings.HasPrefix(r[i+1], "-Wl,") {
				next := strings.SplitN(r[i+1][4:], ",", 2)
				next[0] = rewrite(next[0])
				r[i+1] = "-Wl," + strings.Join(next, ",")
				i++
			}
		case a == "-Xlinker" && i+1 < len(r):
			v := r[i+1]
			switch {
			case (v == "--version-script" || v == "-version-script") && i+3 < len(r) && r[i+2] == "-Xlinker":
				r[i+3] = rewrite(r[i+3])
				i += 3
			case strings.HasPrefix(v, "--version-script="):
				r[i+1] = "--version-script=" + rewrite(v[len("--version-script="):])
				i++
			default:
				i++
			}
		}
	}
	return r
}

// addGlobal adds the symbol pattern sym to the global symbols of the first
// version node of the version script text.
func addGlobal(text, sym string) (string, bool) {
	i := skipScriptSpace(text, 0)
	// The first node: [name] { ... }
	for i < len(text) && text[i] != '{' {
		if text[i] == ';' || text[i] == '}' {
			return "", false
		}
		i = skipScriptSpace(text, i+1)
	}
	if i >= len(text) {
		return "", false
	}
	i = skipScriptSpace(text, i+1)
	if strings.HasPrefix(text[i:], "global") {
		j := skipScriptSpace(text, i+len("global"))
		if j < len(text) && text[j] == ':' {
			return text[:j+1] + " " + sym + ";" + text[j+1:], true
		}
	}
	return text[:i] + "global: " + sym + "; " + text[i:], true
}

// skipScriptSpace skips white space and comments (/* */, # to the end of
// the line) of a version script.
func skipScriptSpace(s string, i int) int {
	for i < len(s) {
		switch {
		case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
			i++
		case strings.HasPrefix(s[i:], "/*"):
			if k := strings.Index(s[i+2:], "*/"); k >= 0 {
				i += k + 4
			} else {
				return len(s)
			}
		case s[i] == '#':
			if k := strings.IndexByte(s[i:], '\n'); k >= 0 {
				i += k + 1
			} else {
				return len(s)
			}
		default:
			return i
		}
	}
	return i
}

// maxArgs is the length of a command line above which the driver passes
// the arguments in a response file.
const maxArgs = 100000

// responseFileIfLong returns argv, or, if it is long, argv[0] and a
// response file holding the rest, and a function removing that file.
func responseFileIfLong(argv []string) ([]string, func(), error) {
	if !long(argv) {
		return argv, func() {}, nil
	}
	// The launchers (ccache, distcc) and gcc and clang all read @file.
	var b bytes.Buffer
	for _, a := range argv[1:] {
		b.WriteString(quoteResponse(a))
		b.WriteByte('\n')
	}
	f, err := os.CreateTemp(tempDir(), "weave-args-*.rsp")
	if err != nil {
		return nil, nil, err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, nil, err
	}
	// A launcher takes the compiler as a word of its own.
	k := 1
	for k < len(argv) && launchers[filepath.Base(argv[k-1])] {
		k++
	}
	if k > 1 {
		// rewrite: launcher... compiler @file
		b.Reset()
		for _, a := range argv[k:] {
			b.WriteString(quoteResponse(a))
			b.WriteByte('\n')
		}
		if err := os.WriteFile(f.Name(), b.Bytes(), 0o600); err != nil {
			os.Remove(f.Name())
			return nil, nil, err
		}
	}
	out := append(append([]string{}, argv[:k]...), "@"+f.Name())
	return out, func() { os.Remove(f.Name()) }, nil
}

// long reports whether argv goes to the compiler in a response file.
func long(argv []string) bool {
	n := 0
	for _, a := range argv {
		n += len(a) + 1
	}
	return n >= maxArgs && len(argv) >= 2
}

// quoteResponse quotes one argument for a response file (gcc's rules:
// single quotes, backslash escapes).
func quoteResponse(a string) string {
	if a != "" && !strings.ContainsAny(a, " \t\n\r\f\v'\"\\") {
		return a
	}
	return "'" + strings.ReplaceAll(strings.ReplaceAll(a, `\`, `\\`), "'", `\'`) + "'"
}

// oneStepJob returns the job whose woven text the link command may
// compile itself (oneStepLink), or nil: a command that compiles one C
// source (or .i) and links it into an executable with gcc, without a
// launcher (a compiler cache or distcc caches or sends only compiles)
// and without options that name files after the compile's output (the
// separate compile's object is a temporary file). One compiler driver
// and one object file less: for a small program, 2 ms of 30.
func (cfg *Config) oneStepJob(c *cmdline, jobs []*job) *job {
	if c.stage != stageLink || c.shared || c.relocatable || c.nostdlib || len(cfg.bareCompiler()) != len(cfg.Compiler) {
		return nil
	}
	var one *job
	for _, j := range jobs {
		if j == nil {
			continue
		}
		if one != nil || j.in.kind == inOther {
			return nil
		}
		one = j
	}
	if c.namesAuxFiles() {
		return nil
	}
	for _, a := range c.args {
		if f := a.flag; strings.HasPrefix(f, "-save-temps") || strings.HasPrefix(f, "-dump") || strings.HasPrefix(f, "-flto") {
			return nil
		}
	}
	if one == nil || !isGCC(cfg.Compiler[0]) {
		return nil
	}
	return one
}

// isGCC reports whether the compiler command cc is gcc (by the name of
// the file it runs, through links): clang warns about the preprocessor
// options of a command that compiles preprocessed text. Once per name.
func isGCC(cc string) bool {
	if v, ok := gccs.Load(cc); ok {
		return v.(bool)
	}
	gcc := false
	if p, err := lookPath(cc); err == nil {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r
		}
		b := filepath.Base(p)
		gcc = strings.Contains(b, "gcc") && !strings.Contains(b, "clang")
	}
	gccs.Store(cc, gcc)
	return gcc
}

var gccs sync.Map // compiler name -> isGCC's answer

// oneStepArgv is the command line of oneStepLink: the link's, with -pipe,
// so that as assembles while cc1 compiles, on the CPU weave no longer
// needs (the same executable: no temporary .s).
func (cfg *Config) oneStepArgv(c *cmdline, objects map[*input]string, sc *scratch) ([]string, error) {
	argv, err := cfg.linkArgv(c, objects, sc)
	if err != nil {
		return nil, err
	}
	n := len(cfg.Compiler)
	return append(append(argv[:n:n], "-pipe"), argv[n:]...), nil
}

// oneStepLink runs the link command with the woven text of j in place of
// its object: the compiler compiles it and links (or the link started
// early, earlyLink, is given the text). If that fails, the
// text is compiled on its own (falling back to an unwoven compile if it
// does not compile) and linked as any other object, so that every
// failure is reported as it would have been.
func (cfg *Config) oneStepLink(c *cmdline, j *job, objects map[*input]string, sc *scratch) error {
	var out bytes.Buffer
	var err error
	saved := false
	if e := j.takeLink(); e != nil {
		// The unit's summary written while the link runs, kept if it
		// succeeds.
		staged := make(chan func(bool) bool, 1)
		go func() { staged <- j.stage() }()
		err = e.finish(j.wovenText)
		out.Write(e.stderr.Bytes())
		(<-staged)(err == nil)
		saved = true
	} else {
		if werr := j.writeWoven(); werr != nil {
			return werr
		}
		objects[j.in] = j.woven
		argv, aerr := cfg.oneStepArgv(c, objects, sc)
		if aerr != nil {
			return aerr
		}
		err = cfg.runTo(&out, nil, argv)
	}
	if err == nil {
		cfg.Stderr.Write(j.pp)
		cfg.Stderr.Write(wovenDiagnostics(out.Bytes(), j.wovenText, c.compileFlags()))
		if !saved {
			j.save()
		}
		return nil
	}
	objects[j.in] = j.out
	j.finish()
	cfg.Stderr.Write(j.stderr.Bytes())
	if j.err != nil {
		return j.err
	}
	return cfg.link(c, objects, sc)
}
