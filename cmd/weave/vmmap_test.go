package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/weave-profiler/weave/internal/readelf"
	"github.com/weave-profiler/weave/internal/testtool"
	"github.com/weave-profiler/weave/report"
	"github.com/weave-profiler/weave/vmmap"
)

// vmReport is the JSON of the memory map and heap tables.
type vmReport struct {
	Totals   totals           `json:"totals"`
	Segments *report.Segments `json:"segments"`
	Timeline *report.Timeline `json:"timeline"`
	Peak     *report.Peak     `json:"peak"`
}

func vmTables(t *testing.T, prof string) vmReport {
	t.Helper()
	r := mustRun(t, "", nil, weaveBin, "report", "--format", "json", "--tables", "segments,timeline,peak", prof)
	var v vmReport
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil {
		t.Fatalf("report json: %v\n%s", err, r.stdout)
	}
	return v
}

// buildPair builds testdata/vmmap/name.c plain and woven with gcc.
func buildPair(t *testing.T, dir, name string, flags ...string) (plain, woven string) {
	t.Helper()
	testtool.Need(t, "gcc")
	return build(t, dir, "gcc", program{name: name, srcs: []string{"vmmap/" + name + ".c"}}, append([]string{"-O2", "-g"}, flags...)...)
}

// vmRun builds testdata/vmmap/NAME.c plain and woven, runs both (the
// woven one with env and its profile at prof) and stops the test unless
// they behave the same; the woven run's result.
func vmRun(t *testing.T, name string, env ...string) (dir, woven, prof string, got result) {
	t.Helper()
	dir = t.TempDir()
	plain, woven := buildPair(t, dir, name)
	want := run(t, dir, nil, plain)
	prof = filepath.Join(dir, name+".prof")
	got = run(t, dir, append([]string{"WEAVE_OUT=" + prof}, env...), woven)
	if !sameRun(t, name, want, got) {
		t.FailNow()
	}
	return dir, woven, prof, got
}

var hexAddr = regexp.MustCompile(`0x[0-9a-f]+`)

// TestVMSegments checks the profile's map of a program with known
// segments against readelf and the program's own numbers.
func TestVMSegments(t *testing.T) {
	dir := t.TempDir()
	plain, woven := buildPair(t, dir, "segments", "-pthread")
	want := run(t, dir, nil, plain)
	prof := filepath.Join(dir, "seg.prof")
	got := run(t, dir, []string{"WEAVE_OUT=" + prof}, woven)
	mask := func(r result) result { r.stdout = hexAddr.ReplaceAllString(r.stdout, "ADDR"); return r }
	if !sameRun(t, "segments", mask(want), mask(got)) {
		t.FailNow()
	}
	own := map[string]uint64{}
	for _, l := range strings.Split(got.stdout, "\n") {
		if f := strings.Fields(l); len(f) == 3 {
			own[f[0]], _ = strconv.ParseUint(f[2], 10, 64)
		} else if len(f) == 2 {
			own[f[0]], _ = strconv.ParseUint(f[1], 10, 64)
		}
	}
	v := vmTables(t, prof)
	if v.Segments == nil || v.Segments.Unavailable != "" || len(v.Segments.Snapshots) < 2 {
		t.Fatalf("segments: %+v", v.Segments)
	}
	size := map[string]uint64{}
	for _, r := range v.Segments.Rows {
		size[r.Name] = r.Size["exit"]
	}
	elf := readelf.Of(t, woven)
	const page = 4096
	up := func(n uint64) uint64 { return (n + page - 1) &^ (page - 1) }
	for _, c := range []struct {
		what      string
		got, want uint64
	}{
		{"text vs readelf", size[vmmap.Text], elf.Text},
		{"bss vs readelf", size[vmmap.BSS], elf.BSS},
		{"data+bss vs readelf", size[vmmap.Data] + size[vmmap.BSS], elf.DataBSS},
		{"thread stacks vs the thread's stack and guard", size[vmmap.ThreadStack], own["thread_stack"] + own["thread_guard"]},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.what, c.got, c.want)
		}
	}
	// The runtime's own tables are in bss too.
	if b := size[vmmap.BSS]; b < up(own["bss"])-page {
		t.Errorf("bss %d bytes, less than the program's array of %d", b, own["bss"])
	}
	if d := size[vmmap.Data]; d < up(own["data"]) || d > up(own["data"])+2*page {
		t.Errorf("data %d bytes, the program's array %d", d, own["data"])
	}
	if a := size[vmmap.Anon]; a < own["mmap"] {
		t.Errorf("anon %d bytes, less than the program's mmap of %d", a, own["mmap"])
	}
	ex := v.Segments.Snapshots[len(v.Segments.Snapshots)-1]
	if ex.HeapBytes != uint64(v.Totals.BytesInUse) || ex.HeapBlocks != uint64(v.Totals.BlocksInUse) {
		t.Errorf("heap at exit %d bytes in %d blocks, the contexts' totals %+v", ex.HeapBytes, ex.HeapBlocks, v.Totals)
	}
	// statm's VM size leaves out [vsyscall] and the like.
	if ex.Name != "exit" || ex.VM <= 0 || ex.RSS <= 0 || float64(ex.VM) < 0.99*float64(ex.Mapped) || uint64(ex.VM) > ex.Mapped {
		t.Errorf("exit snapshot: %+v (VM size should be the maps' sum, near enough)", ex)
	}
}

