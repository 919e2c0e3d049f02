package testtool

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDepsList: every tool a test of the repository needs by name
// (Need(t, "tool"), Check(t, name, []string{"tool"}, ...)) is one
// scripts/deps.sh installs (make deps and CI), or one every machine that
// builds weave has: the compiler and POSIX basics.
func TestDepsList(t *testing.T) {
	script, err := os.ReadFile("../../scripts/deps.sh")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{"gcc": true, "cc": true, "sh": true, "sleep": true, "readelf": true}
	list := regexp.MustCompile(`(?s)<<'LIST'\n(.*?)\nLIST`).FindSubmatch(script)
	if list == nil {
		t.Fatal("scripts/deps.sh has no LIST")
	}
	for _, line := range strings.Split(string(list[1]), "\n") {
		if f := strings.Fields(line); len(f) == 2 {
			listed[f[0]] = true
		}
	}
	need := regexp.MustCompile(`testtool\.(?:Need\(t, |Check\(t, [^,]+, \[\]string\{)((?:"[^"]+"(?:, )?)+)`)
	word := regexp.MustCompile(`"([^"]+)"`)
	filepath.WalkDir("../..", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() && (d.Name() == ".git" || d.Name() == "out") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, m := range need.FindAllSubmatch(b, -1) {
			for _, w := range word.FindAllSubmatch(m[1], -1) {
				if tool := string(w[1]); !listed[tool] {
					t.Errorf("%s needs %s, which scripts/deps.sh does not install", p, tool)
				}
			}
		}
		return nil
	})
}
