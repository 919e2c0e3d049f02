package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Build variants: how a benchmark program is compiled. Every variant
// compiles with the same optimisation level and -g.
const (
	vGCC   = "gcc"   // gcc
	vWeave = "weave" // weave cc, WEAVE_CC=gcc
	vPG    = "pg"    // gcc -pg
	vClang = "clang" // clang
	vLSan  = "lsan"  // clang -fsanitize=leak
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

// configs lists every configuration, the weave modes the runtime
// documents included, in the tables' order.
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
	desc := "weave cc -O2 -g, the runtime's defaults (everything on)"
	if _, def := envValues(e.rtComment, "WEAVE_TIME"); def != "" {
		desc += ", WEAVE_TIME=" + def
	}
	modes := append([]weaveMode{{"weave", desc, nil}}, weaveModes(e.rtComment)...)
	for _, s := range extra {
		m, err := parseWeaveEnv(s)
		if err != nil {
			logf("ignoring -weave-env %q: %v", s, err)
			continue
		}
		modes = append(modes, m)
	}
	for _, m := range modes {
		cs = append(cs, &config{name: m.name, desc: m.desc, variant: vWeave, wrap: weaveRun(m.env)})
	}
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

// weaveModes returns the weave configurations besides the default one that
// the runtime's top comment documents: WEAVE_TIME's values (off: memory
// only), and a switch turning memory profiling off (timing only).
func weaveModes(comment string) []weaveMode {
	var ms []weaveMode
	vals, def := envValues(comment, "WEAVE_TIME")
	for _, v := range vals {
		if v == "off" || v == "0" {
			ms = append(ms, weaveMode{"weave-mem", "weave, memory only (WEAVE_TIME=" + v + ")", []string{"WEAVE_TIME=" + v}})
		}
	}
	for _, v := range vals {
		if v != def && v != "off" && v != "0" && v != "on" && v != "1" {
			ms = append(ms, weaveMode{"weave-" + v, "weave with WEAVE_TIME=" + v, []string{"WEAVE_TIME=" + v}})
		}
	}
	for _, name := range []string{"WEAVE_MEM", "WEAVE_MEMORY", "WEAVE_HEAP", "WEAVE_ALLOC", "WEAVE_ALLOCS"} {
		vals, _ := envValues(comment, name)
		for _, v := range vals {
			if v == "off" || v == "0" {
				ms = append(ms, weaveMode{"weave-time", "weave, timing only (" + name + "=" + v + ")", []string{name + "=" + v}})
				break
			}
		}
	}
	vals, _ = envValues(comment, "WEAVE_HIDDEN")
	for _, v := range vals {
		if v == "off" || v == "0" {
			ms = append(ms, weaveMode{"weave-nohidden", "weave without malloc interposition (WEAVE_HIDDEN=" + v + ")", []string{"WEAVE_HIDDEN=" + v}})
			break
		}
	}
	return ms
}

// envValues returns the values a documented environment variable takes,
// and the one marked "(default)": the quoted words and the words like
// exact|sampled|off in the lines that describe it (from its name to the
// next variable or blank line).
func envValues(comment, name string) (vals []string, def string) {
	var desc []string
	in := false
	for _, l := range strings.Split(comment, "\n") {
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, name+" ") || strings.HasPrefix(t, name+"=") || t == name:
			in = true
		case in && (t == "" || strings.HasPrefix(t, "WEAVE_")):
			in = false
		}
		if in {
			desc = append(desc, t)
		}
	}
	if desc == nil {
		return nil, ""
	}
	text := strings.Join(desc, " ")
	if m := regexp.MustCompile(`"?([A-Za-z0-9_]+)"? \(default\)`).FindStringSubmatch(text); m != nil {
		def = m[1]
	}
	seen := map[string]bool{}
	add := func(v string) {
		if v != "" && !seen[v] {
			seen[v] = true
			vals = append(vals, v)
		}
	}
	for _, m := range regexp.MustCompile(`"([a-z0-9_]+)"`).FindAllStringSubmatch(text, -1) {
		add(m[1])
	}
	for _, m := range regexp.MustCompile(`=([a-z0-9]+(?:\|[a-z0-9]+)+)|\b([a-z]+(?:\|[a-z]+)+)\b`).FindAllStringSubmatch(text, -1) {
		for _, v := range strings.Split(m[1]+m[2], "|") {
			add(v)
		}
	}
	return vals, def
}
