package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
	"github.com/weave-profiler/weave/goweave"
	"github.com/weave-profiler/weave/internal/samefile"
)

// weaveAction is `weave [-v] -o out.c prog.c [cc flags]`.
func weaveAction(c *cli.Context) error {
	frames, args, framesFound := framesFlag(c.Args().Slice())
	cfg, err := newConfig(c)
	if err != nil {
		return err
	}
	args, err = pointcuts(cfg, args)
	if err != nil {
		return err
	}
	var out, src string
	var flags []string
	verbose := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help" || a == "-help":
			return cli.ShowAppHelp(c)
		case a == "--version":
			_, err := fmt.Fprint(c.App.Writer, versionText())
			return err
		case a == "-v" || a == "--verbose" || a == "--weave-verbose":
			verbose = true
		case a == "-o":
			if i+1 >= len(args) {
				return misuse(c, "-o needs a file name")
			}
			out = args[i+1]
			i++
		case strings.HasPrefix(a, "-o"):
			out = a[2:]
		case strings.HasPrefix(a, "--std=") || a == "--ansi": // the compiler's, for the dialect
			flags = append(flags, a)
		case a == "--std" && i+1 < len(args):
			flags = append(flags, a, args[i+1])
			i++
		case strings.HasPrefix(a, "--"):
			return misuse(c, "unknown flag %s (compiler flags take one dash)", a)
		case a == "-M" || a == "-MM":
			// They turn -E's output into make rules: nothing to weave.
			return misuse(c, "%s prints dependencies instead of the preprocessed unit: use -MD or -MMD with weave -o, or weave cc %s", a, a)
		case strings.HasPrefix(a, "-") && a != "-": // "-": the source on standard input
			flags = append(flags, a)
			if driver.FlagTakesValue(a) {
				if i+1 >= len(args) { // weave's own flags would follow it
					return misuse(c, "%s needs a value", a)
				}
				flags = append(flags, args[i+1])
				i++
			}
		default:
			if src == "" && c.App.Command(a) != nil { // weave -v cc ...
				return misuse(c, "%s is a command: it comes first (weave %s ...)", a, a)
			}
			if src == "" && mistypedCommand(a) {
				return misuse(c, "%s: no such command or file (weave --help lists the commands)", a)
			}
			if src != "" {
				return misuse(c, "one source file at a time (got %s and %s); weave cc takes many", src, a)
			}
			src = a
		}
	}
	if src == "" {
		return misuse(c, "no input file")
	}
	if err := samefile.Check(out, src); err != nil {
		return err
	}
	if strings.HasSuffix(src, ".go") {
		if !framesFound {
			frames = os.Getenv(goweave.FramesEnv)
		}
		return weaveGoFile(c, src, out, flags, frames)
	}
	cfg.Verbose = cfg.Verbose || verbose
	if err := setFrames(cfg, frames, framesFound); err != nil {
		return err
	}
	return cfg.WeaveFile(src, out, flags)
}

// mistypedCommand tells whether the first operand looks like a command
// name (a bare word naming no file) rather than a source: `weave reprot`.
func mistypedCommand(a string) bool {
	if a == "-" || strings.ContainsAny(a, "./") {
		return false
	}
	_, err := os.Stat(a)
	return err != nil
}
