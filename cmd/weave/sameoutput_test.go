package main

import (
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

// TestOutputIsInput: every command that writes refuses an output that is
// the same file as one of its inputs, named as given, through ./, a hard
// link or a symbolic link, with gcc's message and exit 1, leaving the
// input as it was; an output that does not exist yet is written.
func TestOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("prog.c", "#include <stdlib.h>\nint main(void) { void *p = malloc(10); return p == 0; }\n")
	write("m.go", "package main\n\nfunc main() { _ = make([]byte, 10) }\n")
	write("importcfg", "")
	mustRun(t, dir, nil, weaveBin, "cc", "-o", "prog", "prog.c")
	mustRun(t, dir, []string{"WEAVE_OUT=a.prof"}, "./prog")
	mustRun(t, dir, []string{"WEAVE_OUT=b.prof"}, "./prog")
	tooldir, err := exec.Command("go", "env", "GOTOOLDIR").Output()
	if err != nil {
		t.Fatal(err)
	}
	compile := filepath.Join(strings.TrimSpace(string(tooldir)), "compile")

	// Each command writes OUT, which the test makes the same file as in.
	cases := []struct {
		in   string
		args []string
	}{
		{"prog.c", []string{"-o", "OUT", "prog.c"}},
		{"prog.c", []string{"cc", "-o", "OUT", "prog.c"}},
		{"prog.c", []string{"cc", "-c", "-o", "OUT", "prog.c"}},
		{"prog.c", []string{"cc", "-S", "-oOUT", "prog.c"}},
		{"m.go", []string{"-o", "OUT", "m.go"}},
		{"a.prof", []string{"report", "-o", "OUT", "a.prof"}},
		{"a.prof", []string{"report", "--format", "json", "--output", "OUT", "a.prof"}},
		{"a.prof", []string{"merge", "-o", "OUT", "b.prof", "a.prof"}},
		{"m.go", []string{"toolexec", compile, "-o", "OUT", "-p", "main", "-importcfg", "importcfg", "m.go"}},
	}
	for _, c := range cases {
		before, err := os.ReadFile(filepath.Join(dir, c.in))
		if err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"./", "hard", "sym"} {
			out := "./" + c.in
			switch how {
			case "hard":
				out = "hard-" + c.in
				if err := os.Link(filepath.Join(dir, c.in), filepath.Join(dir, out)); err != nil {
					t.Fatal(err)
				}
			case "sym":
				out = "sym-" + c.in
				if err := os.Symlink(c.in, filepath.Join(dir, out)); err != nil {
					t.Fatal(err)
				}
			}
			argv := []string{weaveBin}
			for _, a := range c.args {
				argv = append(argv, strings.ReplaceAll(a, "OUT", out))
			}
			r := run(t, dir, nil, argv...)
			want := "weave: error: input file '" + c.in + "' is the same as output file\n"
			if r.code != 1 || r.stderr != want {
				t.Errorf("%s: exit %d, stderr %q; want 1, %q", strings.Join(argv[1:], " "), r.code, r.stderr, want)
			}
			if after, err := os.ReadFile(filepath.Join(dir, c.in)); err != nil || string(after) != string(before) {
				t.Errorf("%s changed its input %s", strings.Join(argv[1:], " "), c.in)
				write(c.in, string(before)) // for the next cases
			}
			if how != "./" {
				if fi, err := os.Lstat(filepath.Join(dir, out)); err != nil || (how == "sym") != (fi.Mode()&os.ModeSymlink != 0) {
					t.Errorf("%s replaced the %s link %s", strings.Join(argv[1:], " "), how, out)
				}
				os.Remove(filepath.Join(dir, out))
			}
		}
		if c.args[0] == "toolexec" {
			continue // a fresh output needs a real build's importcfg
		}
		argv := []string{weaveBin}
		for _, a := range c.args {
			argv = append(argv, strings.ReplaceAll(a, "OUT", "fresh"))
		}
		mustRun(t, dir, nil, argv...)
		os.Remove(filepath.Join(dir, "fresh"))
	}
}

// TestInterruptedCompile: weave cc stopped by a signal sent to it alone
// (a build tool or CI runner stopping its job by pid) stops its compiler
// too and leaves neither the -o file nor its scratch directory, and ends
// by that signal, as gcc's driver does. Before, weave exited and its
// compiler went on to write the object seconds later: newer than its
// source, which the next make takes as built.
func TestInterruptedCompile(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	// A unit gcc -O2 takes seconds to compile.
	var src strings.Builder
	src.WriteString("int f(int x)\n{\n")
	for i := 0; i < 15000; i++ {
		fmt.Fprintf(&src, "\tx = x * %d + (x >> %d) ^ %d;\n", i+3, i%13, i)
	}
	src.WriteString("\treturn x;\n}\n")
	if err := os.WriteFile(filepath.Join(dir, "slow.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(weaveBin, "cc", "-O2", "-c", "-o", "slow.o", "slow.c")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "WEAVE_CC=gcc", "WEAVE_CACHE=off")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The compile step: a child of weave's with -c.
	cc := 0
	for deadline := time.Now().Add(2 * time.Minute); cc == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, c := range childPids(cmd.Process.Pid) {
			argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
			if args := strings.Split(string(argv), "\x00"); slices.Contains(args, "-c") && !slices.Contains(args, "-E") {
				cc = c
			}
		}
	}
	if cc == 0 {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("weave cc started no compile step")
	}
	syscall.Kill(cmd.Process.Pid, syscall.SIGINT)
	cmd.Wait()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("weave ended with %v, want by SIGINT", ws)
	}
	// The compiler's driver, if it outlived weave: until it ends.
	for deadline := time.Now().Add(2 * time.Minute); running(cc) && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
	}
	if _, err := os.Stat(filepath.Join(dir, "slow.o")); err == nil {
		t.Error("slow.o was written after weave cc was interrupted")
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in TMPDIR: %v", left)
	}
}

