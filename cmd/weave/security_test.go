package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
)

// Attacks on the files the runtime writes (issue 20). Each must fail: the
// victim file stays as it was and the program behaves as its plain build.

// plantLinks makes symbolic links to victim at every name the runtime's
// temporary file could have had before it used random names
// (.<name>.tmp.<pid>), for the next pids to be handed out.
func plantLinks(t *testing.T, dir, name, victim string) {
	t.Helper()
	b, err := os.ReadFile("/proc/sys/kernel/ns_last_pid")
	if err != nil {
		t.Fatalf("reading the last pid: %v", err)
	}
	last, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for pid := last + 1; pid <= last+300; pid++ {
		if err := os.Symlink(victim, filepath.Join(dir, fmt.Sprintf(".%s.tmp.%d", name, pid))); err != nil {
			t.Fatal(err)
		}
	}
}

// victimFile writes a file whose content must survive the attack.
func victimFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("important\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkVictim(t *testing.T, path string) {
	t.Helper()
	if b, err := os.ReadFile(path); err != nil || string(b) != "important\n" {
		t.Errorf("victim %s changed: %q %v", path, b, err)
	}
}

// checkProfile fails unless path is a regular file (not a link) holding a
// profile, and returns its text.
func checkProfile(t *testing.T, path string) string {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("no profile at %s: %v", path, err)
	}
	if !fi.Mode().IsRegular() {
		t.Fatalf("%s is not a regular file: %v", path, fi.Mode())
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.HasPrefix(string(b), "weave profile ") {
		t.Fatalf("%s holds no profile: %v", path, err)
	}
	return string(b)
}

// noTemporaries fails if a temporary file of the runtime's is left in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(dir, ".weave-*.tmp"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestSecurityPlantedLinks(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "secure", nil, nil)
	want := run(t, dir, nil, plain, "x")

	t.Run("WEAVE_OUT", func(t *testing.T) {
		d := t.TempDir()
		victim := filepath.Join(d, "victim")
		victimFile(t, victim)
		plantLinks(t, d, "x.prof", victim)
		got := run(t, d, []string{"WEAVE_OUT=" + filepath.Join(d, "x.prof")}, woven, "x")
		sameRun(t, "woven with planted links", want, got)
		checkVictim(t, victim)
		checkProfile(t, filepath.Join(d, "x.prof"))
		noTemporaries(t, d)
	})
	t.Run("default name", func(t *testing.T) {
		d := t.TempDir()
		victim := filepath.Join(d, "victim")
		victimFile(t, victim)
		// The default name is weave-<prog>.<pid>.prof, in the directory
		// the program was linked in: plant at every pid there.
		b, _ := os.ReadFile("/proc/sys/kernel/ns_last_pid")
		last, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		for pid := last + 1; pid <= last+300; pid++ {
			name := fmt.Sprintf("weave-%s.%d.prof", filepath.Base(woven), pid)
			for _, l := range []string{name, fmt.Sprintf(".%s.tmp.%d", name, pid)} {
				os.Symlink(victim, filepath.Join(dir, l))
				defer os.Remove(filepath.Join(dir, l))
			}
		}
		got := run(t, d, nil, woven, "x")
		sameRun(t, "woven with planted links", want, got)
		checkVictim(t, victim)
		noTemporaries(t, dir)
		profs, _ := filepath.Glob(filepath.Join(dir, "weave-*.prof"))
		defer func() {
			for _, p := range profs {
				os.Remove(p)
			}
		}()
		n := 0
		for _, p := range profs {
			if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				checkProfile(t, p)
				n++
			}
		}
		if n != 1 {
			t.Errorf("want 1 profile beside the planted links, found %d", n)
		}
		noTemporaries(t, d)
	})
	t.Run("profile name is a link", func(t *testing.T) {
		d := t.TempDir()
		victim := filepath.Join(d, "victim")
		victimFile(t, victim)
		link := filepath.Join(d, "x.prof")
		if err := os.Symlink(victim, link); err != nil {
			t.Fatal(err)
		}
		got := run(t, d, []string{"WEAVE_OUT=" + link}, woven, "x")
		sameRun(t, "woven", want, got)
		checkVictim(t, victim)
		if target, err := os.Readlink(link); err != nil || target != victim {
			t.Errorf("the link was replaced: %q %v", target, err)
		}
		checkProfile(t, filepath.Join(d, "x.1.prof"))
		if !strings.Contains(got.stderr, filepath.Join(d, "x.1.prof")) {
			t.Errorf("the summary does not say where the profile went:\n%s", got.stderr)
		}
	})
	t.Run("profile name is the user's file", func(t *testing.T) {
		// WEAVE_OUT=prog.c, or the program itself, by mistake: it was
		// replaced by the profile. A file that is not a profile is kept
		// and the profile takes the next name.
		d := t.TempDir()
		src := filepath.Join(d, "prog.c")
		if err := os.WriteFile(src, []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		exe := filepath.Join(d, "prog")
		b, err := os.ReadFile(woven)
		if err != nil || os.WriteFile(exe, b, 0o755) != nil {
			t.Fatal(err)
		}
		for _, out := range []string{src, exe} {
			before, _ := os.ReadFile(out)
			got := run(t, d, []string{"WEAVE_OUT=" + out, "WEAVE_SUMMARY=1"}, exe, "x")
			sameRun(t, "woven", want, got)
			if after, _ := os.ReadFile(out); !bytes.Equal(before, after) {
				t.Errorf("WEAVE_OUT=%s: the file was replaced", filepath.Base(out))
			}
			checkProfile(t, out+".1")
			if !strings.Contains(got.stderr, "profile written to "+out+".1") {
				t.Errorf("WEAVE_OUT=%s: the summary does not say where the profile went:\n%s", filepath.Base(out), got.stderr)
			}
		}
		noTemporaries(t, d)
	})
	t.Run("profile name is a FIFO", func(t *testing.T) {
		// Reading it to see whether it is an earlier profile must not block.
		d := t.TempDir()
		fifo := filepath.Join(d, "x.prof")
		if err := syscall.Mkfifo(fifo, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := runLimited(d, []string{"WEAVE_OUT=" + fifo}, "", 30*time.Second, woven, "x")
		if err != nil {
			t.Fatalf("woven run with a FIFO at the profile's name: %v", err)
		}
		sameRun(t, "woven", want, got)
		checkProfile(t, filepath.Join(d, "x.1.prof"))
	})
}

// asRoot skips a test that needs root (to own files as another user).
func asRoot(t *testing.T) {
	t.Helper()
	if os.Getuid() != 0 {
		testtool.Missing(t, "needs root: it makes files owned by another user")
	}
}

// nobodysDir returns a new directory the user nobody can reach (the
// test's directories opened to it) but not write.
func nobodysDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for d := dir; d != os.TempDir() && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	return dir
}

