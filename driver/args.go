package driver

import (
	"path/filepath"
	"strings"
)

// A command line of a C compiler driver, taken apart.
type cmdline struct {
	inputs  []input  // source and object files, in order
	flags   []string // every flag, in order, with its value if separate
	output  string   // -o
	compile bool     // -c
	asm     bool     // -S
	pre     bool     // -E
	depOnly bool     // -M or -MM without -MD/-MMD: only write dependencies
	shared  bool     // -shared
	depGen  bool     // -MD or -MMD
	depFile string   // -MF
	depTarg bool     // -MT or -MQ given
}

type input struct {
	name string
	lang string // "c" for C sources (by suffix or -x c), else "" (pass through)
}

// flagsWithValue are the driver flags whose value is the next argument.
var flagsWithValue = map[string]bool{
	"-o": true, "-I": true, "-D": true, "-U": true, "-include": true, "-imacros": true,
	"-isystem": true, "-idirafter": true, "-iquote": true, "-iprefix": true, "-iwithprefix": true,
	"-isysroot": true, "-x": true, "-MF": true, "-MT": true, "-MQ": true, "-L": true, "-l": true,
	"-Xlinker": true, "-Xpreprocessor": true, "-Xassembler": true, "-T": true, "-e": true,
	"-u": true, "-z": true, "-aux-info": true, "-arch": true, "-target": true, "--param": true,
}

// parseCmdline splits a driver command line (without argv[0]).
func parseCmdline(args []string) *cmdline {
	c := &cmdline{}
	lang := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "-" || !strings.HasPrefix(a, "-") {
			l := lang
			if l == "" && strings.HasSuffix(a, ".c") {
				l = "c"
			}
			if l != "c" {
				l = ""
			}
			c.inputs = append(c.inputs, input{name: a, lang: l})
			continue
		}
		val := ""
		if flagsWithValue[a] && i+1 < len(args) {
			val = args[i+1]
			i++
		}
		switch {
		case a == "-o":
			c.output = val
			continue
		case a == "-x":
			lang = val
			if lang == "none" {
				lang = ""
			}
		case strings.HasPrefix(a, "-x") && len(a) > 2:
			lang = a[2:]
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			c.output = a[2:]
			continue
		case a == "-c":
			c.compile = true
		case a == "-S":
			c.asm = true
		case a == "-E":
			c.pre = true
		case a == "-M" || a == "-MM":
			c.depOnly = true
		case a == "-MD" || a == "-MMD":
			c.depGen = true
		case a == "-MF":
			c.depFile = val
		case a == "-MT" || a == "-MQ":
			c.depTarg = true
		case a == "-shared":
			c.shared = true
		}
		c.flags = append(c.flags, a)
		if val != "" {
			c.flags = append(c.flags, val)
		}
	}
	if c.depGen && c.depOnly {
		c.depOnly = false
	}
	return c
}

// preprocessFlags are the flags for the -E step: everything but the mode,
// the output and the link-only flags.
func (c *cmdline) preprocessFlags() []string {
	var r []string
	for i := 0; i < len(c.flags); i++ {
		f := c.flags[i]
		val := flagsWithValue[f] && i+1 < len(c.flags)
		switch {
		case f == "-c" || f == "-S" || f == "-E" || f == "-shared" || f == "-static" || f == "-x":
		case f == "-l" || f == "-L" || f == "-Xlinker" || f == "-T" || f == "-e" || f == "-u" || f == "-z":
		case strings.HasPrefix(f, "-l") || strings.HasPrefix(f, "-L") || strings.HasPrefix(f, "-Wl,") || strings.HasPrefix(f, "-x"):
		case f == "-P":
		default:
			r = append(r, f)
			if val {
				r = append(r, c.flags[i+1])
			}
		}
		if val {
			i++
		}
	}
	return r
}

// compileFlags are the flags for compiling woven preprocessed text:
// everything but preprocessor, dependency, mode, output and link flags.
func (c *cmdline) compileFlags() []string {
	var r []string
	for i := 0; i < len(c.flags); i++ {
		f := c.flags[i]
		val := flagsWithValue[f] && i+1 < len(c.flags)
		switch {
		case f == "-c" || f == "-S" || f == "-E" || f == "-x" || strings.HasPrefix(f, "-x"):
		case f == "-I" || f == "-D" || f == "-U" || f == "-include" || f == "-imacros" || f == "-isystem" ||
			f == "-idirafter" || f == "-iquote" || f == "-iprefix" || f == "-iwithprefix" || f == "-Xpreprocessor":
		case strings.HasPrefix(f, "-I") || strings.HasPrefix(f, "-D") || strings.HasPrefix(f, "-U") || strings.HasPrefix(f, "-M"):
		case f == "-l" || f == "-L" || f == "-Xlinker" || f == "-T" || f == "-e" || f == "-u" || f == "-z":
		case strings.HasPrefix(f, "-l") || strings.HasPrefix(f, "-L") || strings.HasPrefix(f, "-Wl,") || f == "-shared" || f == "-static":
		case f == "-Wp," || strings.HasPrefix(f, "-Wp,"):
		default:
			r = append(r, f)
			if val {
				r = append(r, c.flags[i+1])
			}
		}
		if val {
			i++
		}
	}
	return r
}

// targetFlags are the flags that select the ABI or instrumentation the
// runtime must be built with to link with the program.
func (c *cmdline) targetFlags() []string {
	var r []string
	for _, f := range c.flags {
		if strings.HasPrefix(f, "-m") || strings.HasPrefix(f, "-fsanitize") || f == "-pthread" {
			r = append(r, f)
		}
	}
	return r
}

// objectName is the object file gcc would write for src under -c.
func objectName(src, suffix string) string {
	base := filepath.Base(src)
	return strings.TrimSuffix(base, filepath.Ext(base)) + suffix
}
