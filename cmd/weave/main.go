// Command weave weaves profiling advice into C programs and reports their profiles.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"weave/parse"
)

func main() {
	app := newApp()
	if err := app.Run(flagsFirst(aliasArgs(os.Args), app.Commands)); err != nil {
		var pe *parse.Error
		if errors.As(err, &pe) { // already file:line:col: error: message
			fmt.Fprintln(os.Stderr, pe)
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
	case "cc", "diff", "merge", "report", "runtime", "maps", "help": // subcommands win; `weave cc` uses $WEAVE_CC
		return false
	}
	p, err := exec.LookPath(arg)
	if err != nil {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// flagsFirst moves the flags that follow the arguments of the profile
// subcommands in front of them (`weave merge a b -o out`, `weave diff A B
// --fail-if RULE`): the command line parser stops at the first argument.
// A "--" ends the flags.
func flagsFirst(args []string, cmds []*cli.Command) []string {
	if len(args) < 2 {
		return args
	}
	var cmd *cli.Command
	for _, c := range cmds {
		if c.Name == args[1] && (c.Name == "diff" || c.Name == "merge" || c.Name == "report") {
			cmd = c
		}
	}
	if cmd == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range cmd.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	var flags, rest []string
	for i := 2; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		name := strings.TrimLeft(a, "-")
		if !strings.HasPrefix(a, "-") || a == "-" || name == "" {
			rest = append(rest, a)
			continue
		}
		flags = append(flags, a)
		if n, _, hasValue := strings.Cut(name, "="); !hasValue && takesValue[n] && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	return slices.Concat(args[:2], flags, rest)
}