// massifPeak runs argv under massif and returns the largest heap size of
// its snapshots (useful bytes, as weave counts them), with
// --peak-inaccuracy=0: by default massif records a new peak only 1% above
// the last. WEAVE_CONTROL=0, as memcheck's runs: the control thread's TLS
// vector is weave's block, not the program's.
func massifPeak(t *testing.T, dir string, env []string, argv ...string) uint64 {
	t.Helper()
	out := filepath.Join(dir, "massif.out")
	run(t, dir, append([]string{"WEAVE_CONTROL=0"}, env...), append([]string{"valgrind", "--tool=massif", "--peak-inaccuracy=0", "--massif-out-file=" + out}, argv...)...)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var peak uint64
	for _, m := range regexp.MustCompile(`mem_heap_B=(\d+)`).FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.ParseUint(m[1], 10, 64)
		peak = max(peak, n)
	}
	return peak
}

// TestVMHumps checks the exact peak of a program that grows its heap to
// 100 MB, frees to 10 MB and grows to 50 MB against the program's own
// high-water mark and massif's, the contexts at the peak, and that the
// timeline shows both humps.
func TestVMHumps(t *testing.T) {
	dir, woven, prof, got := vmRun(t, "humps")
	var high uint64
	if f := strings.Fields(got.stdout); len(f) >= 3 {
		high, _ = strconv.ParseUint(f[2], 10, 64)
	}
	v := vmTables(t, prof)
	pk := v.Peak
	if pk == nil || pk.Peak.Bytes != high {
		t.Fatalf("peak %+v, the program's high-water mark %d", pk, high)
	}
	if pk.Peak.Blocks != 101 {
		t.Errorf("peak blocks %d, want 101", pk.Peak.Blocks)
	}
	// Contexts: within the tolerance of the peak, adding up to the
	// snapshot, grow's 1 MB blocks first, setup's block second.
	var sum uint64
	for _, c := range pk.Contexts {
		sum += c.Bytes
	}
	if sum != pk.Snapshot.Bytes || float64(pk.Snapshot.Bytes)*(1+pk.Tolerance) < float64(pk.Peak.Bytes) {
		t.Errorf("contexts hold %d bytes, snapshot %d, peak %d, tolerance %g", sum, pk.Snapshot.Bytes, pk.Peak.Bytes, pk.Tolerance)
	}
	if len(pk.Contexts) != 2 || pk.Contexts[0].Chain[0].Name != "grow" || pk.Contexts[0].Chain[1].Name != "main" ||
		pk.Contexts[0].Bytes%1000000 != 0 || pk.Contexts[1].Chain[0].Name != "setup" || pk.Contexts[1].Bytes != 100 {
		t.Errorf("peak contexts: %+v", pk.Contexts)
	}
	// Both humps: up to 100 MB, down to 10, up to 50, down to 0, each
	// within the points' spacing (1/32 of the peak).
	const MB = 1000000
	step := pk.Peak.Bytes / 32
	stage, marks := 0, []struct {
		up    bool
		level uint64
	}{{true, 100*MB - step}, {false, 10*MB + step}, {true, 50*MB - step}, {false, step}}
	for _, p := range v.Timeline.Points {
		if m := marks[stage]; m.up && p.Bytes >= m.level || !m.up && p.Bytes <= m.level {
			if stage++; stage == len(marks) {
				break
			}
		}
	}
	if stage != len(marks) {
		t.Errorf("timeline stops at stage %d of 100 MB, 10, 50, 0: %+v", stage, v.Timeline.Points)
	}
	// The text's share column says what it is a share of: "%peak" of the
	// exact peak, "%snap" of the snapshot's bytes.
	peakText := mustRun(t, "", nil, weaveBin, "report", "--tables", "peak", prof).stdout
	row := regexp.MustCompile(`(?m)^\s*([\d,]+)\s+[\d,]+\s+([\d.]+)\s+grow <- main$`).FindStringSubmatch(peakText)
	head := regexp.MustCompile(`(?m)^\s*bytes\s+blocks\s+(%\w+)\s+chain$`).FindStringSubmatch(peakText)
	if row == nil || head == nil {
		t.Fatalf("no grow row or header in the peak table:\n%s", peakText)
	}
	bytes, _ := strconv.ParseUint(strings.ReplaceAll(row[1], ",", ""), 10, 64)
	of := map[string]uint64{"%peak": pk.Peak.Bytes, "%snap": pk.Snapshot.Bytes}[head[1]]
	if want := fmt.Sprintf("%.1f", 100*float64(bytes)/float64(max(of, 1))); row[2] != want {
		t.Errorf("peak table: grow's %s %s, want %s (%d bytes of %d; peak %d, snapshot %d)", head[1], row[2], want, bytes, of, pk.Peak.Bytes, pk.Snapshot.Bytes)
	}
	text := mustRun(t, "", nil, weaveBin, "report", "--tables", "timeline", prof).stdout
	_, chart, _ := strings.Cut(text, "HEAP OVER TIME")
	for _, l := range strings.Split(chart, "\n") {
		if len(l) > 100 {
			t.Errorf("timeline line wider than 100 columns: %q", l)
		}
	}
	testtool.Check(t, "massif", []string{"valgrind"}, func(t *testing.T) {
		vgProf := filepath.Join(dir, "vg.prof")
		mp := massifPeak(t, dir, []string{"WEAVE_OUT=" + vgProf}, woven)
		if wp := vmTables(t, vgProf).Peak.Peak.Bytes; wp != mp {
			t.Errorf("peak %d bytes, massif's on the same run %d", wp, mp)
		}
	})
}

