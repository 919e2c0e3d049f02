package runtime

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/weave-profiler/weave/internal/cachedir"
)

// Flags the runtime is always compiled with. The caller's flags come after
// the first group (so e.g. -O0 or -g can be added), the second group last.
var (
	baseFlags  = []string{"-std=gnu11", "-O2", "-pthread"}
	finalFlags = []string{"-fPIC", "-c", "-x", "c", "-"}
)

var versions sync.Map // compiler argv (NUL-joined) -> its --version output

func compilerVersion(cc []string) (string, error) {
	key := strings.Join(cc, "\x00")
	if v, ok := versions.Load(key); ok {
		return v.(string), nil
	}
	cmd := exec.Command(cc[0], append(cc[1:len(cc):len(cc)], "--version")...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("runtime: %s --version: %v: %s", strings.Join(cc, " "), err, bytes.TrimSpace(out))
	}
	versions.Store(key, string(out))
	return string(out), nil
}

// Object compiles Source with the compiler command cc (e.g. ["gcc"] or
// ["ccache", "gcc"]) and the extra flags (e.g. -m32, -fsanitize=thread),
// and returns the path of the object file. Objects are cached in
// the private cache directory (internal/cachedir), named by a hash of cc, flags, the source and the
// compiler's --version output; an existing one is reused. Concurrent calls,
// from any number of processes, are safe: each compiles to its own
// temporary file and renames it into place. Building a new object prunes
// the cache (prune.go).
func Object(cc []string, flags []string) (string, error) {
	if len(cc) == 0 || cc[0] == "" {
		return "", errors.New("runtime: no compiler given")
	}
	dir, err := cachedir.Dir()
	if err != nil {
		return "", fmt.Errorf("runtime: %v", err)
	}
	flags = framePointers(flags)
	quick := indexKey(cc, flags)
	if obj := lookIndex(dir, quick); obj != "" {
		return obj, nil
	}
	obj, err := buildObject(dir, cc, flags)
	if err == nil {
		writeIndex(dir, quick, obj)
	}
	return obj, err
}

// buildObject is Object without the index: the object named by the hash of
// the source and the compiler's --version output, built if need be.
func buildObject(dir string, cc, flags []string) (string, error) {
	version, err := compilerVersion(cc)
	if err != nil {
		return "", err
	}
	src := Source()
	h := sha256.New()
	for _, s := range cc {
		fmt.Fprintf(h, "cc %q\n", s)
	}
	for _, s := range flags {
		fmt.Fprintf(h, "flag %q\n", s)
	}
	fmt.Fprintf(h, "source %d\n%s\nversion %d\n%s", len(src), src, len(version), version)
	obj := filepath.Join(dir, "rt-"+hex.EncodeToString(h.Sum(nil))+".o")
	if cachedir.Trusted(obj) {
		if fi, err := os.Stat(obj); err == nil {
			touch(obj, fi)
		}
		return obj, nil
	}
	// One build at a time: the links of a parallel make's first build
	// after an upgrade would each compile it (3 s of CPU apiece), and the
	// ones that waited find it built.
	defer lockBuilds(dir)()
	if cachedir.Trusted(obj) {
		return obj, nil
	}

	tmp, err := os.CreateTemp(dir, "rt-*.o.tmp")
	if err != nil {
		return "", fmt.Errorf("runtime: %v", err)
	}
	tmpName := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpName) // a no-op once renamed

	args := append([]string(nil), cc[1:]...)
	args = append(args, baseFlags...)
	args = append(args, flags...)
	args = append(args, finalFlags...)
	args = append(args, "-o", tmpName)
	cmd := exec.Command(cc[0], args...)
	cmd.Stdin = strings.NewReader(src)
	var stderr bytes.Buffer
	cmd.Stdout = &stderr
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("runtime: compiling the runtime: %s %s: %v\n%s",
			cc[0], strings.Join(args, " "), err, stderr.Bytes())
	}
	if err := os.Rename(tmpName, obj); err != nil {
		return "", fmt.Errorf("runtime: %v", err)
	}
	prune(dir, obj)
	return obj, nil
}

// lockBuilds takes the cache's lock on runtime builds (an flock on
// dir/rt.lock, which every weave process of the user shares) and returns
// its release. Without the lock (a file system that refuses it) builds
// just run side by side, as before.
func lockBuilds(dir string) func() {
	f, err := os.OpenFile(filepath.Join(dir, "rt.lock"), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return func() {}
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX) != nil {
		f.Close()
		return func() {}
	}
	return func() { f.Close() } // closing releases the lock
}

// framePointers adds -fno-omit-frame-pointer to the flags of a sanitizer
// build that unwinds by frame pointers at each malloc (address, leak,
// thread, memory: their fast unwinder). The runtime's malloc_general is
// between the program's call and the sanitizer's malloc: built without
// frame pointers (gcc -O2's default) it used rbp as a register, and
// LeakSanitizer's stacks of a woven program's leaks ended in it and in
// garbage (0x1001), one report per block, the program's frames gone
// (TestSanitizerLeakStacks).
func framePointers(flags []string) []string {
	for _, f := range flags {
		kinds, ok := strings.CutPrefix(f, "-fsanitize=")
		if !ok {
			continue
		}
		for _, k := range strings.Split(kinds, ",") {
			switch k {
			case "address", "leak", "thread", "memory", "kernel-address", "hwaddress":
				return append(flags[:len(flags):len(flags)], "-fno-omit-frame-pointer")
			}
		}
	}
	return flags
}
