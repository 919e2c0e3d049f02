package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestChrootProfileName: a program that chroots (a daemon's jail,
// testdata/chroot.c) runs as the plain build does, and its profile, which
// can go only into the jail's /tmp (one line says so), is named after the
// program. At exit there is no /proc to read the name from: it was
// weave-prog.PID.*.prof; the C library's copy of argv[0] names it now.
// (Nor is there a leak scan, which reads /proc/self/maps: docs/leaks.md.)
func TestChrootProfileName(t *testing.T) {
	testtool.Need(t, "gcc")
	var wrap []string
	if os.Geteuid() != 0 {
		if exec.Command("unshare", "-r", "true").Run() != nil {
			t.Skip("needs root or unshare -r for chroot")
		}
		wrap = []string{"unshare", "-r"}
	}
	dir := t.TempDir()
	plain, woven := build(t, dir, "gcc", program{name: "chroot", srcs: []string{"chroot.c"}}, "-O2")
	var res [2]result
	for i, exe := range []string{plain, woven} {
		jail := filepath.Join(dir, "jail"+string(rune('0'+i)))
		if err := os.MkdirAll(filepath.Join(jail, "tmp"), 0o755); err != nil {
			t.Fatal(err)
		}
		res[i] = run(t, dir, []string{"TMPDIR=/tmp"}, append(wrap, exe, jail)...)
	}
	if res[1].stdout != res[0].stdout || res[1].code != res[0].code || res[0].code != 0 {
		t.Fatalf("plain: exit %d %q %s\nwoven: exit %d %q %s", res[0].code, res[0].stdout, res[0].stderr, res[1].code, res[1].stdout, res[1].stderr)
	}
	profs, _ := filepath.Glob(filepath.Join(dir, "jail1", "tmp", "*.prof"))
	want := "weave-" + filepath.Base(woven) + "."
	if len(profs) != 1 || !strings.HasPrefix(filepath.Base(profs[0]), want) {
		t.Fatalf("profiles in the jail %v, want one named %s*\n%s", profs, want, res[1].stderr)
	}
	mustRun(t, dir, nil, weaveBin, "report", profs[0])
}
