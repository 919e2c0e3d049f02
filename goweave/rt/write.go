package rt

import (
	"crypto/rand"
	"encoding/hex"
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
		summary(st, path, err)
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
// weave-<program>.<pid>.prof; in the directory WEAVE_OUT names (an
// existing one, or a path ending in '/', made if absent), with a random
// part: weave-<program>.<pid>.<16 hex digits>.prof, as the C runtime's.
func profilePath() string {
	pid := strconv.Itoa(os.Getpid())
	name := "weave-" + filepath.Base(argv[0]) + "." + pid
	v, ok := os.LookupEnv("WEAVE_OUT")
	if !ok {
		return name + ".prof"
	}
	v = strings.ReplaceAll(v, "%p", pid)
	if st, err := os.Stat(v); v != "" && (strings.HasSuffix(v, "/") || err == nil && st.IsDir()) {
		os.Mkdir(v, 0o777)
		var r [8]byte
		rand.Read(r[:])
		return filepath.Join(v, name+"."+hex.EncodeToString(r[:])+".prof")
	}
	return v
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

// summary prints the summary where WEAVE_SUMMARY and WEAVE_LOG say, as
// the C runtime does: 1 always, 0 never; by default into the WEAVE_LOG
// file, else on stderr when it is a terminal or the profile could not be
// written (Go has no leak scan: nothing else to report).
func summary(st *state, path string, err error) {
	log := os.Getenv("WEAVE_LOG")
	switch os.Getenv("WEAVE_SUMMARY") {
	case "0":
		return
	case "1":
	default:
		if log == "" && err == nil && !isTerminal(os.Stderr) {
			return
		}
	}
	allocs, bytes, lb, lby := st.totals()
	var b strings.Builder
	p := "==weave " + strconv.Itoa(os.Getpid()) + "== "
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
	if log != "" {
		log = strings.ReplaceAll(log, "%p", strconv.Itoa(os.Getpid()))
		if lerr := writeNew(log, b.String()); lerr != nil {
			fmt.Fprintf(&b, "%scannot write WEAVE_LOG file %s: %v\n", p, log, lerr)
		} else {
			return
		}
	}
	os.Stderr.WriteString(b.String())
}

// writeNew writes text to a new file: name, else name.1, name.2 ...,
// never replacing one (O_EXCL).
func writeNew(name, text string) error {
	try := name
	for i := 1; ; i++ {
		f, err := os.OpenFile(try, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666) // O_EXCL: never through a link
		if os.IsExist(err) && i <= 1000 {
			try = name + "." + strconv.Itoa(i)
			continue
		}
		if err != nil {
			return err
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
}
