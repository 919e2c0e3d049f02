package main

import (
	"fmt"
	goruntime "runtime"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/weave-profiler/weave/profile"
	"github.com/weave-profiler/weave/runtime"
	"github.com/weave-profiler/weave/tracepoints"
)

// version is weave's version, its one definition: set at build time
// (go build -ldflags "-X main.version=1.2.0", make build VERSION=1.2.0);
// when empty, the module version go install recorded or the commit the
// binary was built from.
var version string

// weaveVersion is version, or what the build recorded.
func weaveVersion() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = ", modified"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	return fmt.Sprintf("devel (%.12s, %s%s)", rev, at, dirty)
}

// versionText is what weave version prints: weave's version, then the
// versions of what it reads and links.
func versionText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "weave %s %s %s/%s\n", weaveVersion(), goruntime.Version(), goruntime.GOOS, goruntime.GOARCH)
	fmt.Fprintf(&b, "profile format %d\n", profile.Version)
	fmt.Fprintf(&b, "runtime ABI %d\n", runtime.ABI())
	fmt.Fprintf(&b, "trace format %d\n", tracepoints.FormatVersion)
	return b.String()
}

// versionCommand is `weave version` (and `weave --version`).
var versionCommand = &cli.Command{
	Name:  "version",
	Usage: "print weave's version and those of its profile format, runtime ABI and trace format",
	Action: func(c *cli.Context) error {
		if c.NArg() > 0 {
			return misuse(c, "unexpected argument %q", c.Args().First())
		}
		_, err := fmt.Fprint(c.App.Writer, versionText())
		return err
	},
}