// runAsNobody runs argv in dir as the user nobody, with env.
func runAsNobody(t *testing.T, dir string, env []string, argv ...string) result {
	t.Helper()
	return run(t, dir, nil, slices.Concat([]string{"setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env"}, env, argv)...)
}

// nobody returns the uid and gid of the user nobody.
func nobody(t *testing.T) (int, int) {
	t.Helper()
	out, err := exec.Command("id", "-u", "nobody").Output()
	if err != nil {
		t.Fatalf("id -u nobody: %v", err)
	}
	uid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	out, err = exec.Command("id", "-g", "nobody").Output()
	if err != nil {
		t.Fatalf("id -g nobody: %v", err)
	}
	gid, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	return uid, gid
}

func TestSecurityOthersFile(t *testing.T) {
	asRoot(t)
	testtool.Need(t, "gcc")
	uid, gid := nobody(t)
	dir := t.TempDir()
	plain, woven := hbuild(t, dir, "secure", nil, nil)
	want := run(t, dir, nil, plain, "x")
	theirs := filepath.Join(dir, "x.prof")
	victimFile(t, theirs)
	if err := os.Chown(theirs, uid, gid); err != nil {
		t.Fatal(err)
	}
	got := run(t, dir, []string{"WEAVE_OUT=" + theirs}, woven, "x")
	sameRun(t, "woven", want, got)
	checkVictim(t, theirs)
	checkProfile(t, filepath.Join(dir, "x.1.prof"))
}

