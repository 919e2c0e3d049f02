package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// builder builds the benchmark programs per variant, caching each binary
// under work/bin with a key of everything its build depends on.
type builder struct {
	env *env
	sz  sizes

	mu    sync.Mutex
	bins  map[string]string // artefact.variant -> binary
	fails map[string]error  // artefact.variant -> why it did not build
}

func newBuilder(e *env, sz sizes) *builder {
	return &builder{env: e, sz: sz, bins: map[string]string{}, fails: map[string]error{}}
}

// compiler is the compiler command of a variant and its environment.
func (b *builder) compiler(v string) (cc, env []string) {
	switch v {
	case vWeave:
		return []string{b.env.weave, "cc"}, []string{"WEAVE_CC=gcc"}
	case vWeaveAll:
		return []string{b.env.weave, "cc"}, []string{"WEAVE_CC=gcc", "WEAVE_FRAMES=all"}
	case vClang, vLSan:
		return []string{"clang"}, nil
	}
	return []string{"gcc"}, nil
}

// flags are a variant's compile flags at optimisation opt.
func (b *builder) flags(v, opt string) []string {
	f := []string{opt, "-g"}
	switch v {
	case vPG:
		f = append(f, "-pg")
	case vLSan:
		f = append(f, "-fsanitize=leak")
	}
	return f
}

// ldflags are a variant's link flags.
func (b *builder) ldflags(v string) []string {
	switch v {
	case vPG:
		return []string{"-pg"}
	case vLSan:
		return []string{"-fsanitize=leak"}
	}
	return nil
}

// buildAll builds every program in every variant the configurations use,
// jobs at a time. A failed gcc or weave build is an error; a failed peer
// variant only drops its configurations for that program.
func (b *builder) buildAll(progs []*program, cfgs []*config, jobs int) error {
	type job struct {
		p *program
		v string
	}
	var todo []job
	seen := map[string]bool{}
	for _, p := range progs {
		variants := map[string]bool{}
		for _, c := range cfgs {
			variants[c.variant] = variants[c.variant] || p.runs(c)
		}
		for _, v := range []string{vGCC, vWeave, vWeaveAll, vPG, vClang, vLSan} {
			if variants[v] && !seen[p.artefact+"."+v] {
				seen[p.artefact+"."+v] = true
				todo = append(todo, job{p, v})
			}
		}
	}
	if err := os.MkdirAll(filepath.Join(b.env.work, "bin"), 0o755); err != nil {
		return err
	}
	if jobs < 1 {
		jobs = 1
	}
	start := time.Now()
	ch := make(chan job)
	var wg sync.WaitGroup
	for i := 0; i < jobs; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				key := j.p.artefact + "." + j.v
				out := filepath.Join(b.env.work, "bin", key)
				err := j.p.build(b, j.v, out)
				b.mu.Lock()
				if err != nil {
					b.fails[key] = err
				} else {
					b.bins[key] = out
				}
				b.mu.Unlock()
			}
		}()
	}
	for _, j := range todo {
		ch <- j
	}
	close(ch)
	wg.Wait()
	var errs []string
	for key, err := range b.fails {
		if strings.HasSuffix(key, "."+vGCC) || strings.HasSuffix(key, "."+vWeave) || strings.HasSuffix(key, "."+vWeaveAll) {
			errs = append(errs, fmt.Sprintf("building %s: %v", key, err))
		} else {
			logf("building %s failed, its configurations are skipped: %v", key, err)
		}
	}
	logf("builds done in %s", time.Since(start).Round(time.Second))
	if errs != nil {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// binary is a program's binary in a variant, or "" if it did not build.
func (b *builder) binary(p *program, v string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bins[p.artefact+"."+v]
}

// cached runs build unless out exists and was built with the same command,
// environment, inputs, compilers and weave binary.
func (b *builder) cached(out string, env, args, inputs []string, build func() error) error {
	h := sha256.New()
	fmt.Fprintf(h, "%q\n%q\n%s\n%s\n", args, env, b.env.versions["gcc"], b.env.versions["clang"])
	if strings.Contains(strings.Join(args, " "), b.env.weave) { // a weave build
		fmt.Fprintf(h, "weave %s\n", b.env.weaveID)
	}
	for _, in := range inputs {
		sum, err := fileHash(in)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %s\n", in, sum)
	}
	key := hex.EncodeToString(h.Sum(nil))
	if old, err := os.ReadFile(out + ".key"); err == nil && string(old) == key {
		if _, err := os.Stat(out); err == nil {
			return nil
		}
	}
	os.Remove(out + ".key")
	start := time.Now()
	if err := build(); err != nil {
		return err
	}
	logf("built %s (%s)", filepath.Base(out), time.Since(start).Round(100*time.Millisecond))
	return os.WriteFile(out+".key", []byte(key), 0o644)
}

// exec runs a build command in dir; its output is kept in work/logs.
func (b *builder) exec(dir string, env []string, args ...string) error {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(args, " "), err, tail(out.String(), 20))
	}
	return nil
}

// cleanEnv is this process's environment without the variables that
// change how a profiler or a woven program behaves.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "WEAVE_") || strings.HasSuffix(k, "SAN_OPTIONS") || strings.HasPrefix(k, "MALLOC_") ||
			strings.HasPrefix(k, "GLIBC_TUNABLES") || k == "LD_PRELOAD" || k == "UFTRACE_OPTS" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// untgz unpacks a .tar.gz into dir.
func untgz(path, dir string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.Join(dir, filepath.FromSlash(h.Name))
		if !strings.HasPrefix(name, filepath.Clean(dir)+string(os.PathSeparator)) {
			return fmt.Errorf("%s: bad path %q", path, h.Name)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(name, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				return err
			}
			w, err := os.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(w, tr)
			if cerr := w.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}

// copyFile copies an executable.
func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	tmp := dst + ".tmp"
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
