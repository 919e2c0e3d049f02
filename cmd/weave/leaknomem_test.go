package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// TestLeakScanNoMemory: a program that leaves its address space full at
// exit (testdata/leaks/nomem.c under prlimit --as) runs as the plain build
// does, and its leak scan, which cannot map its tables, says so: the
// summary's line, M leak_scan_failed, and weave check's reason. Before,
// the summary read as if WEAVE_LEAK_SCAN=0 had been set, and weave check
// said so.
func TestLeakScanNoMemory(t *testing.T) {
	dir, plain, woven := buildLimited(t, "nomem.c")
	as := "--as=1073741824"
	p := run(t, dir, nil, "prlimit", as, plain, "fill")
	prof := filepath.Join(dir, "n.prof")
	w := run(t, dir, []string{"WEAVE_SUMMARY=1", "WEAVE_OUT=" + prof}, "prlimit", as, woven, "fill")
	if p.code != 0 || p.stdout != "full\n" || w.code != p.code || w.stdout != p.stdout {
		t.Fatalf("plain: exit %d, %q; woven: exit %d, %q\n%s", p.code, p.stdout, w.code, w.stdout, w.stderr)
	}
	if !strings.Contains(w.stderr, "no leak scan: it ran out of memory") || !strings.Contains(w.stderr, "100,001 allocs") {
		t.Errorf("the summary does not say the scan ran out of memory:\n%s", w.stderr)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nM leak_scan_failed out of memory\n") {
		t.Errorf("no M leak_scan_failed in the profile")
	}
	c := run(t, dir, nil, weaveBin, "check", prof)
	if c.code != 2 || !strings.Contains(c.stderr, "failed, out of memory") {
		t.Errorf("weave check: exit %d\n%s%s", c.code, c.stdout, c.stderr)
	}
	// with room, the same blocks are classified
	r := run(t, dir, []string{"WEAVE_SUMMARY=1", "WEAVE_OUT=" + filepath.Join(dir, "m.prof")}, "prlimit", as, woven)
	if !strings.Contains(r.stderr, "definitely lost: 1,200,000 bytes in 50,000 blocks") || strings.Contains(r.stderr, "no leak scan") {
		t.Errorf("with room:\n%s", r.stderr)
	}
}

// TestUnrecorded: blocks malloc hands out from its free heap once the
// address space is full (testdata/leaks/unrec.c under prlimit --as), when
// the runtime's side table cannot map the leaves to record them. The
// program runs as the plain build does, and the blocks not recorded are
// counted apart: the summary's totals and its not recorded line add up to
// the program's allocations (400,000 blocks, 4 large, stdout's buffer).
// Before, they were dropped without a word. A malloc and a realloc
// refused there (in both builds) are told in the summary's refused line, the runtime's own
// memory counting against the same limit, and M alloc_refused.
func TestUnrecorded(t *testing.T) {
	dir, plain, woven := buildLimited(t, "unrec.c")
	as := "--as=1073741824"
	p := run(t, dir, nil, "prlimit", as, plain)
	prof := filepath.Join(dir, "u.prof")
	w := run(t, dir, []string{"WEAVE_SUMMARY=1", "WEAVE_OUT=" + prof}, "prlimit", as, woven)
	if p.code != 0 || p.stdout != "400000 of 400000, no 64 MiB, v[0] kept\n" || w.code != p.code || w.stdout != p.stdout {
		t.Fatalf("plain: exit %d, %q; woven: exit %d, %q\n%s", p.code, p.stdout, w.code, w.stdout, w.stderr)
	}
	num := func(re string) uint64 {
		m := regexp.MustCompile(re).FindStringSubmatch(w.stderr)
		if m == nil {
			return 0
		}
		n, _ := strconv.ParseUint(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		return n
	}
	recorded, unrec := num(`total heap usage: ([\d,]+) allocs`), num(`not recorded: ([\d,]+) allocs`)
	if unrec == 0 || recorded+unrec != 400_005 {
		t.Fatalf("recorded %d + not recorded %d allocs, the program made 400,005\n%s", recorded, unrec, w.stderr)
	}
	if !strings.Contains(w.stderr, "refused: 2 allocs returned NULL, under RLIMIT_AS") {
		t.Errorf("the summary does not tell the malloc refused under RLIMIT_AS:\n%s", w.stderr)
	}
	data, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nM alloc_refused 2\n") {
		t.Errorf("no M alloc_refused 2 in the profile")
	}
	if want := fmt.Sprintf("\nM unrecorded %d ", unrec); !strings.Contains(string(data), want) {
		t.Errorf("no %q in the profile", want[1:])
	}
}

// buildLimited builds testdata/leaks/NAME plain and woven (gcc -O2) for a
// run under prlimit.
func buildLimited(t *testing.T, name string) (dir, plain, woven string) {
	testtool.Need(t, "gcc")
	testtool.Need(t, "prlimit")
	dir = t.TempDir()
	src := leaksSource(t, name)
	plain, woven = filepath.Join(dir, "plain"), filepath.Join(dir, "woven")
	mustRun(t, dir, nil, "gcc", "-O2", "-g", "-o", plain, src)
	mustRun(t, dir, []string{"WEAVE_CC=gcc"}, weaveBin, "cc", "-O2", "-g", "-o", woven, src)
	return dir, plain, woven
}

// TestAddressSpaceHeadroom: under a limit on the address space set as
// coreutils' tests set it (get_min_ulimit_v_: the least at which the
// program runs, to 1,000 KiB, plus 8,000 KiB), a woven program gets the
// block of 6 MiB the plain one gets (testdata/leaks/aslimit.c). The side
// table took its leaves from 8 MiB maps, which count against the limit
// whether used or not: at the least limit the map failed, with the
// headroom it fit and left the program's malloc too little (coreutils
// 9.1's head-c.sh: "head: memory exhausted" woven).
func TestAddressSpaceHeadroom(t *testing.T) {
	dir, plain, woven := buildLimited(t, "aslimit.c")
	under := func(kib int, argv ...string) result {
		return run(t, dir, []string{"WEAVE_OUT=" + filepath.Join(dir, "a.prof")}, append([]string{"sh", "-c", fmt.Sprintf("ulimit -v %d && exec \"$@\"", kib), "sh"}, argv...)...)
	}
	for _, exe := range []string{plain, woven} {
		least := 0
		for v := 5000; v <= 50000 && least == 0; v += 5000 {
			if under(v, exe, "small").code != 0 {
				continue
			}
			least = v
			for w := v - 1000; w >= 1000 && under(w, exe, "small").code == 0; w -= 1000 {
				least = w
			}
		}
		if least == 0 {
			t.Fatalf("%s: runs under no limit up to 50,000 KiB", exe)
		}
		if r := under(least+4+8000, exe, "big"); r.code != 0 || r.stdout != "121\n" {
			t.Errorf("%s under ulimit -v %d: exit %d, %q\n%s", filepath.Base(exe), least+4+8000, r.code, r.stdout, r.stderr)
		}
	}
}
