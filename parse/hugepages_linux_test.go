package parse

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// TestHugeHeap: the heap the parse allocates from is advised huge pages
// (VmFlags "hg" in smaps) up to the end of the advised range, where the
// kernel has transparent huge pages; GOMAXPROCS is as it was.
func TestHugeHeap(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages in this kernel")
	}
	procs := runtime.GOMAXPROCS(0)
	lo, hi := adviseHugeHeap(false)
	if p := runtime.GOMAXPROCS(0); p != procs {
		t.Errorf("GOMAXPROCS %d after, %d before", p, procs)
	}
	if hi <= lo {
		t.Fatalf("advised range [%#x, %#x)", lo, hi)
	}
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	var vmaLo, vmaHi uint64
	advised := uint64(0)
	for _, line := range strings.Split(string(smaps), "\n") {
		if f := strings.Fields(line); len(f) > 1 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			a, b, _ := strings.Cut(f[0], "-")
			vmaLo, _ = strconv.ParseUint(a, 16, 64)
			vmaHi, _ = strconv.ParseUint(b, 16, 64)
			continue
		}
		flags, ok := strings.CutPrefix(line, "VmFlags:")
		if !ok || vmaHi <= uint64(lo) || vmaLo >= uint64(hi) {
			continue
		}
		if strings.Contains(" "+flags+" ", " hg ") {
			advised += min(vmaHi, uint64(hi)) - max(vmaLo, uint64(lo))
		} else if vmaLo < uint64(hi) && vmaHi >= uint64(hi) {
			t.Errorf("the mapping %#x-%#x holding the advised range's end is not advised huge pages (VmFlags:%s)", vmaLo, vmaHi, flags)
		}
	}
	if advised < hugeHeap/2 {
		t.Errorf("%d bytes of [%#x, %#x) advised huge pages, want at least %d", advised, lo, hi, hugeHeap/2)
	}
}

// TestHugeHeapPace: the advice allocates its block with the collector off
// (no collection of its own before runtime.GC's: the block is above the
// heap goal), and leaves the pace the pacer gives the heap live after it,
// not the one it found: that one was for the heap of an earlier
// collection (restored, the 5000% for the nearly empty heap at the start
// of sqlite3.c's weave left its parse a goal of 700 MB, and no collection
// at all).
func TestHugeHeapPace(t *testing.T) {
	paceGC()
	if !paced.Load() {
		t.Skip("GOGC or GOMEMLIMIT set: no pacer")
	}
	live := make([]byte, 40<<20) // live across the advice: the pace for it is well under the stale one
	for i := range live {
		live[i] = 1
	}
	runtime.GC()                     // no cycle under way, none due
	debug.SetGCPercent(minGCPercent) // an earlier heap's pace: a goal of 60 MB
	before := gcCycles()
	adviseHugeHeap(false)
	got := debug.SetGCPercent(-1)
	setPace()
	want := debug.SetGCPercent(-1)
	debug.SetGCPercent(got)
	runtime.KeepAlive(live)
	if n := gcCycles() - before; n != 1 {
		t.Errorf("%d collections during the advice, want 1 (runtime.GC's)", n)
	}
	if got != want || got == minGCPercent {
		t.Errorf("GOGC %d after the advice, want the pace for the heap live after it, %d", got, want)
	}
}

// gcCycles is how many collections the process has made.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestPopulateAhead: populateAhead faults in the pages of its range up to
// its lead beyond the heap's growth, no further, follows the growth up to
// the range's end, and returns there, or once the heap stops growing.
func TestPopulateAhead(t *testing.T) {
	const size, ahead = 64 << 20, 8 << 20
	region, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(region)
	from := uintptr(unsafe.Pointer(&region[0]))
	if _, _, e := syscall.Syscall(syscall.SYS_MADVISE, from, 4096, 23 /* MADV_POPULATE_WRITE */); e != 0 {
		t.Skipf("no MADV_POPULATE_WRITE: %v", e)
	}
	resident := func() int {
		vec := make([]byte, size/4096)
		if _, _, e := syscall.Syscall(syscall.SYS_MINCORE, from, size, uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatal(e)
		}
		n := 0
		for _, v := range vec {
			n += int(v & 1)
		}
		return n * 4096
	}
	// settle waits until the resident bytes are want (and stay so).
	settle := func(want int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for resident() != want && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		if got := resident(); got != want {
			t.Fatalf("%d bytes resident, want %d", got, want)
		}
	}
	var grown atomic.Uint64
	done := make(chan struct{})
	go func() {
		populateAhead(from, from+size, ahead, func() uint64 { return 100<<20 + grown.Load() }, time.Second)
		close(done)
	}()
	settle(ahead)
	grown.Store(20 << 20)
	settle(20<<20 + ahead)
	grown.Store(200 << 20)
	settle(size)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("populateAhead goes on at the end of its range")
	}
	// Idle: it returns once the heap has not grown for its idle time.
	done = make(chan struct{})
	start := time.Now()
	go func() {
		populateAhead(from, from+size, ahead, func() uint64 { return 0 }, 50*time.Millisecond)
		close(done)
	}()
	select {
	case <-done:
		if d := time.Since(start); d < 50*time.Millisecond {
			t.Errorf("returned after %v, before its idle time", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("populateAhead goes on with the heap idle")
	}
}