// TestEarlyLinkKilled: weave cc ended by a signal while it weaves a
// program that it compiles and links in one step, whose link it has
// started already (driver/earlylink.go: it waits for the woven text on
// its standard input), leaves the program as it was. SIGKILL: without
// the link's Pdeathsig its cc1 compiled the empty input it got when weave
// died, and ld, missing main, removed the older program. SIGINT: weave
// passes it on, and nothing is left in TMPDIR.
func TestEarlyLinkKilled(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	// A unit whose weave takes a second or so.
	var src strings.Builder
	src.WriteString("#include <stdio.h>\n#include <stdlib.h>\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&src, "int f%d(int x) { char *p = malloc(x + %d); int r = p ? p[0] + x : 0; free(p); return r; }\n", i, i)
	}
	src.WriteString("int main(void) { printf(\"%d\\n\", f1(3)); return 0; }\n")
	if err := os.WriteFile(filepath.Join(dir, "big.c"), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// The runtime object built first: a link waits for it, not started early.
	if err := os.WriteFile(filepath.Join(dir, "small.c"), []byte("int main(void) { return 0; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O0", "small.c", "-o", "small")
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			tmp, err := os.MkdirTemp(dir, "tmp")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "prog"), []byte("old"), 0o755); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(weaveBin, "cc", "-O0", "big.c", "-o", "prog")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "WEAVE_CC=gcc", "WEAVE_CACHE=off", "TMPDIR="+tmp)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// The early link (weave's child reading the woven text
			// from "-"), and its cc1 waiting for the text.
			link, passes := 0, []int(nil)
			for deadline := time.Now().Add(2 * time.Minute); len(passes) == 0 && time.Now().Before(deadline) && running(cmd.Process.Pid); time.Sleep(2 * time.Millisecond) {
				for _, c := range childPids(cmd.Process.Pid) {
					argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
					if slices.Contains(strings.Split(string(argv), "\x00"), "cpp-output") {
						link = c
					}
				}
				if link != 0 {
					passes = childPids(link)
				}
			}
			cmd.Process.Signal(sig)
			cmd.Wait()
			if len(passes) == 0 {
				t.Fatal("weave cc started no early link")
			}
			if cmd.ProcessState.Exited() {
				t.Skip("weave cc finished before it was killed")
			}
			for _, p := range append(passes, link) {
				for deadline := time.Now().Add(time.Minute); running(p) && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
				}
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "prog")); string(b) != "old" {
				t.Errorf("prog is no longer the older program (%d bytes)", len(b))
			}
			if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
				t.Errorf("weave ended with %v, want by %v", ws, sig)
			}
			if left, _ := os.ReadDir(tmp); sig != syscall.SIGKILL && len(left) > 0 {
				t.Errorf("left in TMPDIR: %v", left)
			}
		})
	}
}

// TestEarlyLinkWithPreprocess: the one-step link of a program compiled
// and linked in one command starts as the -E step starts, not after it
// (driver/earlylink.go): its driver and cc1 start on the CPU the -E step
// leaves idle. The -E step of slow.c takes a second or so (a macro of
// 65,536 tokens evaluated in #if lines), and the link's driver (reading
// the woven text from "-") is seen while it runs; the program runs.
func TestEarlyLinkWithPreprocess(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	dir := t.TempDir()
	var hdr strings.Builder
	hdr.WriteString("#define X0 1\n")
	for i := 1; i <= 16; i++ {
		fmt.Fprintf(&hdr, "#define X%d (X%d+X%d)\n", i, i-1, i-1)
	}
	for i := 0; i < 40; i++ {
		hdr.WriteString("#if X16 != 65536\n#error X16\n#endif\n")
	}
	for name, text := range map[string]string{
		"slow.h":  hdr.String(),
		"slow.c":  "#include <stdio.h>\n#include \"slow.h\"\nint main(void) { printf(\"%d\\n\", X4); return 0; }\n",
		"small.c": "int main(void) { return 0; }\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The runtime object built first: a link waits for it.
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O0", "small.c", "-o", "small")
	cmd := exec.Command(weaveBin, "cc", "-O2", "slow.c", "-o", "prog")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_CC=gcc", "WEAVE_CACHE=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	together := false
	for !together && running(cmd.Process.Pid) {
		pre, link := false, false
		for _, c := range childPids(cmd.Process.Pid) {
			argv, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
			words := strings.Split(string(argv), "\x00")
			pre = pre || slices.Contains(words, "-E") && running(c)
			link = link || slices.Contains(words, "cpp-output")
		}
		together = pre && link
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("weave cc: %v\n%s", err, stderr.String())
	}
	if !together {
		t.Error("the link's driver was not seen while the -E step ran")
	}
	if r := mustRun(t, dir, []string{"WEAVE_OUT=", "WEAVE_SUMMARY=0"}, "./prog"); r.stdout != "16\n" || stderr.Len() > 0 {
		t.Errorf("prog printed %q; weave cc said %q", r.stdout, stderr.String())
	}
}

// running reports whether process pid is there and not a zombie.
func running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// childPids lists the children of process pid.
func childPids(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, c := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(c); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}
