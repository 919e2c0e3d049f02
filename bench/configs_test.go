package main

import (
	"reflect"
	"strings"
	"testing"
)

// TestWeaveConfigs: the weave configurations are the runtime's declared
// ones, in order, each running a weave build with its environment and
// writing a profile, followed by the -weave-env extras and the build
// framing every function.
func TestWeaveConfigs(t *testing.T) {
	var got []string
	for _, c := range configs(&env{}, []string{"x:WEAVE_LEAKS=3,WEAVE_TIME=off", "bad"}) {
		if c.variant != vWeave && c.variant != vWeaveAll {
			continue
		}
		args, env, out := c.wrap("/d", []string{"prog"})
		if !reflect.DeepEqual(args, []string{"prog"}) || out != "/d/weave.prof" || len(env) == 0 || env[0] != "WEAVE_OUT=/d/weave.prof" {
			t.Errorf("%s runs %q with %q, profile %q", c.name, args, env, out)
		}
		got = append(got, c.name+" "+strings.Join(env[1:], " "))
	}
	want := []string{"weave ", "weave-mem WEAVE_TIME=off", "weave-exact WEAVE_TIME=exact",
		"weave-nohidden WEAVE_HIDDEN=0", "x WEAVE_LEAKS=3 WEAVE_TIME=off", "weave-frames-all "}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("weave configurations %q, want %q", got, want)
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

// TestCaptioned: every table of the harness's markdown is followed by
// the line saying where it comes from.
func TestCaptioned(t *testing.T) {
	md := "#### A\n\n| a |\n|---|\n\nnote\n\n#### B\n\n| b |\n|---|\n"
	want := "#### A\n\n| a |\n|---|\n\nnote\n\nCAP\n\n#### B\n\n| b |\n|---|\n\nCAP\n"
	if got := captioned(md, "CAP"); got != want {
		t.Errorf("captioned:\n%s\nwant:\n%s", got, want)
	}
}
