package runtime

import (
	"maps"
	"testing"
)

// TestConfigs: each of the runtime's declared configurations is one it
// reads: its environment changes the profile's M records from the
// defaults' (and the defaults add none).
func TestConfigs(t *testing.T) {
	exe := build(t, "gcc", "widgets10k")
	meta := func(env []string) map[string]string {
		m := readProfile(t, run(t, exe, env).profile()).meta
		for _, k := range []string{"pid", "ppid", "argv", "start_ns", "end_ns", "time_samples", "time_tsc_hz",
			"time_call_overhead_ps", "time_overhead_ns"} {
			delete(m, k)
		}
		return m
	}
	if len(Configs) == 0 || Configs[0].Env != nil {
		t.Fatalf("Configs must start with the defaults: %+v", Configs)
	}
	def := meta(nil)
	for _, c := range Configs[1:] {
		if m := meta(c.Env); maps.Equal(m, def) {
			t.Errorf("%s (%q): the same M records as the defaults: %v", c.Name, c.Env, m)
		}
	}
}