// TestVMWander checks the exact peak, and the blocks then, of a heap that
// wanders just below its high-water mark and passes it by a few bytes
// time and again (the frees' clamp of vmmap.c), against the program's
// own count. (massif, even with --peak-inaccuracy=0, took its peak 468
// bytes short of the program's here.)
func TestVMWander(t *testing.T) {
	_, _, prof, got := vmRun(t, "wander")
	var high, blocks uint64
	if _, err := fmt.Sscanf(got.stdout, "wander high %d blocks %d", &high, &blocks); err != nil {
		t.Fatalf("output %q: %v", got.stdout, err)
	}
	if pk := vmTables(t, prof).Peak; pk == nil || pk.Peak.Bytes != high || pk.Peak.Blocks != blocks {
		t.Fatalf("peak %+v, the program's high-water mark %d bytes in %d blocks", pk, high, blocks)
	}
}

// TestVMThreadPeak checks the peak of a program whose threads (4, and 1
// besides main) allocate and free under one mutex, counting the bytes in
// use as they go, while the main thread holds a block in pthread_join:
// with threads the runtime's peak is an upper bound of the heap (each
// thread allocates on credit, vmmap/vmthreads.c), at most 1/64 of it and
// 16 KiB (the C library's thread set-up) above the program's own
// high-water mark; the heap at exit is the contexts' totals, and the
// allocations the program counted are all there.
func TestVMThreadPeak(t *testing.T) {
	for _, nt := range []string{"4", "1"} {
		t.Run(nt, func(t *testing.T) {
			dir := t.TempDir()
			_, woven := buildPair(t, dir, "threadpeak", "-pthread", "-DNT="+nt)
			prof := filepath.Join(dir, "threadpeak.prof")
			got := run(t, dir, []string{"WEAVE_OUT=" + prof}, woven)
			var high, allocated, blocks int64
			if _, err := fmt.Sscanf(got.stdout, "high %d allocated %d blocks %d", &high, &allocated, &blocks); err != nil || got.code != 0 {
				t.Fatalf("exit %d, output %q: %v\n%s", got.code, got.stdout, err, got.stderr)
			}
			v := vmTables(t, prof)
			if v.Peak == nil {
				t.Fatal("no peak table")
			}
			if pk := int64(v.Peak.Peak.Bytes); pk < high || pk > high+high/64+16<<10 {
				t.Errorf("peak %d bytes, the program's high-water mark %d (want it or up to 1/64 + 16 KiB above)", pk, high)
			}
			ex := v.Segments.Snapshots[len(v.Segments.Snapshots)-1]
			if ex.HeapBytes != uint64(v.Totals.BytesInUse) || ex.HeapBlocks != uint64(v.Totals.BlocksInUse) {
				t.Errorf("heap at exit %d bytes in %d blocks, the contexts' totals %+v", ex.HeapBytes, ex.HeapBlocks, v.Totals)
			}
			if v.Totals.Allocs < blocks || v.Totals.BytesAllocated < allocated || v.Totals.Allocs > blocks+64 {
				t.Errorf("totals %+v, the program allocated %d bytes in %d blocks", v.Totals, allocated, blocks)
			}
		})
	}
}

