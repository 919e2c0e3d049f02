package rt

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"
)

// In use at exit: Go has no free, so what is in use is what survived the
// garbage collector. At exit the runtime collects once and its heap profile
// (a sample per runtime.MemProfileRate bytes; WEAVE_GO_MEMRATE sets the
// rate at start-up, 1 samples every allocation) gives, per file:line, the
// share of the sampled objects and bytes still live. Each allocation node
// of a site on that line is charged that share of its exact counts. So the
// allocation counts are exact; the frees and what is in use are estimates,
// exact per line only at rate 1.

func init() {
	if v := os.Getenv("WEAVE_GO_MEMRATE"); v != "" {
		if r, err := strconv.Atoi(v); err == nil && r > 0 {
			runtime.MemProfileRate = r
		}
	}
}

// inuse is a node's blocks and bytes in use at exit; for a node followed
// exactly, by size class too, and how many of its blocks are under 16
// bytes (tiny: they may share a block with a live one).
type inuse struct {
	blocks, bytes uint64
	byClass       [4][2]uint64
	tiny          uint64
}

type lineKey struct {
	file string // base name: the profile's frames and the sites agree on it, -trimpath or not
	line int
}

func estimateInUse(nodes []*node) (map[*node]inuse, int) {
	if inuseMode == inuseOff || runtime.MemProfileRate <= 0 {
		return nil, 0
	}
	runtime.GC()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	type share struct{ allocObj, allocB, liveObj, liveB int64 }
	shares := map[lineKey]*share{}
	for i := range recs {
		r := &recs[i]
		frames := runtime.CallersFrames(r.Stack())
		for {
			f, more := frames.Next()
			if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, "internal/runtime/") {
				if strings.HasPrefix(f.Function, rtPrefix) {
					break // the weave runtime's own block
				}
				k := lineKey{filepath.Base(f.File), f.Line}
				s := shares[k]
				if s == nil {
					s = &share{}
					shares[k] = s
				}
				s.allocObj += r.AllocObjects
				s.allocB += r.AllocBytes
				s.liveObj += r.InUseObjects()
				s.liveB += r.InUseBytes()
				break
			}
			if !more {
				break
			}
		}
	}
	out := map[*node]inuse{}
	for _, n := range nodes {
		if n.site == nil {
			continue
		}
		s := shares[lineKey{filepath.Base(n.site.File), n.site.Line}]
		if s == nil || s.allocObj == 0 || s.allocB == 0 {
			continue
		}
		var a, b uint64
		for c := range 4 {
			a += n.allocsIn(c)
			b += n.bytesIn(c)
		}
		out[n] = inuse{
			blocks: uint64(float64(a)*float64(s.liveObj)/float64(s.allocObj) + 0.5),
			bytes:  uint64(float64(b)*float64(s.liveB)/float64(s.allocB) + 0.5),
		}
	}
	return out, runtime.MemProfileRate
}

// rtPrefix starts the names of this package's functions.
var rtPrefix = reflect.TypeFor[Func]().PkgPath() + "."
