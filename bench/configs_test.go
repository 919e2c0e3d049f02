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
