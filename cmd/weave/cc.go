package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/driver"
)

// ccCommand is `weave cc`: a C compiler driver that weaves every C source.
var ccCommand = &cli.Command{
	Name:            "cc",
	Usage:           "compile and link like cc, with every C source woven and the runtime linked in",
	UsageText:       "weave cc [weave flags] [cc arguments]",
	SkipFlagParsing: true,
	HideHelp:        true, // the compiler's own, then ccHelp
	Action: func(c *cli.Context) error {
		err := ccAction(c)
		if slices.Contains(c.Args().Slice(), "--help") || slices.Contains(c.Args().Slice(), "-help") {
			// The compiler has answered the line (configure scripts read
			// its options there: curl's `$CC --help --verbose | grep
			// fvisibility=`); weave's flags follow.
			if herr := ccHelp(c); err == nil {
				err = herr
			}
		}
		var ee *driver.ExitError
		if errors.As(err, &ee) && ee.Quiet {
			// The compiler has said why; exit as it did.
			return cli.Exit("", ee.Code)
		}
		return err
	},
}

// ccAction runs the compiler on the line, weaving its C sources.
func ccAction(c *cli.Context) error {
	driver.Warm() // while weave.conf, WEAVE_FLAGS and the pointcuts are read
	cfg, err := newConfig(c)
	if err != nil {
		return err
	}
	if launcherCompiler != nil {
		cfg.Compiler = launcherCompiler
	}
	args := c.Args().Slice()
	if i := slices.Index(args, "--weave-verbose"); i >= 0 {
		cfg.Verbose = true
		args = slices.Delete(slices.Clone(args), i, i+1)
	}
	frames, args, found := framesFlag(args)
	if err := setFrames(cfg, frames, found); err != nil {
		return err
	}
	args, err = pointcuts(cfg, args)
	if err != nil {
		return err
	}
	return cfg.CC(args)
}

// ccHelp is the end of `weave cc --help`: weave's own flags, after the
// compiler's help for the same line (--help=CLASS is the compiler's alone).
func ccHelp(c *cli.Context) error {
	_, err := fmt.Fprint(c.App.Writer, `usage: weave cc [weave flags] [cc arguments]

Compiles and links as cc does ($WEAVE_CC, default cc), with every C source woven and
weave's runtime linked in. weave takes its flags out of the line (they may come
anywhere on it) and passes every other argument to the compiler.

weave flags:
   --frames auto|unit|all        which functions get a frame (default auto; WEAVE_FRAMES)
   --alloc NAME:size=N           NAME returns a block of argument N's size (as xmalloc)
   --calloc NAME:count=N,size=M  NAME returns a block of count x size
   --realloc NAME:ptr=N,size=M   NAME resizes ptr to size
   --free NAME:ptr=N             NAME frees ptr
   --exclude GLOB                functions that get no frame
   --include GLOB                only these functions get frames
   --exclude-file GLOB           files whose functions get no frame
   --frame GLOB                  functions that keep a frame under --frames auto (to trace them)
   --weave-verbose               list the functions left unwoven or frameless, and why
                                 (WEAVE_VERBOSE=1 does the same; -v is the compiler's)

The pointcut flags may also come from weave.conf and WEAVE_FLAGS; WEAVE_CC names the
compiler, WEAVE_STRICT=1 makes a file that cannot be woven an error, WEAVE_CACHE=off
turns off weave's caches (preprocessed and woven text, objects). README.md and docs/building.md in weave's source
say more.

weave cc --help prints the compiler's help for the same line before this (cc --help),
weave cc --help=common (or any --help=CLASS) the compiler's alone.
`)
	return err
}
