package driver

import (
	"path/filepath"
	"strconv"
	"strings"
)

// stage is how far a compiler driver command line goes.
type stage int

const (
	stageLink    stage = iota // compile and link (the default)
	stageCompile              // -c: objects
	stageAsm                  // -S: assembly
)

// A command line of a C compiler driver, taken apart. Arguments keep their
// order: it matters for linking (-l after the objects that need it) and for
// -x, which applies to the inputs after it.
type cmdline struct {
	args   []arg
	inputs []*input

	stage        stage
	output       string // -o
	passthrough  bool   // nothing to weave: -E, -M, -fsyntax-only, --help, ...
	valueMissing bool   // the last flag wants a value: nothing may follow it
	shared       bool   // -shared
	relocatable  bool   // -r: a partial link, no runtime
	nostdlib     bool   // -nostdlib, -nodefaultlibs, -nolibc
	static       bool   // -static, -static-pie
	pthread      bool   // -pthread

	depGen    bool   // -MD or -MMD: dependencies as a side effect
	depFile   string // -MF
	depTarget bool   // -MT or -MQ given
}

// An arg is one argument: a flag (with its separate value, if any) or an
// input file.
type arg struct {
	flag  string
	value string // the separate value of flags such as -o, -I, -MF
	sep   bool   // value is a separate argument
	in    *input // non-nil for an input file
}

// words returns the argument as it is written on a command line.
func (a arg) words() []string {
	if a.in != nil {
		return []string{a.in.name}
	}
	if a.sep {
		return []string{a.flag, a.value}
	}
	return []string{a.flag}
}

// An input is an input file of the command line.
type input struct {
	name string
	lang string // the -x language in effect ("" if none)
	kind inputKind
}

type inputKind int

const (
	inOther inputKind = iota // passed to the real compiler untouched
	inC                      // C source: preprocessed, woven, compiled
	inI                      // preprocessed C (.i): woven, compiled
)

// flagsWithValue are the driver flags whose value is the next argument
// (gcc's and clang's).
var flagsWithValue = map[string]bool{
	"-o": true, "-I": true, "-D": true, "-U": true, "-include": true, "-imacros": true,
	"-isystem": true, "-idirafter": true, "-iquote": true, "-iprefix": true, "-iwithprefix": true,
	"-iwithprefixbefore": true, "-isysroot": true, "-imultilib": true, "-imultiarch": true,
	"-x": true, "-MF": true, "-MT": true, "-MQ": true, "-L": true, "-l": true,
	"-Xlinker": true, "-Xpreprocessor": true, "-Xassembler": true, "-Xclang": true, "-mllvm": true,
	"-T": true, "-e": true, "-u": true, "-z": true, "-A": true, "-B": true, "-G": true, "-V": true, "-b": true,
	"-aux-info": true, "-arch": true, "-target": true, "--target": true, "--param": true, "--sysroot": true,
	"-wrapper": true, "-dumpbase": true, "-dumpdir": true, "-dumpbase-ext": true, "-specs": true,
	"-gcc-toolchain": true, "--gcc-toolchain": true, "-install_name": true, "-framework": true,
	"--include": true, "--output": true, "--language": true,
	"-main-file-name": true, "-ivfsoverlay": true, "-iframework": true, "-isystem-after": true,
}

// FlagTakesValue reports whether a compiler driver flag takes the next
// argument as its value (-I dir, -include file, -x c, ...).
func FlagTakesValue(flag string) bool { return flagsWithValue[flag] }

// passthroughFlags stop the driver from weaving: the real compiler gets the
// command line as it is.
func passthroughFlag(a string) bool {
	switch a {
	case "-E", "-M", "-MM", "-fsyntax-only", "-###", "--help", "-help", "--version", "-dumpversion",
		"-dumpfullversion", "-dumpmachine", "-dumpspecs", "--target-help":
		return true
	}
	return strings.HasPrefix(a, "-print-") || strings.HasPrefix(a, "--print-") || strings.HasPrefix(a, "--help=")
}

