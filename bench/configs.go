package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weave-profiler/weave/runtime"
)

// Build variants: how a benchmark program is compiled. Every variant
// compiles with the same optimisation level and -g.
const (
	vGCC      = "gcc"       // gcc
	vWeave    = "weave"     // weave cc, WEAVE_CC=gcc (the default frame policy, auto)
	vWeaveAll = "weave-all" // weave cc --frames=all: every function framed
	vPG       = "pg"        // gcc -pg
	vClang    = "clang"     // clang
	vLSan     = "lsan"      // clang -fsanitize=leak
)

// config is one way of running a benchmark program.
type config struct {
	name    string
	desc    string // for the tables' legend
	variant string
	tool    string // the optional tool it needs, or ""
	peer    bool   // a peer tool: its failures are reported, not fatal
	// wrap turns the program's argv into the command to run in dir, with
	// extra environment, and names the profile it writes ("" for none).
	wrap func(dir string, argv []string) (args, env []string, out string)
}

// weaveMode is a weave configuration: the runtime's environment variables.
type weaveMode struct {
	name, desc string
	env        []string
}

// configs lists every configuration, the runtime's (runtime.Configs)
// included, in the tables' order.
func configs(e *env, extra []string) []*config {
	plainRun := func(dir string, argv []string) ([]string, []string, string) { return argv, nil, "" }
	cs := []*config{
		{name: "plain", desc: "uninstrumented: gcc -O2 -g", variant: vGCC, wrap: plainRun},
	}
	weaveRun := func(menv []string) func(string, []string) ([]string, []string, string) {
		return func(dir string, argv []string) ([]string, []string, string) {
			out := filepath.Join(dir, "weave.prof")
			return argv, append([]string{"WEAVE_OUT=" + out}, menv...), out
		}
	}
	var modes []weaveMode
	for _, c := range runtime.Configs {
		modes = append(modes, weaveMode{c.Name, c.Desc, c.Env})
	}
	for _, s := range extra {
		m, err := parseWeaveEnv(s)
		if err != nil {
			logf("ignoring -weave-env %q: %v", s, err)
			continue
		}
		modes = append(modes, m)
	}
	for _, m := range modes {
		v := vWeave
		if slices.Contains(m.env, "WEAVE_TIME=exact") { // exact timing counts every call
			v, m.desc = vWeaveAll, m.desc+", built --frames=all"
		}
		cs = append(cs, &config{name: m.name, desc: m.desc, variant: v, wrap: weaveRun(m.env)})
	}
	cs = append(cs, &config{name: "weave-frames-all", desc: "weave cc --frames=all (every function framed), the runtime's defaults",
		variant: vWeaveAll, wrap: weaveRun(nil)})
	cs = append(cs,
		&config{name: "gprof", desc: "gcc -O2 -g -pg (gmon.out written at exit)", variant: vPG, peer: true,
			wrap: func(dir string, argv []string) ([]string, []string, string) {
				return argv, nil, filepath.Join(dir, "gmon.out")
			}},
		&config{name: "uftrace", desc: "uftrace record on the -pg build", variant: vPG, tool: "uftrace", peer: true,
			wrap: func(dir string, argv []string) ([]string, []string, string) {
				out := filepath.Join(dir, "uftrace.data")
				return append([]string{e.tools["uftrace"], "record", "-d", out}, argv...), nil, out
			}},
		&config{name: "memcheck", desc: "valgrind --tool=memcheck (default options) on the gcc build", variant: vGCC, tool: "valgrind", peer: true,
			wrap: func(dir string, argv []string) ([]string, []string, string) {
				return append([]string{e.tools["valgrind"], "--tool=memcheck"}, argv...), nil, ""
			}},
		&config{name: "massif", desc: "valgrind --tool=massif on the gcc build", variant: vGCC, tool: "valgrind", peer: true,
			wrap: func(dir string, argv []string) ([]string, []string, string) {
				out := filepath.Join(dir, "massif.out")
				return append([]string{e.tools["valgrind"], "--tool=massif", "--massif-out-file=" + out}, argv...), nil, out
			}},
		&config{name: "heaptrack", desc: "heaptrack on the gcc build (wall time includes its interpreter process)", variant: vGCC, tool: "heaptrack", peer: true,
			wrap: func(dir string, argv []string) ([]string, []string, string) {
				out := filepath.Join(dir, "heaptrack")
				return append([]string{e.tools["heaptrack"], "-o", out}, argv...), nil, out + "*"
			}},
		&config{name: "clang", desc: "uninstrumented clang -O2 -g (LeakSanitizer's baseline, for reference)", variant: vClang, tool: "clang", peer: true, wrap: plainRun},
		&config{name: "lsan", desc: "clang -O2 -g -fsanitize=leak (LSAN_OPTIONS=exitcode=0)", variant: vLSan, tool: "clang", peer: true,
			wrap: func(dir string, argv []string) ([]string, []string, string) {
				return argv, []string{"LSAN_OPTIONS=exitcode=0"}, ""
			}},
	)
	return cs
}

// selectConfigs keeps the configurations named in list (all if empty)
// whose tools are installed; plain is always kept.
func selectConfigs(all []*config, list string, e *env) ([]*config, error) {
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var cs []*config
	known := map[string]bool{}
	for _, c := range all {
		known[c.name] = true
		if len(want) > 0 && !want[c.name] && c.name != "plain" {
			continue
		}
		if c.tool != "" && !e.has(c.tool) {
			continue
		}
		cs = append(cs, c)
	}
	for n := range want {
		if !known[n] {
			return nil, fmt.Errorf("unknown configuration %q", n)
		}
	}
	return cs, nil
}

// parseWeaveEnv parses a -weave-env flag, name:VAR=value[,VAR=value].
func parseWeaveEnv(s string) (weaveMode, error) {
	name, vars, ok := strings.Cut(s, ":")
	if !ok || name == "" || vars == "" {
		return weaveMode{}, fmt.Errorf("want name:VAR=value[,VAR=value]")
	}
	m := weaveMode{name: name, desc: "weave with " + strings.ReplaceAll(vars, ",", " ")}
	for _, v := range strings.Split(vars, ",") {
		if !strings.Contains(v, "=") {
			return weaveMode{}, fmt.Errorf("%q is not VAR=value", v)
		}
		m.env = append(m.env, v)
	}
	return m, nil
}
