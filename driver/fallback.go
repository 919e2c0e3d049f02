package driver

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/weave-profiler/weave/api"
)

// fallback compiles the input of j unwoven, as the user's command line
// would. If that fails too, the failure is the compiler's to report, and
// weave adds nothing. Otherwise weave warns (or, under Strict, fails).
func (cfg *Config) fallback(c *cmdline, j *job, deps []string, stdin []byte, reason string, sc *scratch) {
	tmp, err := sc.path()
	if err != nil {
		j.err = err
		return
	}
	out := j.out
	if cfg.Strict {
		out = filepath.Join(tmp, fmt.Sprintf("%d-strict%s", j.n, filepath.Ext(j.out)))
	}
	var ccErr bytes.Buffer
	err = cfg.runTo(&ccErr, stdin, cfg.plainArgv(c, j, deps, out))
	if err != nil {
		j.stderr.Write(ccErr.Bytes())
		var ee *ExitError
		if errors.As(err, &ee) {
			ee.Quiet = true
		}
		j.err = err
		return
	}
	name := displayName(j.in.name)
	if cfg.Strict {
		j.err = &ExitError{Code: 1, Err: fmt.Errorf("error: %s: not woven: %s", name, reason)}
		return
	}
	fmt.Fprintf(&j.stderr, "weave: warning: %s: not woven: %s\n", name, reason)
	j.stderr.Write(ccErr.Bytes())
}

// plainArgv is the command line compiling j's input unwoven to out.
func (cfg *Config) plainArgv(c *cmdline, j *job, deps []string, out string) []string {
	lang := "c"
	if j.in.kind == inI {
		lang = "cpp-output"
	}
	argv := slices.Concat(cfg.Compiler, c.fallbackFlags(), api.Flags(false), deps)
	return append(argv, modeFlag(c), "-x", lang, j.in.name, "-o", out)
}

// plainCompiles says whether j's input compiles unwoven without error
// (into a temporary file, its diagnostics dropped).
func (cfg *Config) plainCompiles(c *cmdline, j *job, deps []string, stdin []byte, sc *scratch) bool {
	tmp, err := sc.path()
	if err != nil {
		return false
	}
	out := filepath.Join(tmp, fmt.Sprintf("%d-plain%s", j.n, filepath.Ext(j.out)))
	defer os.Remove(out)
	var diags bytes.Buffer
	return cfg.runTo(&diags, stdin, cfg.plainArgv(c, j, deps, out)) == nil
}

// macroWarningRE is an error that is a warning under -Werror: gcc's
// "[-Werror=address]", clang's "[-Werror,-Wtautological-pointer-compare]".
var macroWarningRE = regexp.MustCompile(`\[-Werror[=,]-?W?([a-z0-9=-]+)\]$`)

// macroWarnings returns the flags turning off the warnings that make
// every error of the compiler's diagnostics diags (-Wno-address), nil if
// some error is not such a warning.
func macroWarnings(diags string) []string {
	var off []string
	for _, l := range strings.Split(diags, "\n") {
		if !strings.Contains(l, "error:") {
			continue
		}
		m := macroWarningRE.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			return nil
		}
		if f := "-Wno-" + strings.TrimSuffix(m[1], "="); !slices.Contains(off, f) {
			off = append(off, f)
		}
	}
	return off
}