// TestVMNoProc runs a program whose /proc cannot be read (the runtime's
// test hook WEAVE_PROC points elsewhere): it behaves as usual, the profile
// says why there is no map, the report says so in one line.
func TestVMNoProc(t *testing.T) {
	dir := t.TempDir()
	plain, woven := buildPair(t, dir, "humps")
	want := run(t, dir, nil, plain)
	prof := filepath.Join(dir, "noproc.prof")
	got := run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_PROC=" + filepath.Join(dir, "none")}, woven)
	if !sameRun(t, "humps without /proc", want, got) {
		t.FailNow()
	}
	v := vmTables(t, prof)
	if v.Segments == nil || !strings.Contains(v.Segments.Unavailable, "No such file or directory") || len(v.Segments.Rows) != 0 {
		t.Errorf("segments without /proc: %+v", v.Segments)
	}
	if v.Timeline == nil || len(v.Timeline.Points) < 2 || v.Timeline.Points[0].RSS != -1 {
		t.Errorf("timeline without /proc: %+v", v.Timeline)
	}
	text := mustRun(t, "", nil, weaveBin, "report", "--tables", "segments", prof).stdout
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "unavailable") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "Map unavailable: reading ") {
		t.Errorf("report without /proc:\n%s", text)
	}
}

// TestVMMillion checks that a run of a million allocations, in waves,
// gives a profile under 1 MB that the report reads and renders in under a
// second, its timeline within the runtime's bound.
func TestVMMillion(t *testing.T) {
	_, _, prof, _ := vmRun(t, "million")
	fi, err := os.Stat(prof)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() >= 1<<20 {
		t.Errorf("profile of %d bytes, want under 1 MiB", fi.Size())
	}
	start := time.Now()
	mustRun(t, "", nil, weaveBin, "report", prof)
	if d := time.Since(start); d > time.Second {
		t.Errorf("report took %v, want under a second", d)
	}
	v := vmTables(t, prof)
	var allocs uint64
	for _, p := range v.Timeline.Points {
		allocs += p.Allocs
	}
	if n := len(v.Timeline.Points); n < 100 || n > 2048+1 || allocs != uint64(v.Totals.Allocs) {
		t.Errorf("%d timeline points counting %d allocations (totals %d)", n, allocs, v.Totals.Allocs)
	}
	t.Logf("profile %d bytes, %d points", fi.Size(), len(v.Timeline.Points))
}

