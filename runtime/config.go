package runtime

// A Config is a way to run a woven program: the runtime's environment.
type Config struct {
	Name string   // as the benchmark tables name it
	Desc string   // for their legend
	Env  []string // VAR=value entries added to the environment
}

// Configs lists the runtime's configurations that change what it measures
// (the environment variables of init.c's comment), its defaults first.
// The benchmarks run each.
var Configs = []Config{
	{"weave", "weave cc -O2 -g, the runtime's defaults (everything on), WEAVE_TIME=sampled", nil},
	{"weave-mem", "weave, memory only (WEAVE_TIME=off)", []string{"WEAVE_TIME=off"}},
	{"weave-exact", "weave with WEAVE_TIME=exact", []string{"WEAVE_TIME=exact"}},
	{"weave-nohidden", "weave without malloc interposition (WEAVE_HIDDEN=0)", []string{"WEAVE_HIDDEN=0"}},
}
