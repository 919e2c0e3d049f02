package runtime

import (
	"bufio"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestForSize: the parts that run once or rarely (forSize in parts.go)
// are compiled for size, and the parts on the allocation and call paths
// are not changed by it: the runtime is compiled as shipped and with
// every part at -O2 (joinSize), with an executable's flags and -g, and
// each function that the hot parts define (nm -l names its file) has the
// same size in both objects, while the forSize parts' functions take at
// least a quarter less (54 KiB -> 34 with gcc 12). Functions of other
// parts (start-up, the leak scan's passes) may change: they inline
// less of the forSize parts, as may two of the hot parts' set-up
// functions.
func TestForSize(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "gcc")
	testtool.Need(t, "nm")
	noSize, err := joinSize(parts, true)
	if err != nil {
		t.Fatal(err)
	}
	hot := map[string]bool{}
	for _, f := range []string{"pseudostack/cct.c", "runtime/thread.c", "pseudostack/enter.c", "pseudostack/timed.c",
		"runtime/spill.c", "runtime/side.c", "vmmap/vmmap.c", "vmmap/vmthreads.c", "runtime/scrub.c", "runtime/advice.c", "runtime/outer.c",
		"runtime/pool.c", "runtime/hidden.c", "runtime/interpose.c"} {
		hot[f] = true
	}
	// Their functions that run once a process or a thread, and call
	// forSize parts (the control channel's opening, the exit's set-up).
	once := map[string]bool{"real_resolve": true, "thread_setup": true}
	cold := map[string]bool{}
	for _, p := range parts {
		if p.size {
			cold[p.path] = true
			if hot[p.path] {
				t.Errorf("%s: a hot part compiled for size", p.path)
			}
		}
	}
	dir := t.TempDir()
	type fn struct {
		size uint64
		file string
	}
	sizes := func(name, src string) map[string]fn {
		obj := filepath.Join(dir, name+".o")
		args := append(append([]string{}, baseFlags...), "-g", "-DWEAVE_EXECUTABLE", "-fPIC", "-c", "-x", "c", "-", "-o", obj)
		cmd := exec.Command("gcc", args...)
		cmd.Stdin = strings.NewReader(src)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		out, err := exec.Command("nm", "-S", "-l", obj).Output()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]fn{}
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		for sc.Scan() {
			line, where, _ := strings.Cut(sc.Text(), "\t")
			f := strings.Fields(line)
			if len(f) == 4 && strings.ContainsAny(f[2], "tTwW") {
				n, _ := strconv.ParseUint(f[1], 16, 64)
				file, _, _ := strings.Cut(where, ":") // DIR/runtime/advice.c: the part's path last
				if i := strings.LastIndexByte(file, '/'); i > 0 {
					if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
						file = file[j+1:]
					}
				}
				m[f[3]] = fn{n, file}
			}
		}
		return m
	}
	shipped, all := sizes("shipped", Source()), sizes("o2", noSize)
	var coldShipped, coldAll uint64
	nhot := 0
	for name, f := range all {
		switch {
		case cold[f.file]:
			coldAll += f.size
		case hot[f.file] && !once[strings.Split(name, ".")[0]]:
			nhot++
			if s := shipped[name]; s.size != f.size {
				t.Errorf("%s (%s): %d bytes at -O2, %d as shipped", name, f.file, f.size, s.size)
			}
		}
	}
	for _, f := range shipped {
		if cold[f.file] {
			coldShipped += f.size
		}
	}
	if nhot < 50 || coldAll == 0 {
		t.Fatalf("%d functions of the hot parts, %d bytes of the forSize parts': nm -l named no file?", nhot, coldAll)
	}
	if coldShipped*4 > coldAll*3 {
		t.Errorf("the forSize parts' functions: %d bytes as shipped, %d at -O2", coldShipped, coldAll)
	}
	t.Logf("forSize parts: %d bytes of code at -O2, %d as shipped; %d functions of the hot parts unchanged", coldAll, coldShipped, nhot)
}
