package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestPureFlags: the object cache takes the flags that write only the
// object and its diagnostics, and none that reads or writes a side file.
func TestPureFlags(t *testing.T) {
	for _, f := range []string{"-O2", "-Os", "-Wall", "-Wextra", "-Werror=format", "-g", "-g3", "-gdwarf-4",
		"-fPIC", "-fno-omit-frame-pointer", "-std=gnu99", "-fvisibility=hidden", "-march=native", "-pipe",
		"-pthread", "-Wa,--noexecstack", "-fdebug-prefix-map=/a=/b", "-fdiagnostics-format=json",
		"-fsanitize=address", "-fno-sanitize=undefined", "-fopt-info-vec", "-c", "-w", "-pedantic"} {
		if !pureFlag(f) {
			t.Errorf("%s: not cached", f)
		}
	}
	for _, f := range []string{"-fprofile-generate", "-fprofile-use=x", "-fprofile-arcs", "--coverage",
		"-ftest-coverage", "-fplugin=x.so", "-fplugin-arg-x-y=1", "-save-temps", "-save-temps=obj",
		"-fdump-tree-all", "-fdump-rtl-expand", "-fstack-usage", "-fcallgraph-info", "-fcallgraph-info=su",
		"-gsplit-dwarf", "-Wa,-adhln=x.lst", "-Wa,--MD,x.d", "-specs=x", "-B/opt/x", "-fcompare-debug",
		"-fopt-info-vec=f.txt", "-flto", "-flto=auto", "-fno-lto", "-v", "-fsanitize-ignorelist=x",
		"-fsanitize-blacklist=x", "-frecord-gcc-switches", "-fdiagnostics-format=sarif-file", "-ftime-report",
		"-fmem-report", "-Q", "-time", "-fauto-profile", "-fbranch-probabilities", "-dumpbase", "-fsave-optimization-record",
		"-fsomething-new=path/x"} {
		if pureFlag(f) {
			t.Errorf("%s: cached", f)
		}
	}
	for _, f := range []string{"-aux-info", "-Xclang", "-mllvm", "-Xassembler", "-B", "-specs", "-wrapper", "-dumpdir"} {
		if pureFlagValue(f) {
			t.Errorf("%s VALUE: cached", f)
		}
	}
	if !pureFlagValue("--param") {
		t.Errorf("--param VALUE: not cached")
	}
}

// TestCompDir: the working directory as the debug information names it,
// and the key's flags: the one matching prefix map applied, its old
// prefix left out of the key only when no file of the text starts with it.
func TestCompDir(t *testing.T) {
	argv := []string{"gcc", "-g", "-fdebug-prefix-map=/home/u/tree=/src", "-c"}
	text := []byte("# 0 \"main.c\"\n")
	dir, keyed := compDir(argv, "/home/u/tree/build", text)
	if dir != "/src/build" || keyed[2] != "-fdebug-prefix-map=\x00=/src" || argv[2] != "-fdebug-prefix-map=/home/u/tree=/src" {
		t.Errorf("compDir = %q, %q", dir, keyed)
	}
	if _, keyed := compDir(argv, "/home/u/tree", []byte("# 0 \"/home/u/tree/main.c\"\n")); !slices.Equal(keyed, argv) {
		t.Errorf("a file under the old prefix: keyed %q, want argv", keyed)
	}
	if dir, keyed := compDir(argv, "/elsewhere", text); dir != "/elsewhere" || !slices.Equal(keyed, argv) {
		t.Errorf("no map matching: %q, %q", dir, keyed)
	}
	two := append(slices.Clone(argv[:3]), "-ffile-prefix-map=/home=/h", "-c")
	if dir, keyed := compDir(two, "/home/u/tree", text); dir != "/home/u/tree" || !slices.Equal(keyed, two) {
		t.Errorf("two maps matching: %q, %q", dir, keyed)
	}
}

// TestWriteObject: an object from the cache gets the mode the assembler
// would give it (0666 less the umask, or the existing file's) and its
// content whole.
func TestWriteObject(t *testing.T) {
	dir := t.TempDir()
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	obj := []byte("\x7fELF object")
	fresh, kept := filepath.Join(dir, "fresh.o"), filepath.Join(dir, "kept.o")
	os.WriteFile(kept, []byte("old"), 0o600)
	os.Chmod(kept, 0o600)
	for path, want := range map[string]os.FileMode{fresh: 0o664, kept: 0o600} {
		if err := writeObject(path, obj); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if b, _ := os.ReadFile(path); err != nil || fi.Mode().Perm() != want || !bytes.Equal(b, obj) {
			t.Errorf("%s: mode %v (want %v), %q", filepath.Base(path), fi.Mode().Perm(), want, b)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("files left: %v", ents)
	}
}