// TestSecuritySetuid runs a setuid-root woven program as nobody, asking it
// through WEAVE_OUT to write a root-only file.
func TestSecuritySetuid(t *testing.T) {
	asRoot(t)
	testtool.Need(t, "gcc", "setpriv")
	dir := nobodysDir(t)
	plain, woven := hbuild(t, dir, "secure", nil, nil)
	for _, exe := range []string{plain, woven} {
		if err := os.Chmod(exe, os.ModeSetuid|0o755); err != nil {
			t.Fatal(err)
		}
	}
	private := filepath.Join(dir, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(private, "important")
	victimFile(t, victim)
	asNobody := func(env []string, argv ...string) result { return runAsNobody(t, dir, env, argv...) }
	// "threads": it prints its number of threads, 1 unwoven; so 1 woven,
	// as a secure process has no control thread (nor socket).
	want := asNobody(nil, plain, "x", "threads")
	if !strings.HasPrefix(want.stdout, "euid=0 ") {
		t.Skipf("the file system ignores the setuid bit here (nosuid?): %q", want.stdout)
	}
	env := []string{"WEAVE_OUT=" + victim, "WEAVE_SUMMARY=0"}
	got := asNobody(env, woven, "x", "threads")
	sameRun(t, "setuid woven run as nobody", want, got)
	checkVictim(t, victim)
	if left, _ := filepath.Glob(filepath.Join(private, "*")); len(left) != 1 {
		t.Errorf("files appeared beside the victim: %v", left)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "weave-*.prof")); len(left) != 0 {
		t.Errorf("a secure process wrote a profile: %v", left)
	}
	if n := strings.Count(got.stderr, "secure execution"); n != 1 {
		t.Errorf("want one notice that WEAVE_* is ignored, got %d:\n%s", n, got.stderr)
	}
	// WEAVE_SUMMARY=0 was ignored too: the summary is there.
	if !hasSummary(got.stderr) {
		t.Errorf("no summary: WEAVE_SUMMARY was honoured in a secure process:\n%s", got.stderr)
	}
	// Without WEAVE_* variables (run's WEAVE_SUMMARY=1 and TestMain's
	// WEAVE_CONTROL=1 dropped), no notice.
	if r := asNobody([]string{"-u", "WEAVE_SUMMARY", "-u", "WEAVE_CONTROL"}, woven, "x"); strings.Contains(r.stderr, "secure execution") {
		t.Errorf("notice without WEAVE_* variables:\n%s", r.stderr)
	}
}

// TestProfileElsewhere: a process that cannot write its profile where it
// should go (a directory it may not write: a daemon that dropped root, a
// read-only tree) writes it to $TMPDIR under a name of its own, and one
// line says where; it was lost ("cannot write profile ...: Permission
// denied", and nothing at all where the program had put a log on fd 2,
// as nginx's workers do). Each process of a fork writes its own there.
func TestProfileElsewhere(t *testing.T) {
	asRoot(t)
	testtool.Need(t, "gcc", "setpriv")
	dir := nobodysDir(t)
	plain, woven := hbuild(t, dir, "fork", nil, nil)
	tmp := filepath.Join(dir, "tmp")
	os.Mkdir(tmp, 0o777)
	os.Chmod(tmp, 0o1777)
	asNobody := func(env []string, argv ...string) result { return runAsNobody(t, dir, env, argv...) }
	want := asNobody(nil, plain)
	for _, out := range []string{"", filepath.Join(dir, "fork.prof")} {
		env := []string{"TMPDIR=" + tmp, "WEAVE_SUMMARY=0"}
		if out != "" {
			env = append(env, "WEAVE_OUT="+out)
		}
		got := asNobody(env, woven)
		if got.stdout != want.stdout || got.code != want.code {
			t.Errorf("WEAVE_OUT=%q: exit %d %q, plain %d %q", out, got.code, got.stdout, want.code, want.stdout)
		}
		profs, _ := filepath.Glob(filepath.Join(tmp, "weave-fork.woven.*.prof"))
		if len(profs) != 3 || strings.Count(got.stderr, "Permission denied; the profile goes to "+tmp+"/weave-fork.woven.") != 3 {
			t.Errorf("WEAVE_OUT=%q: profiles %v (want the 3 processes'), stderr:\n%s", out, profs, got.stderr)
		}
		for _, p := range profs {
			checkProfile(t, p)
			os.Remove(p)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, "*.prof")); len(left) > 0 {
			t.Errorf("profiles in the unwritable directory: %v", left)
		}
	}
}

