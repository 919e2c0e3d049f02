package parse

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
)

// TestHugeHeap: the heap the parse allocates from is advised huge pages
// (VmFlags "hg" in smaps) up to the end of the advised range, where the
// kernel has transparent huge pages; GOMAXPROCS is as it was.
func TestHugeHeap(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages in this kernel")
	}
	procs := runtime.GOMAXPROCS(0)
	lo, hi := adviseHugeHeap()
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
	debug.SetGCPercent(minGCPercent) // an earlier heap's pace: a goal of 60 MB
	before := gcCycles()
	adviseHugeHeap()
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
