package main

import (
	"errors"
	"strings"

	"github.com/weave-profiler/weave/driver"
	"github.com/weave-profiler/weave/weave"
)

// framesFlag takes weave's --frames=auto|unit|all (or "--frames auto") out of a
// command line: the value ("" if absent) and the other arguments. A
// --frames last, with no value, is kept for setFrames to refuse.
func framesFlag(args []string) (value string, rest []string, found bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--frames="):
			value, found = a[len("--frames="):], true
		case a == "--frames" && i+1 == len(args):
			value, found = "", true
		case a == "--frames":
			value, found = args[i+1], true
			i++
		default:
			rest = append(rest, a)
		}
	}
	return value, rest, found
}

// setFrames sets cfg's frame policy: the --frames value if found, else
// $WEAVE_FRAMES, else auto.
func setFrames(cfg *driver.Config, value string, found bool) error {
	var err error
	if found && value == "" {
		return errors.New("--frames needs a value (auto, unit or all)")
	}
	if found {
		cfg.Frames, err = weave.ParseFrames(value)
		return err
	}
	cfg.Frames, err = driver.FramesFromEnv()
	return err
}
