package goweave

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The runtime's standard packages must be those of the user's build: the
// linker refuses a package compiled against another build of its imports
// ("fingerprint mismatch: os has ..., import from .../goweave/rt
// expecting ..."). Besides -race, -msan and -asan, which the compile's own
// arguments show, -trimpath and -gcflags=all=... (delve's -N -l) change the
// standard library's export data; the go command's flags that may are
// passed on to the runtime's build, from GOFLAGS and from the command line
// of the go command that runs weave toolexec (/proc/PPID/cmdline, Linux).

// stdBool and stdValue are the go command's flags passed on: they change
// how the standard library is compiled, or which of its files.
var (
	stdBool  = map[string]bool{"trimpath": true, "race": true, "msan": true, "asan": true}
	stdValue = map[string]bool{"gcflags": true, "asmflags": true, "tags": true}
	// goValue are the other flags of go build and go test that take a
	// value, which may be the next argument.
	goValue = map[string]bool{"o": true, "p": true, "C": true, "toolexec": true, "ldflags": true, "gccgoflags": true,
		"mod": true, "modfile": true, "overlay": true, "pkgdir": true, "pgo": true, "buildmode": true, "compiler": true,
		"installsuffix": true, "coverpkg": true, "covermode": true, "exec": true, "run": true, "skip": true, "bench": true,
		"benchtime": true, "count": true, "cpu": true, "timeout": true, "parallel": true, "outputdir": true, "vet": true,
		"coverprofile": true, "cpuprofile": true, "memprofile": true, "memprofilerate": true, "blockprofile": true,
		"blockprofilerate": true, "mutexprofile": true, "mutexprofilefraction": true, "trace": true, "fuzz": true,
		"fuzztime": true, "fuzzminimizetime": true, "shuffle": true, "list": true}
)

// stdFlags returns the flags of GOFLAGS and of the parent go command that
// change the standard library's compile, in the go command's order
// (GOFLAGS first, the command line after).
func stdFlags() []string {
	flags := pickStdFlags(strings.Fields(os.Getenv("GOFLAGS")))
	return append(flags, pickStdFlags(parentGoArgs())...)
}

// parentGoArgs returns the arguments after the subcommand of the go
// command that runs this process, or nil when the parent is not one.
func parentGoArgs() []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(os.Getppid()) + "/cmdline")
	if err != nil {
		return nil
	}
	argv := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	if len(argv) < 2 || !strings.HasPrefix(filepath.Base(argv[0]), "go") {
		return nil
	}
	return argv[2:]
}

// pickStdFlags returns the flags of args that stdBool and stdValue name,
// each as one -name=value or -name argument.
func pickStdFlags(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-args" || a == "--args" {
			break // the test binary's arguments
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		switch {
		case stdBool[name]:
			out = append(out, a)
		case stdValue[name] && hasValue:
			out = append(out, "-"+name+"="+value)
		case stdValue[name] && i+1 < len(args):
			out = append(out, "-"+name+"="+args[i+1])
			i++
		case goValue[name] && !hasValue:
			i++
		}
	}
	return out
}
