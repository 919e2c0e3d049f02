package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// sconsProject is an SConstruct with the Configure checks projects use,
// one of which runs its program (TryRun, in the SConstruct's directory),
// and a program built from two sources.
const sconsProject = `env = Environment(CC=ARGUMENTS['cc'], ENV={'PATH': ARGUMENTS['path'], 'WEAVE_CC': 'gcc'})
conf = Configure(env)
print('header stdio.h:', conf.CheckCHeader('stdio.h'))
print('header nosuch.h:', conf.CheckCHeader('nosuch.h'))
print('function fseeko:', conf.CheckFunc('fseeko'))
print('ran:', conf.TryRun('#include <stdio.h>\nint main(void) { printf("%d\\n", (int)sizeof(long)); return 0; }\n', '.c'))
env = conf.Finish()
env.Program('prog', ['main.c', 'util.c'])
`

// TestSConsProbes builds a project with SCons, CC="weave cc" beside gcc:
// its Configure checks give gcc's answers and leave no profile in the
// project (their programs are probes, compiled unwoven), and the program
// is woven and runs as the plain one.
func TestSConsProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("project builds are skipped under -short")
	}
	testtool.Need(t, "gcc", "scons")
	var outs [2]string
	for i, cc := range []string{"gcc", weaveBin + " cc"} {
		dir := ccDir(t)
		if err := os.WriteFile(filepath.Join(dir, "SConstruct"), []byte(sconsProject), 0o644); err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, dir, nil, "scons", "-Q", "cc="+cc, "path="+os.Getenv("PATH"))
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(l, "header ") || strings.HasPrefix(l, "function ") || strings.HasPrefix(l, "ran:") {
				outs[i] += l + "\n"
			}
		}
		if p := profiles(t, dir); len(p) > 0 {
			t.Errorf("scons (CC=%s) left profiles in the project: %v", cc, p)
		}
		if woven := isWoven(t, filepath.Join(dir, "prog")); woven != (i == 1) {
			t.Errorf("CC=%s: prog woven: %v", cc, woven)
		}
		if i == 1 {
			runProfiled(t, dir, "./prog")
		}
	}
	if !strings.Contains(outs[0], "ran: (1, '8\\n')") || outs[0] != outs[1] {
		t.Errorf("SCons's checks differ:\ngcc:\n%s\nweave cc:\n%s", outs[0], outs[1])
	}
}
