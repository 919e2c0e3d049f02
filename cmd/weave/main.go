// Command weave weaves profiling advice into C programs and reports their profiles.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/weave-profiler/weave/parse"
)

func main() {
	app := newApp()
	if err := app.Run(flagsFirst(app, aliasArgs(os.Args))); err != nil {
		var pe *parse.Error
		var ue *usageError
		if errors.As(err, &pe) { // already file:line:col: error: message
			fmt.Fprintln(os.Stderr, pe)
		} else if errors.As(err, &ue) {
			printUsageError(os.Stderr, ue)
			os.Exit(exitUsage)
		} else {
			fmt.Fprintf(os.Stderr, "weave: %v\n", err)
		}
		os.Exit(exitCode(err))
	}
}

// launcherCompiler is the real compiler named on the command line when
// weave runs as a compiler launcher (`weave gcc ...`, `weave ccache gcc
// ...`); nil otherwise, and then `weave cc` uses $WEAVE_CC.
var launcherCompiler []string

// aliasArgs turns the other ways of calling weave into subcommands:
// through a link named weave-cc (CC=weave-cc, for build systems that want
// one word), and as a compiler launcher in ccache's convention, `weave gcc
// args...` (CMAKE_C_COMPILER_LAUNCHER=weave), which is `weave cc` with that
// compiler. A launcher may follow (`weave ccache gcc args...`, CMake's
// CMAKE_C_COMPILER_LAUNCHER="weave;ccache"): the compiler is then both.
func aliasArgs(args []string) []string {
	base := filepath.Base(args[0])
	if base == "weave-cc" || strings.HasPrefix(base, "weave-cc.") {
		return append([]string{args[0], "cc"}, args[1:]...)
	}
	if len(args) > 1 && isCompiler(args[1]) {
		n := 2
		for n < len(args) && isLauncher(args[n-1]) && isCompiler(args[n]) {
			n++
		}
		launcherCompiler = append([]string{}, args[1:n]...)
		return append([]string{args[0], "cc"}, args[n:]...)
	}
	return args
}

// isLauncher reports whether a compiler word names a compiler launcher,
// which takes the compiler as its next argument.
func isLauncher(arg string) bool {
	switch filepath.Base(arg) {
	case "ccache", "distcc", "sccache", "icecc", "buildcache", "pump":
		return true
	}
	return false
}

// isCompiler reports whether a launcher's first argument names a compiler:
// an executable, not a source file or subcommand.
func isCompiler(arg string) bool {
	if strings.HasPrefix(arg, "-") || strings.HasSuffix(arg, ".c") || strings.HasSuffix(arg, ".i") {
		return false
	}
	switch arg {
	case "gcc", "clang":
		return true
	case "cc", "diff", "merge", "report", "runtime", "api", "mark", "maps", "help", "go", "toolexec": // subcommands win; `weave cc` uses $WEAVE_CC
		return false
	}
	p, err := exec.LookPath(arg)
	if err != nil {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
