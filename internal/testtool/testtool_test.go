package testtool

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestCIFails runs helper tests in a subprocess: a missing tool skips
// without CI and fails with it, and a skipped Check leaves the checks
// after it running.
func TestCIFails(t *testing.T) {
	if os.Getenv("TESTTOOL_HELPER") != "" {
		return // the subprocess runs TestHelper only
	}
	for _, ci := range []string{"", "true"} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "TESTTOOL_HELPER=1", "CI="+ci)
		out, err := cmd.CombinedOutput()
		s := string(out)
		if !strings.Contains(s, "after the check") {
			t.Errorf("CI=%q: the test stopped at the missing tool:\n%s", ci, s)
		}
		skipped := strings.Contains(s, "--- SKIP: TestHelper/missing")
		failed := strings.Contains(s, "--- FAIL: TestHelper/missing") && strings.Contains(s, "required when CI is set")
		if ci == "" && (err != nil || !skipped) || ci != "" && (err == nil || !failed) {
			t.Errorf("CI=%q: err %v, want a skip without CI and a failure with it:\n%s", ci, err, s)
		}
		if !strings.Contains(s, "ran the present check") {
			t.Errorf("CI=%q: the check with its tool present did not run:\n%s", ci, s)
		}
	}
}

// TestHelper is TestCIFails' subprocess; it does nothing in a plain run
// (the Go idiom for helper processes: a skip would clutter the skip list).
func TestHelper(t *testing.T) {
	if os.Getenv("TESTTOOL_HELPER") == "" {
		return
	}
	Check(t, "missing", []string{"no-such-tool-testtool"}, func(t *testing.T) {
		t.Error("ran without its tool")
	})
	Check(t, "present", []string{"sh"}, func(t *testing.T) { t.Log("ran the present check") })
	t.Log("after the check")
}

func TestCI(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "0": false, "true": true, "1": true} {
		t.Setenv("CI", v)
		if CI() != want {
			t.Errorf("CI=%q: CI() = %v", v, !want)
		}
	}
}