// TestVMPeakCopy checks the VIRTUAL MEMORY table's "at peak" column of a
// program that climbs from 16 to 24 MiB in well under 10 ms, so that the
// runtime's last copy of the map is likely taken below the peak: the
// column's mapped total must be the program's own sum of
// /proc/self/maps when it held the heap the column says, and when that
// is not the peak, the text and the HTML page must say so, with both
// heaps (the table once showed 16 MiB "at peak" of a 24 MiB peak, silently).
func TestVMPeakCopy(t *testing.T) {
	dir := t.TempDir()
	_, woven := buildPair(t, dir, "climb")
	prof := filepath.Join(dir, "climb.prof")
	got := run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_SUMMARY=0"}, woven)
	own := map[uint64]uint64{} // heap -> mapped, as the program read them
	for _, l := range strings.Split(got.stdout, "\n") {
		var heap, mapped uint64
		if n, _ := fmt.Sscanf(l, "heap %d mapped %d", &heap, &mapped); n == 2 {
			own[heap] = mapped
		}
	}
	if got.code != 0 || len(own) != 24 {
		t.Fatalf("climb: exit %d, %d lines\n%s%s", got.code, len(own), got.stdout, got.stderr)
	}
	v := vmTables(t, prof)
	var at *report.SnapshotInfo
	for i, sn := range v.Segments.Snapshots {
		if sn.Name == "peak" {
			at = &v.Segments.Snapshots[i]
		}
	}
	if at == nil || v.Timeline.Peak == nil {
		t.Fatalf("no peak snapshot or peak: %+v %+v", v.Segments, v.Timeline)
	}
	if m, ok := own[at.HeapBytes]; !ok || m != at.Mapped {
		t.Errorf("at peak: %d bytes mapped with %d bytes of heap; the program read %d then (%v)", at.Mapped, at.HeapBytes, m, ok)
	}
	text := mustRun(t, "", nil, weaveBin, "report", "--tables", "segments", prof).stdout
	html := filepath.Join(dir, "climb.html")
	mustRun(t, "", nil, weaveBin, "report", "--format", "html", "-o", html, prof)
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	// The note's two heaps, commas dropped, as the HTML page's.
	note := regexp.MustCompile(`copied with ([\d,]+) bytes of heap in use, at [\d.]+ s;\s+the heap's peak was ([\d,]+) bytes`)
	heaps := func(s string) string {
		m := note.FindStringSubmatch(s)
		if m == nil {
			return ""
		}
		return strings.ReplaceAll(m[1]+" "+m[2], ",", "")
	}
	want := fmt.Sprintf("%d %d", at.HeapBytes, v.Timeline.Peak.Bytes)
	says := heaps(text) == want
	if exact := at.HeapBytes == v.Timeline.Peak.Bytes; says == exact {
		t.Errorf("map copied at %d bytes of heap, peak %d: the text's note says %q\n%s", at.HeapBytes, v.Timeline.Peak.Bytes, heaps(text), text)
	}
	if h := heaps(string(page)); h != heaps(text) {
		t.Errorf("the HTML page's segments note says %q, the text %q", h, heaps(text))
	}
}

// vRecords is the text of a profile's V records of snapshot name, a line
// each.
func vRecords(t *testing.T, prof, name string) []string {
	t.Helper()
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	var v []string
	for _, l := range strings.Split(string(b), "\n") {
		if s, ok := strings.CutPrefix(l, "V "+name+" "); ok {
			v = append(v, s)
		}
	}
	return v
}

// nonEmptyLines is s's lines but the empty ones.
func nonEmptyLines(s string) []string {
	var v []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			v = append(v, l)
		}
	}
	return v
}