// parseCmdline splits a driver command line (without argv[0]; response
// files already expanded).
func parseCmdline(args []string) *cmdline {
	c := &cmdline{}
	lang := ""
	onlyInputs := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		if onlyInputs || a == "-" || !strings.HasPrefix(a, "-") || a == "" {
			c.addInput(a, lang)
			continue
		}
		if a == "--" { // gcc does not know it; clang: the rest are inputs
			onlyInputs = true
			c.args = append(c.args, arg{flag: a})
			continue
		}
		ar := arg{flag: a}
		if flagsWithValue[a] && i+1 < len(args) {
			ar.value, ar.sep = args[i+1], true
			i++
		} else if flagsWithValue[a] {
			c.passthrough, c.valueMissing = true, true // the compiler says so
		}
		val := ar.value
		switch {
		case a == "-o" || a == "--output":
			c.output = val
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			c.output = a[2:]
		case strings.HasPrefix(a, "--output="):
			c.output = a[len("--output="):]
		case a == "-x" || a == "--language":
			lang = val
		case strings.HasPrefix(a, "-x") && len(a) > 2:
			lang = a[2:]
		case strings.HasPrefix(a, "--language="):
			lang = a[len("--language="):]
		case a == "-c":
			if c.stage == stageLink {
				c.stage = stageCompile
			}
		case a == "-S":
			c.stage = stageAsm
		case a == "-MD" || a == "-MMD":
			c.depGen = true
		case a == "-MF":
			c.depFile = val
		case strings.HasPrefix(a, "-MF") && len(a) > 3:
			c.depFile = a[3:]
		case strings.HasPrefix(a, "-MT") || strings.HasPrefix(a, "-MQ"):
			c.depTarget = true
		case a == "-shared":
			c.shared = true
		case a == "-r":
			c.relocatable = true
		case a == "-static" || a == "-static-pie":
			c.static = true
		case a == "-nostdlib" || a == "-nodefaultlibs" || a == "-nolibc":
			c.nostdlib = true
		case a == "-pthread" || a == "--pthread":
			c.pthread = true
		case passthroughFlag(a):
			c.passthrough = true
		}
		if lang == "none" {
			lang = ""
		}
		c.args = append(c.args, ar)
	}
	return c
}

func (c *cmdline) addInput(name, lang string) {
	in := &input{name: name, lang: lang}
	switch lang {
	case "c":
		in.kind = inC
	case "cpp-output":
		in.kind = inI
	case "":
		switch filepath.Ext(name) {
		case ".c":
			in.kind = inC
		case ".i":
			in.kind = inI
		}
	}
	c.inputs = append(c.inputs, in)
	c.args = append(c.args, arg{in: in})
}

// fallthroughWarnings reports whether the command line may ask for
// -Wimplicit-fallthrough (-Wextra, -W, -Weverything, the flag itself),
// whose comments (/* FALLTHROUGH */) the -E step must then keep where
// the unit has one (comments.go).
func (c *cmdline) fallthroughWarnings() bool {
	for _, a := range c.args {
		f := a.flag
		if f == "-Wextra" || f == "-W" || f == "-Weverything" ||
			strings.Contains(f, "implicit-fallthrough") && !strings.HasPrefix(f, "-Wno-") {
			return true
		}
	}
	return false
}

// compilerPrune reports whether the woven text may go to the compiler
// with the system headers' declarations nothing uses blanked
// (weave.Options.ForCompiler): not if an option makes the compiler show
// what it did with them (-Wsystem-headers, -aux-info, its dumps, debug
// information of unused types).
func (c *cmdline) compilerPrune() bool {
	for _, a := range c.args {
		if f := a.flag; f == "-Wsystem-headers" || f == "-aux-info" || strings.HasPrefix(f, "-fdump-") ||
			strings.HasPrefix(f, "-fno-eliminate-unused-debug") {
			return false
		}
	}
	return true
}

// woven reports whether the command line has inputs to weave.
func (c *cmdline) woven() int {
	n := 0
	for _, in := range c.inputs {
		if in.kind != inOther {
			n++
		}
	}
	return n
}

// Flags are grouped by the step that needs them: the preprocessor (the
// -E step that feeds the weaver), the compiler proper (which compiles the
// woven preprocessed text) and the linker.

// isLinkFlag reports whether f (with its value) matters only for linking.
func isLinkFlag(f string) bool {
	switch f {
	case "-l", "-L", "-Xlinker", "-T", "-e", "-u", "-z", "-shared", "-static", "-static-pie", "-pie", "-no-pie",
		"-r", "-s", "-rdynamic", "-nostdlib", "-nodefaultlibs", "-nolibc", "-nostartfiles", "-static-libgcc",
		"-shared-libgcc", "-static-libasan", "-symbolic", "-Bsymbolic", "-framework", "-install_name":
		return true
	}
	return strings.HasPrefix(f, "-l") || strings.HasPrefix(f, "-L") || strings.HasPrefix(f, "-Wl,") ||
		strings.HasPrefix(f, "-fuse-ld=") || strings.HasPrefix(f, "--ld-path=")
}

