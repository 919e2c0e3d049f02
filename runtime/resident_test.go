package runtime

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestResident: the runtime's resident memory (WEAVE_STATS=1: M
// runtime_resident, the summary's "its maps at most") against the kernel's
// own account, read from /proc/PID/smaps while the program is stopped:
// the Rss of every mapping in small pages (VmFlags nh: the runtime asks
// for them on each of its maps; the C library's thread stacks, a guard
// page below them, have it too and are left out). The program stops
// after its heap and threads are done, so that reading is the largest
// the runtime's maps reached before the exit writer (leak scan off); the
// writer's own tables and buffers may add a little.
func TestResident(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "resident")
	dir := t.TempDir()
	prof := filepath.Join(dir, "out.prof")
	cmd := exec.Command(exe, "stop")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_OUT="+prof, "WEAVE_SUMMARY=1", "WEAVE_STATS=1", "WEAVE_LEAK_SCAN=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	defer cmd.Process.Kill()
	deadline := time.Now().Add(2 * time.Minute)
	for !stopped(pid) {
		if time.Now().After(deadline) {
			t.Fatal("the program did not stop")
		}
		time.Sleep(20 * time.Millisecond)
	}
	smaps, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps")
	if err != nil {
		t.Fatal(err)
	}
	own, nh := smallPagesRss(t, string(smaps))
	syscall.Kill(pid, syscall.SIGCONT)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if nh == 0 {
		t.Skip("no mapping in small pages (a kernel without transparent huge pages): nothing to compare with")
	}
	p := readProfile(t, prof)
	v, ok := p.MetaUint("runtime_resident")
	if !ok {
		t.Fatalf("no M runtime_resident\n%s", stderr.String())
	}
	// The summary's reading comes after the profile's: the writer's
	// tables may add to it.
	m := regexp.MustCompile(`its maps at most ([\d,]+) bytes resident`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("no runtime resident line in the summary:\n%s", stderr.String())
	}
	if w, _ := strconv.ParseUint(strings.ReplaceAll(m[1], ",", ""), 10, 64); w < v || w > v+(256<<10) {
		t.Errorf("the summary says %d bytes, the profile %d", w, v)
	}
	// 120,000 live blocks: the side table alone holds more than 400 KiB.
	if own < 400<<10 {
		t.Fatalf("smaps: only %d bytes in the runtime's maps", own)
	}
	if v < own || v > own+(128<<10) {
		t.Errorf("runtime_resident %d bytes, smaps of its maps while stopped %d (%+d)", v, own, int64(v)-int64(own))
	}
	t.Logf("runtime_resident %d, smaps %d", v, own)
}

// stopped reports whether process pid is stopped (state T).
func stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'T'
}

// smallPagesRss sums the Rss of the mappings of an smaps text that have
// VmFlags nh, but glibc's thread stacks (a writable map right above an
// inaccessible one of at most 64 KiB, its guard), and counts those maps.
func smallPagesRss(t *testing.T, smaps string) (rss uint64, n int) {
	type vma struct {
		lo, hi uint64
		perm   string
		rss    uint64
		nh     bool
	}
	var maps []vma
	sc := bufio.NewScanner(strings.NewReader(smaps))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 2 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			lo, hi, _ := strings.Cut(f[0], "-")
			a, err1 := strconv.ParseUint(lo, 16, 64)
			b, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil {
				t.Fatalf("smaps: %q", sc.Text())
			}
			maps = append(maps, vma{lo: a, hi: b, perm: f[1]})
		case len(maps) > 0 && len(f) >= 2 && f[0] == "Rss:":
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			maps[len(maps)-1].rss = kb << 10
		case len(maps) > 0 && len(f) >= 1 && f[0] == "VmFlags:":
			for _, fl := range f[1:] {
				maps[len(maps)-1].nh = maps[len(maps)-1].nh || fl == "nh"
			}
		}
	}
	for i, m := range maps {
		if !m.nh {
			continue
		}
		if i > 0 && m.perm[:2] == "rw" {
			g := maps[i-1]
			if g.hi == m.lo && g.perm[:3] == "---" && g.hi-g.lo <= 64<<10 {
				continue // a thread stack
			}
		}
		rss += m.rss
		n++
	}
	return rss, n
}

// TestResidentLongRun: the runtime's maps cost a long run of a small
// heap no more than a short one, but for the heap timeline's points,
// whose capacity is held to 1/16 of the heap's peak (vmmap.c,
// vm_points_cap; at least 256 points): testdata/ring.c keeps about 150
// KiB in a ring of messages for 20,000 and for 2,000,000 messages. The
// long run's timeline decimates many times over; before the capacity
// followed the heap it filled all 2,048 points (112 KiB resident to the
// end, against a heap of 150). It keeps at least 128 points (half the
// smallest capacity) from start to end.
func TestResidentLongRun(t *testing.T) {
	t.Parallel()
	exe := build(t, "gcc", "ring")
	resident := func(n string) (uint64, *prof) {
		dir := t.TempDir()
		prof := filepath.Join(dir, "out.prof")
		cmd := exec.Command(exe, n)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "WEAVE_OUT="+prof, "WEAVE_STATS=1", "WEAVE_LEAK_SCAN=0", "WEAVE_SUMMARY=0", "WEAVE_TIME=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("ring %s: %v\n%s", n, err, out)
		}
		p := readProfile(t, prof)
		v, ok := p.MetaUint("runtime_resident")
		if !ok {
			t.Fatalf("ring %s: no M runtime_resident", n)
		}
		return v, p
	}
	short, _ := resident("20000")
	long, p := resident("2000000")
	pk, ok := p.HeapPeak()
	if !ok {
		t.Fatal("no heap peak")
	}
	const point = 56 // bytes of a timeline point in the runtime (struct vm_point)
	limit := max(pk.Bytes/16, 256*point)
	// The timeline's pages: those its points may fill, one more where
	// they start mid-page; and two more for the rest (the short run
	// reads 0-8 KiB less of the heap peak's records, maps and statm).
	pages := (limit+4095)/4096*4096 + 4096
	if long > short+pages+(8<<10) {
		t.Errorf("the runtime's maps: %d bytes resident after 2,000,000 messages, %d after 20,000: the timeline may take %d (%d bytes of points; peak %d bytes)",
			long, short, pages, limit, pk.Bytes)
	}
	if n := len(p.Timeline); n < 128 || uint64(n)*point > limit {
		t.Errorf("%d timeline points for a peak of %d bytes: want 128 to %d", n, pk.Bytes, limit/point)
	}
	t.Logf("runtime_resident %d (20,000 messages), %d (2,000,000); %d points, peak %d", short, long, len(p.Timeline), pk.Bytes)
}