// TestVMPackedMaps checks the runtime's packed copies of the maps
// (vmpack.c) give back the text byte for byte: a maps file of the test's
// own (WEAVE_PROC) with many near-alike lines, lines of 254-256 bytes and
// longer (a segment's cut), empty lines, bytes of every value but the
// newline, lines that do not pack (past the first 64 KiB buffer), and no
// newline at its end, is what each snapshot's V records hold, a line each.
func TestVMPackedMaps(t *testing.T) {
	dir := t.TempDir()
	plain, woven := buildPair(t, dir, "humps")
	want := run(t, dir, nil, plain)
	var text strings.Builder
	for i := 0; i < 300; i++ {
		a := 0x7f3a1c000000 + uint64(i)*0x801000
		perms := []string{"---p", "rw-p", "r--p", "r-xp"}[i%4]
		path := ""
		if i%7 == 3 {
			path = strings.Repeat("/lib", i%90) + "/libc.so.6"
		}
		fmt.Fprintf(&text, "%08x-%08x %s %08x 08:01 %d", a, a+0x800000+uint64(i%3)*0x1000, perms, i*4096, 1000+i/5)
		if path != "" {
			fmt.Fprintf(&text, "%*s%s", 73-len(fmt.Sprintf("%08x-%08x %s %08x 08:01 %d", a, a+0x800000+uint64(i%3)*0x1000, perms, i*4096, 1000+i/5)), "", path)
		}
		text.WriteString("\n")
		if i%50 == 0 {
			text.WriteString("\n\n")
		}
	}
	for _, n := range []int{253, 254, 255, 256, 510, 511, 600} {
		text.WriteString(strings.Repeat("x", n) + "\n")
	}
	for c := 0; c < 256; c++ {
		if c != '\n' {
			text.WriteByte(byte(c))
		}
	}
	// Lines that pack to more than they are: the packed copy outgrows
	// its first 64 KiB buffer.
	x := uint32(1)
	for i := 0; i < 900; i++ {
		for j := 0; j < 80; j++ {
			x = x*1103515245 + 12345
			text.WriteByte(byte('!' + x>>16%90))
		}
		text.WriteString("\n")
	}
	text.WriteString("last line, no newline")
	proc := filepath.Join(dir, "proc")
	if err := os.MkdirAll(filepath.Join(proc, "thread-self"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proc, "thread-self", "maps"), []byte(text.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	prof := filepath.Join(dir, "packed.prof")
	got := run(t, dir, []string{"WEAVE_OUT=" + prof, "WEAVE_PROC=" + proc}, woven)
	if !sameRun(t, "humps with a maps file of the test's", want, got) {
		t.FailNow()
	}
	lines := nonEmptyLines(text.String())
	for _, name := range []string{"start", "peak", "exit"} {
		v := vRecords(t, prof, name)
		if strings.Join(v, "\n") != strings.Join(lines, "\n") {
			t.Errorf("V %s: %d records, want the file's %d lines", name, len(v), len(lines))
			for i := range lines {
				if i >= len(v) || v[i] != lines[i] {
					t.Errorf("first difference at line %d:\n got %q\nwant %q", i, v[min(i, len(v)-1)], lines[i])
					break
				}
			}
		}
	}
}

// TestVMThreadMaps checks the copy of the maps at the heap's peak with 64
// threads (266 lines or so, a file at a path of over 255 bytes) against
// the program's own read of /proc/self/maps just after it, and the
// report's segments at the peak against the same text parsed.
func TestVMThreadMaps(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("d", 200), strings.Repeat("f", 100))
	if err := os.MkdirAll(filepath.Dir(long), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(long, make([]byte, 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	plain, woven := buildPair(t, dir, "threadmaps", "-pthread")
	own := filepath.Join(dir, "own.maps")
	want := run(t, dir, nil, plain, long, own)
	prof := filepath.Join(dir, "threadmaps.prof")
	got := run(t, dir, []string{"WEAVE_OUT=" + prof}, woven, long, own)
	if !sameRun(t, "threadmaps", want, got) {
		t.FailNow()
	}
	b, err := os.ReadFile(own)
	if err != nil {
		t.Fatal(err)
	}
	lines, v := nonEmptyLines(string(b)), vRecords(t, prof, "peak")
	if len(lines) < 64*2 || !strings.Contains(string(b), long) {
		t.Fatalf("the program's maps: %d lines, the long path in them: %v", len(lines), strings.Contains(string(b), long))
	}
	if strings.Join(v, "\n") != strings.Join(lines, "\n") {
		t.Errorf("V peak: %d records; the program's read just after: %d lines\n%s\n--\n%s", len(v), len(lines), strings.Join(v, "\n"), b)
	}
}
