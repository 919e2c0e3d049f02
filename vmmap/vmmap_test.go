package vmmap

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/readelf"
	"github.com/weave-profiler/weave/internal/testtool"
)

// A maps file with one of everything: a PIE program with RELRO and bss, a
// library with its bss, a malloc arena (writable bottom, reserve above,
// 64 MiB-aligned) right below a thread stack (guard below), an mmap'd
// file, shared anonymous memory, vdso.
const sample = `55d000000000-55d000001000 r--p 00000000 fe:00 11 /usr/bin/prog
55d000001000-55d000003000 r-xp 00001000 fe:00 11 /usr/bin/prog
55d000003000-55d000004000 r--p 00003000 fe:00 11 /usr/bin/prog
55d000004000-55d000005000 r--p 00003000 fe:00 11 /usr/bin/prog
55d000005000-55d000045000 rw-p 00004000 fe:00 11 /usr/bin/prog
55d000045000-55d000145000 rw-p 00000000 00:00 0 
55d001000000-55d001021000 rw-p 00000000 00:00 0                          [heap]
7f0004000000-7f0004021000 rw-p 00000000 00:00 0 
7f0004021000-7f0008000000 ---p 00000000 00:00 0 
7f0008000000-7f0008001000 ---p 00000000 00:00 0 
7f0008001000-7f0008801000 rw-p 00000000 00:00 0 
7f0009000000-7f000d000000 rw-p 00000000 00:00 0 
7f000d000000-7f000d100000 rw-s 00000000 00:01 1234 /dev/zero (deleted)
7f000e000000-7f000e010000 r--p 00000000 fe:00 99 /usr/share/locale/x y.mo
7f0010000000-7f0010026000 r--p 00000000 fe:00 22 /usr/lib/libc.so.6
7f0010026000-7f001017c000 r-xp 00026000 fe:00 22 /usr/lib/libc.so.6
7f001017c000-7f00101d3000 r--p 0017c000 fe:00 22 /usr/lib/libc.so.6
7f00101d3000-7f00101d5000 rw-p 001d3000 fe:00 22 /usr/lib/libc.so.6
7f00101d5000-7f00101e2000 rw-p 00000000 00:00 0 
7f00101e2000-7f00101e6000 r--p 00000000 00:00 0                          [vvar]
7f00101e6000-7f00101e8000 r-xp 00000000 00:00 0                          [vdso]
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
`

