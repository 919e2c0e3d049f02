package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// progFS holds the benchmark programs written for this harness, and the
// helper that measures a run.
//
//go:embed programs helper
var progFS embed.FS

// env is what the harness found on this machine.
type env struct {
	root, work string
	src        string            // the programs of progFS, written out
	weave      string            // the weave binary built from this tree
	weaveID    string            // its sha256
	rusage     string            // the measuring helper (helper/rusage.c)
	corpus     string            // modernc.org/ccorpus2's module directory
	tools      map[string]string // installed tool name -> path
	versions   map[string]string // tool name -> its version line
	machine    []string          // machine description lines
	commit     string
	date       time.Time
}

// optionalTools are the peer tools and compilers used when installed.
var optionalTools = []string{"clang", "valgrind", "heaptrack", "uftrace"}

// setup builds weave, writes the programs out and looks at the machine.
func setup(root, work, weave string) (*env, error) {
	e := &env{root: root, work: work, tools: map[string]string{}, versions: map[string]string{}, date: time.Now()}
	for _, t := range append([]string{"gcc", "make"}, optionalTools...) {
		if p, err := exec.LookPath(t); err == nil {
			e.tools[t] = p
		} else if t == "gcc" || t == "make" {
			return nil, fmt.Errorf("%s is needed", t)
		} else {
			logf("%s not installed: its configurations are skipped (make bench-setup installs it)", t)
		}
	}
	for t := range e.tools {
		e.versions[t] = toolVersion(t)
	}

	if weave != "" {
		p, err := filepath.Abs(weave)
		if err != nil {
			return nil, err
		}
		e.weave = p
		logf("using %s", p)
	} else {
		e.weave = filepath.Join(work, "weave")
		logf("building weave")
		cmd := exec.Command("go", "build", "-o", e.weave, "./cmd/weave")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building weave: %v\n%s", err, out)
		}
	}
	id, err := fileHash(e.weave)
	if err != nil {
		return nil, err
	}
	e.weaveID = id

	out, err := goCmd(root, "list", "-m", "-f", "{{.Dir}}", "modernc.org/ccorpus2")
	if err == nil && out == "" {
		if _, err = goCmd(root, "mod", "download", "modernc.org/ccorpus2"); err == nil {
			out, err = goCmd(root, "list", "-m", "-f", "{{.Dir}}", "modernc.org/ccorpus2")
		}
	}
	if err != nil || out == "" {
		return nil, fmt.Errorf("finding modernc.org/ccorpus2 (go mod download): %v", err)
	}
	e.corpus = out

	e.src = filepath.Join(work, "src")
	if err := os.MkdirAll(e.src, 0o755); err != nil {
		return nil, err
	}
	ents, err := progFS.ReadDir("programs")
	if err != nil {
		return nil, err
	}
	for _, d := range ents {
		b, err := progFS.ReadFile("programs/" + d.Name())
		if err != nil {
			return nil, err
		}
		if err := writeIfChanged(filepath.Join(e.src, d.Name()), b); err != nil {
			return nil, err
		}
	}
	e.rusage = filepath.Join(work, "rusage")
	hsrc := filepath.Join(e.src, "rusage.c")
	b, err := progFS.ReadFile("helper/rusage.c")
	if err == nil {
		err = writeIfChanged(hsrc, b)
	}
	if err == nil {
		args := []string{"gcc", "-O2", "-o", e.rusage, hsrc}
		err = newBuilder(e, sizes{}).cached(e.rusage, nil, args, []string{hsrc}, func() error {
			out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
			if err != nil {
				return fmt.Errorf("%v\n%s", err, out)
			}
			return nil
		})
	}
	if err != nil {
		return nil, fmt.Errorf("building the rusage helper: %v", err)
	}
	e.machine = machine()
	e.commit = gitCommit(root)
	return e, nil
}

// has reports whether tool is installed.
func (e *env) has(tool string) bool { return e.tools[tool] != "" }

// goCmd runs the go command in dir and returns its trimmed output.
func goCmd(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// toolVersion is the first line a tool prints about its version.
func toolVersion(tool string) string {
	out, _ := exec.Command(tool, "--version").CombinedOutput()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line)
}

// machine describes the machine: CPU model, cores, memory, kernel, OS.
func machine() []string {
	model, cores := "unknown CPU", runtime.NumCPU()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	lines := []string{fmt.Sprintf("%d cores (runtime.NumCPU), %s", cores, model)}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if m := regexp.MustCompile(`MemTotal:\s+(\d+) kB`).FindSubmatch(b); m != nil {
			var kb int64
			fmt.Sscan(string(m[1]), &kb)
			lines = append(lines, fmt.Sprintf("%.1f GiB memory", float64(kb)/(1<<20)))
		}
	}
	osName := ""
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if m := regexp.MustCompile(`(?m)^PRETTY_NAME="?([^"\n]*)`).FindSubmatch(b); m != nil {
			osName = string(m[1])
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		lines = append(lines, strings.TrimSpace(osName+", Linux "+strings.TrimSpace(string(b))))
	}
	return lines
}

// gitCommit names the commit of the tree, marked when it has changes.
func gitCommit(root string) string {
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	c := strings.TrimSpace(string(out))
	cmd = exec.Command("git", "status", "--porcelain", "--untracked-files=no")
	cmd.Dir = root
	if st, err := cmd.Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		c += " with uncommitted changes"
	}
	return c
}

// fileHash is the hex sha256 of a file.
func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// writeIfChanged writes a file unless it already holds b, so that its
// modification time (and what a build cached from it) stays.
func writeIfChanged(path string, b []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil
	}
	return os.WriteFile(path, b, 0o644)
}
