package main

import (
	"os"
	"reflect"
	"testing"
)

// TestWeaveModes checks the weave configurations found in the runtime's
// top comment.
func TestWeaveModes(t *testing.T) {
	comment := `/* ...
   WEAVE_STATS    "1": add a line with the runtime's own memory use.
   WEAVE_TIME     "sampled" (default), "exact" or "off": how function time
                  is measured; see the "Timing" section at the end.
   WEAVE_TIME_CLOCK  "tsc" or "monotonic": exact mode's clock.
   WEAVE_HEAP     "off": no memory profiling.
*/`
	var got []string
	for _, m := range weaveModes(comment) {
		got = append(got, m.name+" "+m.env[0])
	}
	want := []string{"weave-mem WEAVE_TIME=off", "weave-exact WEAVE_TIME=exact", "weave-time WEAVE_HEAP=off"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("weaveModes = %q, want %q", got, want)
	}
	if vals, def := envValues(comment, "WEAVE_TIME"); def != "sampled" || len(vals) != 3 {
		t.Errorf("envValues = %q, %q", vals, def) // sampled, exact, off
	}
	// The runtime as it is: whatever it documents parses.
	if b, err := os.ReadFile("../runtime/weave_rt.c"); err == nil {
		t.Logf("modes of runtime/weave_rt.c: %+v", weaveModes(topComment(string(b))))
	}
}

// TestSelectConfigs: -configs keeps plain and the configurations named,
// only those, and rejects an unknown name.
func TestSelectConfigs(t *testing.T) {
	var all []*config
	for _, n := range []string{"plain", "weave", "gprof", "uftrace", "memcheck"} {
		all = append(all, &config{name: n})
	}
	got, err := selectConfigs(all, "weave, gprof", &env{})
	var names []string
	for _, c := range got {
		names = append(names, c.name)
	}
	if want := []string{"plain", "weave", "gprof"}; err != nil || !reflect.DeepEqual(names, want) {
		t.Errorf("selectConfigs(weave, gprof) = %q, %v; want %q", names, err, want)
	}
	if _, err := selectConfigs(all, "weave,nosuch", &env{}); err == nil {
		t.Error("an unknown configuration is not rejected")
	}
}
