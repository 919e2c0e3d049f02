package main

import (
	"errors"
	"os"
	"os/exec"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/goweave"
)

// goCommand is `weave go build|test|run|install|vet [--packages p,...]
// [--frames auto|all] args`: the go command with weave as its -toolexec.
var goCommand = &cli.Command{
	Name:      "go",
	Usage:     "run the go command with weave weaving the main module (and --packages patterns)",
	UsageText: "weave go build|test|run|install|vet [--packages pattern,...] [--frames auto|all] [go flags] [packages]",
	Description: "Runs the go command with -toolexec=\"weave toolexec\": the main module's packages (and\n" +
		"those --packages selects: import paths, ... wildcards, std) are woven, the runtime linked.\n" +
		"Each program or test binary writes a profile at exit. See docs/go.md.",
	Flags: []cli.Flag{
		&cli.StringSliceFlag{Name: "packages", Usage: "more `patterns` of packages to weave (comma-separated, repeatable)"},
		&cli.StringFlag{Name: "frames", Usage: "`auto` (default; WEAVE_FRAMES) or all: which functions get a frame, as for C"},
	},
	SkipFlagParsing: true,
	Action: func(c *cli.Context) error {
		args := c.Args().Slice()
		if helpArg(args) {
			return showCommandHelp(c, "go")
		}
		if len(args) == 0 {
			return misuse(c, "which go command? (build, test, run, install, vet)")
		}
		frames, rest, found := framesFlag(args[1:])
		if found && frames == "" {
			return misuse(c, "--frames needs a value (auto or all)")
		}
		if !found {
			frames = os.Getenv(goweave.FramesEnv)
		}
		if _, err := goweave.ParseFrames(frames); err != nil {
			return err
		}
		patterns, rest, err := packagesFlag(rest)
		if err != nil {
			return misuse(c, "%v", err)
		}
		self, err := os.Executable()
		if err != nil {
			return err
		}
		goArgs := append([]string{args[0], "-toolexec", self + " toolexec"}, rest...)
		cmd := exec.Command("go", goArgs...)
		cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, c.App.Writer, c.App.ErrWriter
		cmd.Env = append(os.Environ(), goweave.PackagesEnv+"="+strings.Join(patterns, ","), goweave.FramesEnv+"="+frames)
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return cli.Exit("", ee.ExitCode()) // go has said why
			}
			return err
		}
		return nil
	},
}

// toolexecCommand is `weave toolexec [--packages p,...] tool args...`, run by
// the go command for each tool of a build.
var toolexecCommand = &cli.Command{
	Name:      "toolexec",
	Usage:     "weave Go packages as go build's -toolexec",
	UsageText: `go build -toolexec="weave toolexec [--packages pattern,...]" ./...`,
	Description: "Run by the go command for each tool of a build: weaves the packages selected before\n" +
		"the compiler sees them and adds the runtime to the link. weave go does this for you.",
	Flags:           []cli.Flag{&cli.StringSliceFlag{Name: "packages", Usage: "more `patterns` of packages to weave (comma-separated, repeatable)"}},
	SkipFlagParsing: true,
	Action: func(c *cli.Context) error {
		if helpArg(c.Args().Slice()) {
			return showCommandHelp(c, "toolexec")
		}
		if c.NArg() == 0 {
			return misuse(c, "no tool to run (go build runs weave toolexec TOOL ARGS...)")
		}
		patterns, rest, err := packagesFlag(c.Args().Slice())
		if err != nil {
			return misuse(c, "%v", err)
		}
		if env := os.Getenv(goweave.PackagesEnv); env != "" {
			patterns = append(patterns, strings.Split(env, ",")...)
		}
		err = goweave.Toolexec(rest, patterns, c.App.Writer, c.App.ErrWriter)
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return cli.Exit("", ee.ExitCode()) // the tool has said why
		}
		return err
	},
}

// packagesFlag takes the --packages options (comma-separated patterns,
// repeatable) out of args; one without patterns is an error (it went to
// the go command, which said "flag provided but not defined").
func packagesFlag(args []string) (patterns, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		var v string
		switch {
		case a == "--packages" || a == "-packages":
			if i+1 >= len(args) {
				return nil, nil, errNoPackages
			}
			v = args[i+1]
			i++
		case strings.HasPrefix(a, "--packages="), strings.HasPrefix(a, "-packages="):
			_, v, _ = strings.Cut(a, "=")
		default:
			rest = append(rest, a)
			continue
		}
		if strings.Trim(v, ",") == "" {
			return nil, nil, errNoPackages
		}
		for _, p := range strings.Split(v, ",") {
			if p != "" {
				patterns = append(patterns, p)
			}
		}
	}
	return patterns, rest, nil
}

var errNoPackages = errors.New("--packages needs patterns (comma-separated)")