// isPreprocessorFlag reports whether f (with its value) matters only for
// preprocessing.
func isPreprocessorFlag(f string) bool {
	switch f {
	case "-I", "-D", "-U", "-include", "-imacros", "-isystem", "-idirafter", "-iquote", "-iprefix",
		"-iwithprefix", "-iwithprefixbefore", "-imultilib", "-imultiarch", "-Xpreprocessor", "-nostdinc",
		"-undef", "-P", "-C", "-CC", "-H", "-trigraphs", "--include", "-iframework", "-isystem-after", "-fdirectives-only":
		return true
	}
	return strings.HasPrefix(f, "-I") || strings.HasPrefix(f, "-D") || strings.HasPrefix(f, "-U") ||
		strings.HasPrefix(f, "-M") || strings.HasPrefix(f, "-Wp,") || strings.HasPrefix(f, "--include=")
}

// isModeFlag reports whether f selects the stage, the language or the
// output: the driver sets those itself for each step.
func isModeFlag(f string) bool {
	switch f {
	case "-c", "-S", "-E", "-o", "-x", "--output", "--language":
		return true
	}
	return strings.HasPrefix(f, "-x") || strings.HasPrefix(f, "-o") ||
		strings.HasPrefix(f, "--output=") || strings.HasPrefix(f, "--language=")
}

