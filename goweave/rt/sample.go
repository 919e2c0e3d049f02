package rt

import (
	"os"
	"sync/atomic"
	"time"
)

// Sampled time, the default: every samplePeriod a timer's callback (a
// goroutine of the timer's for the moment it runs: none is kept) charges
// the period to the node each goroutine in woven code is in, so a
// context's time is the wall-clock time goroutines spent in it, running
// or blocked, split by sampling: the statistical form of WEAVE_TIME=exact
// (frameless functions' time their caller's, as there). Go's runtime owns
// SIGPROF and SIGURG, and runtime/pprof's CPU profile is the program's to
// start (go test -cpuprofile), so nothing here samples CPU time. Off under
// the race detector (another goroutine's node is read without
// synchronisation, as running does) and with WEAVE_TIME=off or 0.

const samplePeriod = 10 * time.Millisecond

var (
	sampling = !timing && !raceEnabled && os.Getenv("WEAVE_TIME") != "off" && os.Getenv("WEAVE_TIME") != "0"
	samples  atomic.Uint64
	sampler  atomic.Pointer[time.Timer]
)

func init() {
	if sampling {
		sampler.Store(time.AfterFunc(samplePeriod, sample))
	}
}

// sample charges a period to each goroutine's current node, and sets the
// timer again unless the profile is being written.
func sample() {
	for i := range table {
		s := &table[i]
		if k := s.key.Load(); k == 0 || k == tombstone {
			continue
		}
		sampleG(s.g.Load())
	}
	if overN.Load() > 0 {
		overflow.Range(func(_, g any) bool {
			sampleG(g.(*G))
			return true
		})
	}
	if t := sampler.Load(); t != nil {
		t.Reset(samplePeriod)
	}
}

func sampleG(g *G) {
	if g == nil {
		return
	}
	if n := g.cur; n != nil {
		n.selfNs.Add(int64(samplePeriod))
		samples.Add(1)
	}
}

// stopSampling stops the timer (at exit, before the profile is written).
func stopSampling() {
	if t := sampler.Swap(nil); t != nil {
		t.Stop()
	}
}