// TestProfileModeUmask0: a program that sets umask(0), as a daemon does
// (nginx's master), gets a profile others cannot write (it was 0666, in
// /tmp too when the directory was not writable); the mode otherwise
// follows the umask.
func TestProfileModeUmask0(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	src := "#include <stdlib.h>\n#include <sys/stat.h>\nint main(int argc, char **argv)\n{\n\tchar *p = malloc(8);\n\tif (argc > 1)\n\t\tumask(strtol(argv[1], 0, 8));\n\tfree(p);\n\treturn 0;\n}\n"
	os.WriteFile(filepath.Join(dir, "um.c"), []byte(src), 0o644)
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O1", "-o", "um", "um.c")
	for _, c := range []struct {
		umask string
		want  os.FileMode
	}{{"0", 0o664}, {"022", 0o644}, {"077", 0o600}} {
		prof := filepath.Join(dir, "um"+c.umask+".prof")
		mustRun(t, dir, []string{"WEAVE_OUT=" + prof}, "./um", c.umask)
		if fi, err := os.Stat(prof); err != nil || fi.Mode().Perm() != c.want {
			t.Errorf("umask %s: profile mode %v, %v (want %v)", c.umask, fi.Mode().Perm(), err, c.want)
		}
	}
}

// TestSecurityCache plants an object owned by another user at the runtime
// cache's name: weave must not link it.
func TestSecurityCache(t *testing.T) {
	asRoot(t)
	testtool.Need(t, "gcc")
	uid, gid := nobody(t)
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	env := []string{"XDG_CACHE_HOME=" + cache, "WEAVE_CC=gcc"}
	src, _ := filepath.Abs("../../testdata/hardening/secure.c")
	mustRun(t, dir, env, weaveBin, "cc", "-o", "first", src)
	fi, err := os.Stat(filepath.Join(cache, "weave"))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("cache directory mode %v (%v), want 0700", fi.Mode(), err)
	}
	objs, _ := filepath.Glob(filepath.Join(cache, "weave", "rt-*.o"))
	if len(objs) != 1 {
		t.Fatalf("want one cached runtime object, found %v", objs)
	}
	// Someone else's object at that name: a valid object that is not the runtime.
	mustRun(t, dir, nil, "sh", "-c", "echo 'int planted_by_nobody;' | gcc -x c -c -o "+objs[0]+" -")
	if err := os.Chown(objs[0], uid, gid); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, dir, env, weaveBin, "cc", "-o", "second", src)
	if nm, _ := exec.Command("nm", filepath.Join(dir, "second")).Output(); strings.Contains(string(nm), "planted_by_nobody") {
		t.Errorf("weave linked the object another user planted in its cache:\n%s", r.stderr)
	}
	if got := run(t, dir, []string{"WEAVE_OUT="}, filepath.Join(dir, "second"), "x"); got.code != 3 {
		t.Errorf("second build: exit %d\n%s", got.code, got.stderr)
	}

	// A cache directory that belongs to someone else is refused outright.
	cache2 := filepath.Join(dir, "cache2")
	if err := os.MkdirAll(filepath.Join(cache2, "weave"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Join(cache2, "weave"), uid, gid)
	r = run(t, dir, []string{"XDG_CACHE_HOME=" + cache2, "WEAVE_CC=gcc"}, weaveBin, "cc", "-o", "third", src)
	if r.code == 0 || !strings.Contains(r.stderr, "refusing") {
		t.Errorf("weave used a cache directory owned by another user: exit %d\n%s", r.code, r.stderr)
	}
}

func TestSecurityRedact(t *testing.T) {
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	_, woven := hbuild(t, dir, "secure", nil, nil)
	prof := filepath.Join(dir, "x.prof")
	run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_REDACT=argv"}, woven, "hunter2")
	text := checkProfile(t, prof)
	if strings.Contains(text, "hunter2") {
		t.Errorf("WEAVE_REDACT=argv: the profile holds the argument")
	}
	if !strings.Contains(text, "M argv "+woven+" (redacted)") {
		t.Errorf("WEAVE_REDACT=argv: no redacted argv line in\n%s", text[:min(len(text), 300)])
	}
}
