// Package testtool lets a test require an external tool: a missing tool
// skips the check that needs it, or fails it when CI is set.
//
// A check that needs a tool skips only itself, never the checks around it:
// put it in its own subtest with Check, or call Need at the top of a test
// that needs the tool throughout.
package testtool

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// CI reports whether the tests run under CI (CI set, and not "false" or
// "0"), where every tool the tests use must be installed.
func CI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "false" && v != "0"
}

// Has reports whether tool is an executable on PATH (or a path to one).
func Has(tool string) bool {
	_, err := exec.LookPath(tool)
	return err == nil
}

// Need skips t unless every tool is found; under CI it fails t instead.
func Need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if !Has(tool) {
			Missing(t, "%s not installed", tool)
		}
	}
}

// Missing ends t for a missing requirement the caller detected itself (a
// library, a tool version): a skip, or under CI a failure.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if CI() {
		t.Fatalf("%s (required when CI is set)", msg)
	}
	t.Skip(msg)
}

// Check runs f as the subtest name of t once the tools are found, so that
// a missing tool skips (under CI: fails) that check alone. It reports
// whether the subtest passed or skipped.
func Check(t *testing.T, name string, tools []string, f func(t *testing.T)) bool {
	t.Helper()
	return t.Run(name, func(t *testing.T) {
		t.Helper()
		Need(t, tools...)
		f(t)
	})
}
