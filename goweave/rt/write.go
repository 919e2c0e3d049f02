package rt

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	writeOnce sync.Once
	startWall = time.Now()
	argv      = append([]string(nil), os.Args...) // tests rewrite os.Args
)

// writeProfile writes the profile and the summary, once per process.
func writeProfile(end string) {
	writeOnce.Do(func() {
		st := snapshot()
		path, err := writeFile(st, end)
		if os.Getenv("WEAVE_SUMMARY") != "0" {
			summary(st, path, err)
		}
	})
}

// state is what the profile is written from: the tree as it was when the
// program ended, with the in-use estimate.
type state struct {
	nodes []*node
	inuse map[*node]inuse
	rate  int // the memory profile rate the estimate is sampled at; 0: none
}

func snapshot() *state {
	treeMu.Lock()
	st := &state{nodes: append([]*node(nil), nodes...)}
	treeMu.Unlock()
	st.inuse, st.rate = estimateInUse(st.nodes)
	return st
}

// profilePath is $WEAVE_OUT with %p replaced by the pid ("" for none), or
// weave-<program>.<pid>.prof.
func profilePath() string {
	pid := strconv.Itoa(os.Getpid())
	if v, ok := os.LookupEnv("WEAVE_OUT"); ok {
		return strings.ReplaceAll(v, "%p", pid)
	}
	return "weave-" + filepath.Base(argv[0]) + "." + pid + ".prof"
}

// writeFile writes the profile to a temporary file created exclusively
// beside the destination, then renames it, so no half-written profile is
// ever seen under the name.
func writeFile(st *state, end string) (string, error) {
	path := profilePath()
	if path == "" {
		return "", nil
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".weave-*.tmp")
	if err != nil {
		return path, err
	}
	err = st.encode(f, end)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return path, err
}

// totals are the summary's numbers.
func (st *state) totals() (allocs, bytes, liveBlocks, liveBytes uint64) {
	for _, n := range st.nodes {
		if n.site == nil {
			continue
		}
		for c := range 4 {
			allocs += n.allocs[c].Load()
			bytes += n.bytes[c].Load()
		}
		u := st.inuse[n]
		liveBlocks += u.blocks
		liveBytes += u.bytes
	}
	return
}

func summary(st *state, path string, err error) {
	allocs, bytes, lb, lby := st.totals()
	var b strings.Builder
	p := "==weave== "
	b.WriteString(p + "HEAP SUMMARY (Go: exact counts of the heap allocations of woven code):\n")
	fmt.Fprintf(&b, "%s  total heap usage: %d allocs, %d bytes allocated\n", p, allocs, bytes)
	if st.rate > 0 {
		fmt.Fprintf(&b, "%s    in use at exit: %d bytes in %d blocks (estimated from the runtime's heap profile, 1 sample per %d bytes)\n", p, lby, lb, st.rate)
	}
	switch {
	case err != nil:
		fmt.Fprintf(&b, "%sprofile not written: %v\n", p, err)
	case path != "":
		fmt.Fprintf(&b, "%sprofile: %s\n", p, path)
	}
	os.Stderr.WriteString(b.String())
}
