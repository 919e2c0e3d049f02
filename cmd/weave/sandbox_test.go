package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// sandboxed builds testdata/hardening/sandbox.c plain and woven and runs
// the plain build with arg, which must exit code after printing out; it
// returns the woven build, that run, and where the woven runs' profile
// goes (none must be there).
func sandboxed(t *testing.T, arg string, code int, out string) (dir, woven string, want result, prof string) {
	t.Helper()
	dir = t.TempDir()
	plain, w := hbuild(t, dir, "sandbox", nil, nil)
	want = run(t, dir, nil, plain, arg)
	if want.code != code || want.stdout != out {
		t.Fatalf("plain run: %+v", want)
	}
	return dir, w, want, filepath.Join(dir, "p.prof")
}

// TestSandboxFileSize: a program that limits the size of the files it
// writes (RLIMIT_FSIZE 100 bytes) exits as the plain build does, its
// buffered stdout flushed: the profile, larger than that, failed with
// SIGXFSZ, whose default action killed the process (status 153 for 6)
// before the C library flushed stdout. Now the write fails and one line
// says the profile could not be written.
func TestSandboxFileSize(t *testing.T) {
	dir, woven, want, prof := sandboxed(t, "fsize", 6, "limited to 100 bytes\n")
	r := runWithin(t, time.Minute, dir, []string{"WEAVE_OUT=" + prof}, woven, "fsize")
	if r.code != want.code || r.stdout != want.stdout {
		t.Errorf("woven: exit %d, stdout %q; plain: exit %d, stdout %q", r.code, r.stdout, want.code, want.stdout)
	}
	if !strings.Contains(r.stderr, "File too large") {
		t.Errorf("no line says the profile was not written:\n%s", r.stderr)
	}
	if _, err := os.Stat(prof); err == nil {
		t.Errorf("a profile past RLIMIT_FSIZE")
	}
}

// TestSandboxLandlock: a program that restricts itself with a landlock
// ruleset forbidding it to open or make any file (xz 5.6's sandbox)
// exits as the plain build does, and the exit says what it could not do:
// the runtime took its refused open of /proc/self/status for a seccomp
// filter's, and wrote no summary and no profile without a word, even
// under WEAVE_SUMMARY=1. The syscall interposer now notes the ruleset.
func TestSandboxLandlock(t *testing.T) {
	dir, woven, want, prof := sandboxed(t, "landlock", 7, "landlocked: yes\n")
	if want.code == 0 {
		t.Skip("the kernel has no landlock")
	}
	r := runWithin(t, time.Minute, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY="}, woven, "landlock") // the default
	if r.code != want.code || r.stdout != want.stdout {
		t.Errorf("woven: exit %d, stdout %q; plain: exit %d, stdout %q", r.code, r.stdout, want.code, want.stdout)
	}
	// The profile, refused where WEAVE_OUT says, is refused in $TMPDIR too.
	if !strings.Contains(r.stderr, "no leak scan: /proc/self/maps could not be read") ||
		!regexp.MustCompile(`cannot write profile \S+: Permission denied`).MatchString(r.stderr) {
		t.Errorf("no line says what the exit could not do:\n%s", r.stderr)
	}
	if _, err := os.Stat(prof); err == nil {
		t.Errorf("a profile where the program forbade itself files")
	}
}

// TestSandboxSeccompSyscall: a program that sets itself a seccomp filter
// through the seccomp system call (libseccomp's seccomp_load), not prctl,
// and that kills the process for any call but read, write and exit_group
// (testdata/hardening/sandbox.c), exits as the plain build does: the
// runtime, which saw no prctl, read /proc/self/status on the way out and
// the filter ended the process by SIGSYS. No profile is written there,
// and nothing is said. Set on every thread (SECCOMP_FILTER_FLAG_TSYNC),
// the filter was the sampler's too, which the next sample killed the
// process for (SIGSYS), and the control channel's and the checkpoint
// writer's. A program that set a
// filter killing for socket, then started a thread, was killed when
// WEAVE_CONTROL=auto opened the channel.
func TestSandboxSeccompSyscall(t *testing.T) {
	dir, woven, want, prof := sandboxed(t, "seccomp", 5, "sandboxed\n")
	for _, arg := range []string{"seccomp", "tsync"} {
		for _, how := range []string{"sampled", "off"} {
			r := runWithin(t, time.Minute, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_TIME=" + how}, woven, arg)
			if r != want {
				t.Errorf("%s, WEAVE_TIME=%s: woven %+v, plain %+v", arg, how, r, want)
			}
		}
	}
	// The control channel's thread and the checkpoint writer, which wake
	// each second, under the filter set on every thread; the channel's
	// socket, opened at the program's second thread, under a filter that
	// kills for socket.
	for _, c := range [][2]string{{"tsync-long", "WEAVE_CONTROL=1"}, {"tsync-long", "WEAVE_CHECKPOINT=1"}, {"thread", "WEAVE_CONTROL=auto"}} {
		r := runWithin(t, time.Minute, dir, []string{"WEAVE_OUT=" + prof, c[1]}, woven, c[0])
		if r != want {
			t.Errorf("%s, %s: woven %+v, plain %+v", c[0], c[1], r, want)
		}
	}
	if _, err := os.Stat(prof); err == nil {
		t.Errorf("a profile under the program's own filter")
	}
}