func TestClassify(t *testing.T) {
	maps, err := Parse(sample)
	if err != nil {
		t.Fatal(err)
	}
	if len(maps) != 22 {
		t.Fatalf("%d mappings, want 22", len(maps))
	}
	if m := maps[13]; m.Path != "/usr/share/locale/x y.mo" || m.Inode != 99 || m.Offset != 0 {
		t.Errorf("path with a space: %+v", m)
	}
	var got []string
	for _, s := range Classify(maps, "") {
		got = append(got, fmt.Sprintf("%s %#x %#x %d", s.Name(), s.Start, s.Size, s.Maps))
	}
	want := []string{
		"text 0x55d000001000 0x2000 1",
		"rodata 0x55d000000000 0x3000 3",
		"data 0x55d000005000 0x40000 1",
		"bss 0x55d000045000 0x100000 1",
		"heap 0x55d001000000 0x21000 1",
		"anon 0x7f0004000000 0x8100000 4", // arena + reserve, the 64 MiB map, /dev/zero
		"stack 0x7ffd00000000 0x21000 1",
		"thread stacks 0x7f0008000000 0x801000 2",
		"libc.so.6 text 0x7f0010026000 0x156000 1",
		"libc.so.6 data 0x7f0010000000 0x8c000 4",
		"vdso/vvar 0x7f00101e2000 0x6000 2",
		"files 0x7f000e000000 0x10000 1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("segments:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseErrors(t *testing.T) {
	for _, text := range []string{
		"55d0-55c0 r--p 0 fe:00 1 /x",
		"zz-55c0 r--p 0 fe:00 1 /x",
		"5000-6000 r--p 0 fe00 1 /x",
		"5000-6000 rp 0 fe:00 1 /x",
		"5000-6000 r--p 0 fe:00 x /x",
	} {
		if _, err := Parse("\n" + text + "\n"); err == nil || !strings.HasPrefix(err.Error(), "maps line 2:") {
			t.Errorf("Parse(%q): error %v, want one for line 2", text, err)
		}
	}
}

func TestBytes(t *testing.T) {
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 4096: "4 KiB", 1536 << 10: "1.5 MiB", 8 << 30: "8 GiB",
		(1 << 20) - 1: "1 MiB", (1 << 30) - 1000: "1 GiB", 1023*1024 + 50: "1023 KiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func hex(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64)
	return v
}

const page = 4096

func up(v uint64) uint64 { return (v + page - 1) &^ (page - 1) }

// TestLiveProcess runs the segments program, reads its maps while it
// waits, and checks the segments against readelf's program headers of the
// binary and against the addresses and sizes the program prints.
func TestLiveProcess(t *testing.T) {
	testtool.Need(t, "gcc", "readelf")
	dir := t.TempDir()
	bin := filepath.Join(dir, "segments")
	src, _ := filepath.Abs("../testdata/vmmap/segments.c")
	if out, err := exec.Command("gcc", "-O2", "-pthread", "-o", bin, src).CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "wait")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	own := map[string][2]uint64{} // name -> address, size
	sc := bufio.NewScanner(stdout)
	for len(own) < 5 && sc.Scan() {
		var name, addr string
		var size uint64
		if _, err := fmt.Sscanf(sc.Text(), "%s %s %d", &name, &addr, &size); err == nil {
			own[name] = [2]uint64{hex(strings.TrimPrefix(addr, "0x")), size}
		} else if _, err := fmt.Sscanf(sc.Text(), "%s %d", &name, &size); err == nil {
			own[name] = [2]uint64{0, size}
		}
	}
	maps, exe, err := ReadProc(strconv.Itoa(cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	seg := map[string]Segment{}
	for _, s := range Classify(maps, exe) {
		seg[s.Name()] = s
	}
	// The mappings over each of the program's objects have the class
	// expected (the bss array starts in the last page of the data map).
	labels := Labels(maps, exe)
	inside := func(what string, classes ...string) {
		o := own[what]
		for i, m := range maps {
			if m.End <= o[0] || m.Start >= o[0]+o[1] {
				continue
			}
			if !slices.Contains(classes, labels[i].Class) || labels[i].Lib != "" {
				t.Errorf("%s [%#x, +%d) overlaps a %q mapping %+v", what, o[0], o[1], labels[i], m)
			}
		}
	}
	inside("bss", BSS, Data)
	inside("data", Data)
	inside("mmap", Anon)
	inside("thread_stack", ThreadStack)

	elf := readelf.Of(t, bin)
	if seg[Text].Size != elf.Text {
		t.Errorf("text segment %d bytes, readelf %d", seg[Text].Size, elf.Text)
	}
	if seg[BSS].Size != elf.BSS {
		t.Errorf("bss segment %d bytes, readelf %d", seg[BSS].Size, elf.BSS)
	}
	if got := seg[Data].Size + seg[BSS].Size; got != elf.DataBSS {
		t.Errorf("data+bss %d bytes, readelf %d", got, elf.DataBSS)
	}
	if got, want := seg[BSS].Size, up(own["bss"][1]); got < want || got > want+page {
		t.Errorf("bss %d bytes, the program's array %d", got, own["bss"][1])
	}
	if got, want := seg[Data].Size, up(own["data"][1]); got < want || got > want+2*page {
		t.Errorf("data %d bytes, the program's array %d", got, own["data"][1])
	}
	if got, want := seg[ThreadStack].Size, own["thread_stack"][1]+own["thread_guard"][1]; got != want {
		t.Errorf("thread stacks %d bytes, the program's stack and guard %d", got, want)
	}
	if seg[Anon].Size < own["mmap"][1] {
		t.Errorf("anon %d bytes, less than the program's mmap (%d)", seg[Anon].Size, own["mmap"][1])
	}
	if seg[Stack].Size == 0 || seg[Heap].Size == 0 || seg["libc.so.6 text"].Size == 0 {
		t.Errorf("no stack, heap or libc text: %+v", seg)
	}
}

// TestReservationNotStack: a large inaccessible reservation (weave's own
// pseudo-stack, committed from the bottom) with a writable map above it is
// no thread stack; a one-page guard below a writable map is.
func TestReservationNotStack(t *testing.T) {
	maps, err := Parse(`7f0000000000-7f0000010000 rw-p 00000000 00:00 0 
7f0000010000-7f0001000000 ---p 00000000 00:00 0 
7f0001000000-7f0001100000 rw-p 00000000 00:00 0 
7f0002000000-7f0002001000 ---p 00000000 00:00 0 
7f0002001000-7f0002801000 rw-p 00000000 00:00 0 
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range Labels(maps, "") {
		got = append(got, l.Class)
	}
	if want := []string{Anon, Anon, Anon, ThreadStack, ThreadStack}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}
