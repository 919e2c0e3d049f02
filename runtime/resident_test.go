package runtime

import (
	"bufio"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/testtool"
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

// TestRareNotRun: the functions RT_RARE puts in .text.weave_rare (the
// writers, the leak scan, exit, fork and exec) run only at the exit or on
// a rare request, so that the code a program runs before its peak lies
// together, apart from them (the kernel maps 64 KiB or a page cache folio
// of a file around each fault; BENCHMARKS.md, issue 32's twelfth pass):
// testdata/rare.c (threads, every woven allocation call and hidden ones,
// frees across threads) runs none of them up to its end, under callgrind;
// its exit, after, runs some (what shows that they are seen).
func TestRareNotRun(t *testing.T) {
	t.Parallel()
	testtool.Need(t, "valgrind")
	obj := object(t, "gcc")
	f, err := elf.Open(obj)
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.Symbols()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	rare := map[string]bool{}
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && int(s.Section) < len(f.Sections) && f.Sections[s.Section].Name == ".text.weave_rare" {
			rare[s.Name] = true
		}
	}
	if len(rare) < 100 {
		t.Fatalf("%d functions in .text.weave_rare", len(rare))
	}
	exe := build(t, "gcc", "rare")
	dir := t.TempDir()
	out := filepath.Join(dir, "callgrind.out")
	cmd := exec.Command("valgrind", "--tool=callgrind", "--callgrind-out-file="+out, "--dump-before=end_of_run", exe)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "WEAVE_OUT="+filepath.Join(dir, "out.prof"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("valgrind: %v\n%s", err, b)
	}
	before, after := callgrindFns(t, out+".1", exe), callgrindFns(t, out, exe)
	if !before["__weave_malloc"] || !before["__weave_free"] {
		t.Fatalf("the run before end_of_run: no __weave_malloc or __weave_free among %d functions", len(before))
	}
	for fn := range before {
		if rare[fn] {
			t.Errorf("%s (.text.weave_rare) ran before the exit", fn)
		}
	}
	n := 0
	for fn := range after {
		if rare[fn] {
			n++
		}
	}
	if n < 10 {
		t.Errorf("the exit ran %d functions of .text.weave_rare, want the writers' and the leak scan's", n)
	}
}

// callgrindFns returns the functions of object exe that a callgrind
// output file (its compressed names: "fn=(id) name", "fn=(id)") counts.
func callgrindFns(t *testing.T, path, exe string) map[string]bool {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]map[string]string{"ob": {}, "fn": {}}
	kinds := map[string]string{"ob": "ob", "cob": "ob", "fn": "fn", "cfn": "fn"}
	fns, ob := map[string]bool{}, ""
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, "=")
		kind, known := kinds[k]
		if !ok || !known {
			continue
		}
		if strings.HasPrefix(v, "(") {
			id, name, _ := strings.Cut(v, ")")
			if name = strings.TrimSpace(name); name != "" {
				names[kind][id] = name
			}
			v = names[kind][id]
		}
		switch k {
		case "ob":
			ob = v
		case "fn":
			if filepath.Base(ob) == filepath.Base(exe) {
				fns[v] = true
			}
		}
	}
	return fns
}
