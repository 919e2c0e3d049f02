package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/profile"
)

// exitUsage is the exit status of a command used wrongly (an unknown flag,
// a missing argument), as the flag package's.
const exitUsage = 2

// A usageError is a command used wrongly: main prints it as one error
// line and the command's usage line, not its whole help.
type usageError struct {
	cmd *cli.Command // nil: weave itself
	err error
}

func (e *usageError) Error() string { return e.err.Error() }

// misuse returns a usage error of the command c runs.
func misuse(c *cli.Context, format string, args ...any) error {
	return &usageError{cmd: c.Command, err: fmt.Errorf(format, args...)}
}

// onUsageError is urfave/cli's hook for a flag it cannot parse: the
// error as a usageError instead of the error and the whole help.
func onUsageError(c *cli.Context, err error, _ bool) error {
	return &usageError{cmd: c.Command, err: errors.New(flagMessage(err.Error(), c.Command))}
}

// badValue is the flag package's message on a value it cannot parse.
var badValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid (?:boolean )?value (".*") for (?:flag )?(-\S+): (.*)$`)
})

// flagMessage rewrites the flag package's messages in weave's terms
// (its flags are written with two dashes, a one-letter one with one, as
// typed: -x, not --x), a bad value with the form cmd's flag wants.
func flagMessage(s string, cmd *cli.Command) string {
	long := func(name string) string {
		if name = strings.TrimLeft(name, "-"); len(name) == 1 {
			return "-" + name
		}
		return "--" + name
	}
	if name, ok := strings.CutPrefix(s, "flag provided but not defined: "); ok {
		return "unknown flag " + long(name)
	}
	if name, ok := strings.CutPrefix(s, "flag needs an argument: "); ok {
		return long(name) + " needs a value"
	}
	if m := badValue().FindStringSubmatch(s); m != nil {
		return "invalid value " + m[1] + " for " + long(m[2]) + ": " + valueForm(cmd, strings.TrimLeft(m[2], "-"), m[3])
	}
	return s
}

// valueForm is what flag name of cmd wants ("want a duration ..."), in
// place of the flag package's why ("parse error"); why if not known.
func valueForm(cmd *cli.Command, name, why string) string {
	if cmd == nil {
		return why
	}
	i := slices.IndexFunc(cmd.Flags, func(f cli.Flag) bool { return slices.Contains(f.Names(), name) })
	if i < 0 {
		return why
	}
	form := ""
	switch cmd.Flags[i].(type) {
	case *cli.DurationFlag:
		form = "want a duration with its unit, as 500ms, 10s or 2m"
	case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
		form = "want a whole number"
	case *cli.Float64Flag:
		form = "want a number, as 0.5"
	case *cli.BoolFlag:
		form = "want true or false (--" + name + " alone is true)"
	default:
		return why
	}
	if why == "value out of range" {
		return form + " (out of range)"
	}
	return form
}

// printUsageError writes e as main does: "weave: CMD: message", then the
// usage line and where the flags are listed.
func printUsageError(w io.Writer, e *usageError) {
	name, line := "", usageLine(e.cmd)
	if e.cmd != nil && e.cmd.Name != "weave" {
		name = e.cmd.Name
	}
	if name == "" {
		fmt.Fprintf(w, "weave: %v\nusage: %s (weave --help lists the commands and flags)\n", e.err, line)
		return
	}
	hint := ""
	if hasFlags(e.cmd) {
		hint = " (weave help " + name + " lists its flags)"
	}
	fmt.Fprintf(w, "weave: %s: %v\nusage: %s%s\n", name, e.err, line, hint)
}

// usageLine is a command's synopsis: its UsageText's first line, or
// "weave NAME [options] ARGS".
func usageLine(cmd *cli.Command) string {
	if cmd == nil || cmd.Name == "weave" {
		return "weave [-v] [--frames auto|unit|all] -o out.c prog.c [cc flags]"
	}
	if cmd.UsageText != "" {
		line, _, _ := strings.Cut(cmd.UsageText, "\n")
		return line
	}
	s := "weave " + cmd.Name
	if hasFlags(cmd) {
		s += " [options]"
	}
	if cmd.ArgsUsage != "" {
		s += " " + cmd.ArgsUsage
	}
	return s
}

// hasFlags reports whether cmd has flags besides --help.
func hasFlags(cmd *cli.Command) bool {
	return slices.ContainsFunc(cmd.Flags, func(f cli.Flag) bool { return f != cli.HelpFlag })
}

// helpCommand is `weave help [COMMAND]`.
var helpCommand = &cli.Command{
	Name:      "help",
	Usage:     "list the commands, or a command's flags",
	UsageText: "weave help [COMMAND]",
	Action: func(c *cli.Context) error {
		switch c.NArg() {
		case 0:
			return cli.ShowAppHelp(c)
		case 1:
			name := c.Args().First()
			if c.App.Command(name) == nil {
				return misuse(c, "no command %q (weave help lists them)", name)
			}
			return showCommandHelp(c, name)
		}
		return misuse(c, "one command at a time")
	},
}

// showCommandHelp prints a command's help: its usage, description and
// flags.
func showCommandHelp(c *cli.Context, name string) error {
	cmd := c.App.Command(name)
	if cmd.Name == "cc" {
		return ccHelp(c)
	}
	return cli.ShowCommandHelp(c, name)
}

// helpArg reports whether args ask for help: a first argument -h,
// -help or --help (for the commands that take others' arguments).
func helpArg(args []string) bool {
	return len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

// readProfile reads a profile; an error names the file once ("a.prof: no
// such file or directory", not "a.prof: open a.prof: ...").
func readProfile(path string) (*profile.Profile, error) {
	if path == "-" {
		// A profile piped in (ssh host cat x.prof | weave report -), or
		// written into the pipe with the program's own output
		// (WEAVE_OUT=/dev/stdout ./prog | weave report -): that output is
		// skipped, and a fork child's profile summed with its parent's.
		p, n, err := profile.ReadStream(os.Stdin, "standard input")
		if n > 1 {
			fmt.Fprintf(os.Stderr, "weave: standard input: %d profiles (processes) in the stream, summed as weave merge does\n", n)
		}
		return p, err
	}
	p, err := profile.ReadFile(path)
	if errors.Is(err, profile.ErrNotProfile) {
		if hint := programHint(path); hint != "" {
			return nil, fmt.Errorf("%s: %s", path, hint)
		}
	}
	return p, fileError(err)
}

// wovenELF reports whether the ELF file f holds weave's runtime.
func wovenELF(f *elf.File) bool {
	for _, load := range []func() ([]elf.Symbol, error){f.DynamicSymbols, f.Symbols} {
		syms, _ := load()
		for _, s := range syms {
			if s.Name == "__weave_rt_self" {
				return true
			}
		}
	}
	return false
}

// programHint says where the profiles of the program at path went, if
// path is one (an ELF file: `weave report ./prog` for its profile), or "".
func programHint(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if !wovenELF(f) {
		return "a program, not a profile, and not woven: build it with weave cc (README.md), run it, then weave report its profile"
	}
	base := filepath.Base(path)
	hint := fmt.Sprintf("a program, not a profile: its runs write weave-%s.PID.prof (by default in the directory it was linked in) or WEAVE_OUT", base)
	if newest, err := newestProfile(filepath.Dir(path), "weave-"+base+".*.prof"); err == nil {
		hint += "; the newest beside it: " + newest
	}
	return hint
}

// fileError is err, an os error on a file as "FILE: what" (not "open
// FILE: what").
func fileError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}