// isDumpLetters reports whether f is -dLETTERS (not -dumpbase and the
// like): under -E the preprocessor's -dM, -dD, -dN, -dI and -dU put macro
// definitions or #include lines in the output, or replace the unit with
// its macros (-dM); in a compile they are the compiler's debugging dumps
// (-dM is -fdump-rtl-mach) or nothing.
func isDumpLetters(f string) bool {
	if len(f) < 3 || !strings.HasPrefix(f, "-d") || strings.HasPrefix(f, "-dump") {
		return false
	}
	for _, c := range f[2:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

// preprocessFlags are the flags for the -E step: everything but the mode,
// the output, the dependency output, the link-only flags, and -dLETTERS
// and -fdirectives-only, which would make the -E output something other
// than the unit expanded (the compile of the woven text keeps -dLETTERS).
// The caller adds the dependency flags for the source at hand.
func (c *cmdline) preprocessFlags() []string { return c.sourceFlags(false) }

// sourceFlags are preprocessFlags, with the -dLETTERS flags if dumps.
func (c *cmdline) sourceFlags(dumps bool) []string {
	var r []string
	for _, a := range c.args {
		f := a.flag
		switch {
		case a.in != nil || f == "--":
		case isModeFlag(f) || isLinkFlag(f) || f == "-P":
		case strings.HasPrefix(f, "-M"): // depGenFlags, per source
		case !dumps && (isDumpLetters(f) || f == "-fdirectives-only"):
		default:
			r = append(r, a.words()...)
		}
	}
	return r
}

// compileFlags are the flags for compiling woven preprocessed text:
// everything but the preprocessor, dependency, mode, output and link flags.
func (c *cmdline) compileFlags() []string {
	var r []string
	for _, a := range c.args {
		f := a.flag
		switch {
		case a.in != nil || f == "--":
		case isModeFlag(f) || isLinkFlag(f) || isPreprocessorFlag(f):
		default:
			r = append(r, a.words()...)
		}
	}
	return r
}

// packedStructs returns the -fpack-struct option of the command line (the
// last of -f[no-]pack-struct[=N]) if it packs structures tighter than
// weave's runtime interface (weave.h) is laid out, else "". Woven code
// shares that interface's structures with the runtime, which is compiled
// without the option: under it they would differ (gcc ignores #pragma
// pack under -fpack-struct), so such units are compiled unwoven.
func (c *cmdline) packedStructs() string {
	last := ""
	for _, a := range c.args {
		if f := a.flag; f == "-fpack-struct" || f == "-fno-pack-struct" || strings.HasPrefix(f, "-fpack-struct=") {
			last = f
		}
	}
	if n, err := strconv.Atoi(strings.TrimPrefix(last, "-fpack-struct=")); last == "-fno-pack-struct" || err == nil && n >= 8 {
		return ""
	}
	return last
}

// fallbackFlags are the flags for compiling one C source unwoven, as the
// user's command line would: everything but the mode, the output, the
// dependency output and the link-only flags (the caller adds the
// dependency flags for the source at hand).
func (c *cmdline) fallbackFlags() []string { return c.sourceFlags(true) }

// depGenFlags returns the dependency flags of the -E step (or an unwoven
// compile) for C source src whose output is out, so that the dependency
// file and its target are the ones the real compiler would write for the
// user's command line (gcc 11+ rules).
func (c *cmdline) depGenFlags(src, out string) []string {
	if !c.depGen {
		return nil
	}
	var r []string
	for _, a := range c.args {
		if strings.HasPrefix(a.flag, "-M") && a.in == nil && a.flag != "-MF" && !strings.HasPrefix(a.flag, "-MF") {
			r = append(r, a.words()...)
		}
	}
	file := c.depFile
	target := ""
	base := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
	switch {
	case c.stage != stageLink && c.output != "":
		if file == "" {
			file = strings.TrimSuffix(c.output, filepath.Ext(c.output)) + ".d"
		}
		target = c.output
	case c.stage != stageLink:
		if file == "" {
			file = base + ".d"
		}
		target = base + ".o"
	case c.output != "":
		if file == "" {
			file = strings.TrimSuffix(c.output, filepath.Ext(c.output)) + ".d"
		}
		target = c.output
	default:
		if file == "" {
			file = "a-" + base + ".d"
		}
		target = base + ".o"
	}
	r = append(r, "-MF", file)
	if !c.depTarget {
		r = append(r, "-MT", escapeTarget(target))
	}
	return r
}

// escapeTarget quotes a make target as -MQ would; -MT takes it as it is.
func escapeTarget(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t':
			for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
				b.WriteByte('\\')
			}
			b.WriteByte('\\')
		case '$':
			b.WriteByte('$')
		case '#':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// targetFlags are the flags that select the ABI or instrumentation the
// runtime must be built with to link with the program. x86's instruction
// set extensions (-msse4.2, -mavx2, -mcrc32, ...) and -mtune= are not
// among them: they change no ABI, and each set of flags is a runtime
// object to compile (seconds), which configure scripts' checks for them
// (PostgreSQL's CRC and popcount ones) would each pay.
func (c *cmdline) targetFlags() []string {
	var r []string
	for _, a := range c.args {
		f := a.flag
		switch {
		case a.in != nil:
		case isaExtension(f):
		case strings.HasPrefix(f, "-m") && !strings.HasPrefix(f, "-mllvm"):
			r = append(r, f)
		case strings.HasPrefix(f, "-DWEAVE_"), f == "-D" && strings.HasPrefix(a.value, "WEAVE_"): // the runtime's build-time options (-DWEAVE_SECURE_PROFILE)
			r = append(r, a.words()...)
		case strings.HasPrefix(f, "-fsanitize"), f == "-pthread", f == "--target", f == "-target",
			strings.HasPrefix(f, "--target="), strings.HasPrefix(f, "--sysroot"), f == "-isysroot":
			r = append(r, a.words()...)
		}
	}
	return r
}

// isaExtensions are x86's -m options that enable instructions (the
// -mno- forms are not: -mno-sse changes how floating point is passed).
var isaExtensions = map[string]bool{
	"sse": true, "sse2": true, "sse3": true, "ssse3": true, "sse4": true, "sse4.1": true, "sse4.2": true,
	"sse4a": true, "avx": true, "avx2": true, "crc32": true, "pclmul": true, "vpclmulqdq": true, "aes": true,
	"vaes": true, "popcnt": true, "bmi": true, "bmi2": true, "lzcnt": true, "fma": true, "fma4": true,
	"f16c": true, "xsave": true, "xsaveopt": true, "xsavec": true, "xsaves": true, "rdrnd": true,
	"rdseed": true, "sha": true, "adx": true, "movbe": true, "gfni": true, "avxvnni": true,
}

// isaExtension reports whether f is one of isaExtensions, an -mavx512*
// one, or -mtune=.
func isaExtension(f string) bool {
	x, ok := strings.CutPrefix(f, "-m")
	return ok && (isaExtensions[x] || strings.HasPrefix(x, "avx512") || strings.HasPrefix(x, "tune="))
}

// forExecutable reports whether the command's units certainly go into an
// executable: it links one (not -shared, not -r), or it compiles them for
// one by the user's explicit choice, the last of the -f[no-]pic/pie
// options being -fpie, -fPIE or a -fno- one (position-dependent code). A
// compiler's default PIE alone says nothing: such objects also link into
// a shared object when they use no data of another object, and the
// guard's local-exec addressing would make that link fail.
func (c *cmdline) forExecutable() bool {
	if c.shared || c.relocatable {
		return false
	}
	if c.stage == stageLink {
		return true
	}
	flags := make([]string, len(c.args))
	for i, a := range c.args {
		flags[i] = a.flag
	}
	return compiledForExecutable(flags)
}

// compiledForExecutable reports whether the last of the -f[no-]pic/pie
// options among flags is -fpie, -fPIE or a -fno- one: code the user
// compiles for an executable explicitly.
func compiledForExecutable(flags []string) bool {
	last := ""
	for _, f := range flags {
		switch f {
		case "-fpic", "-fPIC", "-fpie", "-fPIE", "-fno-pic", "-fno-PIC", "-fno-pie", "-fno-PIE":
			last = f
		}
	}
	return last != "" && last != "-fpic" && last != "-fPIC"
}

// inputNames returns the names of the command's inputs.
func (c *cmdline) inputNames() []string {
	names := make([]string, len(c.inputs))
	for i, in := range c.inputs {
		names[i] = in.name
	}
	return names
}

// saveTemps reports whether the command asks for the compiler's
// intermediate files (-save-temps, -save-temps=cwd|obj).
func (c *cmdline) saveTemps() bool {
	for _, a := range c.args {
		if a.flag == "-save-temps" || strings.HasPrefix(a.flag, "-save-temps=") {
			return true
		}
	}
	return false
}

// builtins reports whether c compiles with the compiler's builtin
// functions: no -fno-builtin (or -fno-builtin-FUNCTION), no
// -ffreestanding.
func (c *cmdline) builtins() bool {
	for _, a := range c.args {
		if strings.HasPrefix(a.flag, "-fno-builtin") || a.flag == "-ffreestanding" {
			return false
		}
	}
	return true
}

// namesAuxFiles reports whether a flag of c makes the compiler write a
// file named after the compile's output besides it (profile data, stack
// usage, split DWARF, dumps).
func (c *cmdline) namesAuxFiles() bool {
	for _, a := range c.args {
		if f := a.flag; strings.HasPrefix(f, "-fdump-") || strings.HasPrefix(f, "-gsplit-dwarf") || strings.HasPrefix(f, "-fprofile-") ||
			f == "--coverage" || f == "-ftest-coverage" || f == "-fstack-usage" || strings.HasPrefix(f, "-fcallgraph-info") || f == "-aux-info" {
			return true
		}
	}
	return false
}

// auxNames are the gcc flags that name the auxiliary files of in's compile
// into a temporary object, for a command that links (gcc 11 and later),
// as gcc's driver names them when it compiles the source itself
// (auxPrefix: OUTPUT-INPUT.gcda, .su, .dwo). None when the command names
// them itself (-dumpdir, -dumpbase).
func (c *cmdline) auxNames(in *input) []string {
	for _, a := range c.args {
		if strings.HasPrefix(a.flag, "-dumpdir") || strings.HasPrefix(a.flag, "-dumpbase") {
			return nil
		}
	}
	dir := c.auxPrefix(in)
	if dir == "" {
		dir = "./"
	}
	base := filepath.Base(in.name)
	return []string{"-dumpdir", dir, "-dumpbase", base, "-dumpbase-ext", filepath.Ext(base)}
}

// tempsBase is where -save-temps keeps the intermediate files of input in,
// without their extension, as gcc 12 names them: beside the object or
// assembly it writes (out, for -c and -S), and for a program linked whole
// auxPrefix's.
func (c *cmdline) tempsBase(in *input, out string) string {
	if c.stage != stageLink {
		return strings.TrimSuffix(out, filepath.Ext(out))
	}
	return c.auxPrefix(in) + outputName(in.name, "")
}

// auxPrefix is what gcc 12 puts before the base name of in in the names
// of a linked unit's intermediate and auxiliary files: "OUTPUT-" (a-
// without -o), or the output's directory when the one source has the
// output's name (-o sub/x x.c: sub/x.i).
func (c *cmdline) auxPrefix(in *input) string {
	out, prefix := c.output, c.output+"-"
	if out == "" {
		out, prefix = "a.out", "a-"
	}
	stem := func(name string) string { b := filepath.Base(name); return strings.TrimSuffix(b, filepath.Ext(b)) }
	if c.sources() == 1 && stem(out) == stem(in.name) {
		if d := filepath.Dir(out); d != "." {
			return d + "/"
		}
		return ""
	}
	return prefix
}

// sources counts the inputs gcc's driver compiles (not objects, archives
// or shared libraries).
func (c *cmdline) sources() int {
	n := 0
	for _, i := range c.inputs {
		if ext := filepath.Ext(i.name); i.kind != inOther || i.lang != "" || ext != ".o" && ext != ".a" && ext != ".lo" && !strings.Contains(i.name, ".so") {
			n++
		}
	}
	return n
}

// outputName is the file gcc writes for src under -c (suffix ".o") or -S
// (".s") without -o: the source's base name, in the current directory.
func outputName(src, suffix string) string {
	base := filepath.Base(src)
	return strings.TrimSuffix(base, filepath.Ext(base)) + suffix
}
