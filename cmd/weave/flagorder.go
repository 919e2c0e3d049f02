package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst moves a subcommand's flags (with their values) before its
// other arguments, so that flags may follow them as users type them
// (`weave report prof --format json`): urfave/cli v2 stops parsing flags at
// the first argument that is not one. Commands that take compiler
// arguments (SkipFlagParsing) are left alone; after "--" every argument is
// positional.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	cmd := app.Command(args[1])
	if cmd == nil || cmd.SkipFlagParsing {
		return args
	}
	var flags, pos []string
	dashdash := false
	rest := args[2:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "--":
			dashdash = true
			pos = append(pos, rest[i+1:]...)
			i = len(rest)
		case len(a) < 2 || a[0] != '-':
			pos = append(pos, a)
		case cmd.Name == "report" && (a == "--between" || a == "-between"):
			// Two values: --between A B is --between A --between-to B.
			flags = append(flags, a)
			if i+1 < len(rest) {
				flags = append(flags, rest[i+1])
				i++
			}
			if i+1 < len(rest) {
				flags = append(flags, "--between-to", rest[i+1])
				i++
			}
		default:
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && takesValue(cmd, name) && i+1 < len(rest) {
				flags = append(flags, rest[i+1])
				i++
			}
		}
	}
	out := slices.Concat(args[:2], flags)
	if dashdash || slices.ContainsFunc(pos, func(p string) bool { return strings.HasPrefix(p, "-") }) {
		out = append(out, "--") // a positional "-..." must not read as a flag
	}
	return append(out, pos...)
}

// takesValue reports whether cmd has a flag called name that takes a value
// (not a boolean one).
func takesValue(cmd *cli.Command, name string) bool {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			v, ok := f.(cli.DocGenerationFlag)
			return ok && v.TakesValue()
		}
	}
	return false
}
