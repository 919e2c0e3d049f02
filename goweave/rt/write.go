package rt

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
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
		stopSampling()
		st := snapshot()
		path, err := writeFile(st, end)
		summary(st, path, err)
	})
}

// state is what the profile is written from: the tree as it was when the
// program ended, what is in use (exact for the nodes in exactIn, else
// estimated), the goroutines still in woven code.
type state struct {
	nodes      []*node
	inuse      map[*node]inuse
	exactNodes map[*node]bool
	binLive    *[len(bins)]struct{ blocks, bytes uint64 } // the bins' blocks in use, from the heap's shadow
	rate       int                                        // the memory profile rate the estimate is sampled at; 0: none
	goroutines []*node
}

func snapshot() *state {
	l := shadowLive() // first: nothing allocated at exit in the dump
	st := &state{goroutines: running(), exactNodes: map[*node]bool{}}
	if inuseMode == inuseCleanup {
		drain()
	}
	treeMu.Lock()
	st.nodes = append([]*node(nil), nodes...)
	treeMu.Unlock()
	st.inuse, st.rate = estimateInUse(st.nodes)
	if st.inuse == nil {
		st.inuse = map[*node]inuse{}
	}
	if l != nil {
		st.binLive = &l.bins
		for _, n := range st.nodes {
			if n.site != nil && !n.unfollowed.Load() {
				u := l.byNode[n]
				if u == nil {
					u = &inuse{}
				}
				st.inuse[n] = *u
				st.exactNodes[n] = true
			}
		}
	}
	for _, n := range st.nodes {
		if u, ok := exactIn(n); ok {
			st.inuse[n] = u
			st.exactNodes[n] = true
		}
	}
	return st
}

// profilePath is $WEAVE_OUT with %p replaced by the pid ("" for none), or
// weave-<program>.<pid>.prof; in the directory WEAVE_OUT names (an
// existing one, or a path ending in '/', made if absent), with a random
// part: weave-<program>.<pid>.<16 hex digits>.prof, as the C runtime's.
func profilePath() string {
	pid := strconv.Itoa(os.Getpid())
	name := profileBase()
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

// profileBase is weave-<program>.<pid>, the profile's name without
// WEAVE_OUT less its .prof.
func profileBase() string {
	return "weave-" + filepath.Base(argv[0]) + "." + strconv.Itoa(os.Getpid())
}

// writeFile writes the profile to a temporary file created exclusively
// beside the destination, then renames it, so no half-written profile is
// ever seen under the name.
func writeFile(st *state, end string) (string, error) {
	path := profilePath()
	if path == "" {
		return "", nil
	}
	if f, ok, err := streamOut(path); ok && err == nil {
		return path, intoStream(f, err, func(w io.Writer) error { return st.encode(w, end) })
	} else if ok {
		// Not into that descriptor or device (a regular file, maybe the
		// program's own; closed), and not lost: the default name, as the
		// C runtime's.
		def := profileBase() + ".prof"
		writeStderr(fmt.Sprintf("==weave %d== WEAVE_OUT=%s: %v; the profile goes to %s\n", os.Getpid(), path, err, def))
		path = def
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
		path, err = commit(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return path, err
}

// fdName is the descriptor that /dev/stdout, /dev/stderr, /dev/stdin,
// /dev/fd/N or /proc/self/fd/N names, or -1.
func fdName(path string) int {
	switch path {
	case "/dev/stdin":
		return 0
	case "/dev/stdout":
		return 1
	case "/dev/stderr":
		return 2
	}
	for _, pre := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if d, ok := strings.CutPrefix(path, pre); ok {
			if n, err := strconv.Atoi(d); err == nil && n >= 0 && strconv.Itoa(n) == d {
				return n
			}
		}
	}
	return -1
}

// intoStream writes into f, as streamOut opened it (with its error), and
// closes it.
func intoStream(f *os.File, err error, write func(io.Writer) error) error {
	if err != nil {
		return err
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// streamName reports whether path names a stream streamOut writes into
// (a character device, a descriptor) rather than a file.
func streamName(path string) bool {
	fi, err := os.Lstat(path)
	return fdName(path) >= 0 || err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// commit gives the complete temporary file tmp its name: path, replacing
// only a profile (replaceable), else the first free of path.1.prof,
// path.2.prof... (path.N without a .prof suffix), as the C runtime does.
func commit(tmp, path string) (string, error) {
	if replaceable(path) {
		return path, os.Rename(tmp, path)
	}
	base, suffix := path, ""
	if b, ok := strings.CutSuffix(path, ".prof"); ok {
		base, suffix = b, ".prof"
	}
	for n := 1; n <= 1000; n++ {
		name := base + "." + strconv.Itoa(n) + suffix
		err := os.Link(tmp, name) // replaces nothing
		if err == nil {
			os.Remove(tmp)
			return name, nil
		}
		if !os.IsExist(err) {
			return path, err
		}
	}
	return path, os.ErrExist
}

// replaceable reports whether the file at path may be replaced by the
// profile: absent, or a regular file that is empty or a profile (its first
// bytes "weave profile "), never the user's source or program that
// WEAVE_OUT=main.go named by mistake.
func replaceable(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return os.IsNotExist(err)
	}
	if !fi.Mode().IsRegular() {
		return false
	}
	f, err := os.OpenFile(path, os.O_RDONLY|readFlags, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	const head = "weave profile "
	b := make([]byte, len(head))
	n, _ := f.Read(b)
	return strings.HasPrefix(head, string(b[:n]))
}

// totals are the summary's numbers: all allocations, and what is in use
// in the nodes followed exactly and in the others (estimated).
type totals struct {
	allocs, bytes        uint64
	exactBlocks, exactB  uint64 // in use, exact
	estBlocks, estB      uint64 // in use, estimated
	estNodes, exactNodes int    // allocation nodes of each kind
	tiny                 uint64 // exact blocks in use that may have been freed (tiny)
}

func (st *state) totals() (t totals) {
	for _, n := range st.nodes {
		if n.site == nil {
			continue
		}
		var a uint64
		for c := range 4 {
			a += n.allocsIn(c)
			t.bytes += n.bytesIn(c)
		}
		if a == 0 {
			continue
		}
		t.allocs += a
		u := st.inuse[n]
		if st.exactNodes[n] {
			t.exactNodes++
			t.exactBlocks += u.blocks
			t.exactB += u.bytes
			t.tiny += u.tiny
		} else {
			t.estNodes++
			t.estBlocks += u.blocks
			t.estB += u.bytes
		}
	}
	return
}

// commas writes n with thousands separators, as the C runtime does.
func commas(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
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
	t := st.totals()
	var b strings.Builder
	p := "==weave " + strconv.Itoa(os.Getpid()) + "== "
	line := func(format string, args ...any) { b.WriteString(p + fmt.Sprintf(format, args...) + "\n") }
	line("HEAP SUMMARY:")
	line("    in use at exit: %s bytes in %s blocks%s", commas(t.exactB+t.estB), commas(t.exactBlocks+t.estBlocks), st.inUseNote(t))
	line("  total heap usage: %s allocs, %s frees, %s bytes allocated", commas(t.allocs), commas(t.allocs-t.exactBlocks-t.estBlocks), commas(t.bytes))
	line("")
	switch {
	case t.exactBlocks+t.estBlocks == 0 && t.estNodes == 0:
		line("All heap blocks were freed -- no leaks are possible")
	case t.exactBlocks+t.estBlocks > 0:
		line("(Go frees what is unreachable: the blocks in use at exit are reachable, from globals or running goroutines; weave report lists them)")
	}
	st.summaryGoroutines(line)
	switch {
	case err != nil:
		line("cannot write profile %s: %v", path, err)
	case path != "":
		if streamName(path) { // not a file to read again
			line("profile written to %s", path)
		} else {
			line("profile written to %s (weave report %s)", path, path)
		}
	}
	if log != "" {
		log = strings.ReplaceAll(log, "%p", strconv.Itoa(os.Getpid()))
		if lerr := writeNew(log, b.String()); lerr != nil {
			fmt.Fprintf(&b, "%scannot write WEAVE_LOG file %s: %v\n", p, log, lerr)
		} else {
			return
		}
	}
	writeStderr(b.String())
}

// writeNew writes text to a new file: name, else name.1, name.2 ...,
// never replacing one (O_EXCL).
func writeNew(name, text string) error {
	if f, ok, err := streamOut(name); ok { // /dev/stderr: into it
		return intoStream(f, err, func(w io.Writer) error { _, err := io.WriteString(w, text); return err })
	}
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

// inUseNote says which part of the in-use figure is estimated, and how.
func (st *state) inUseNote(t totals) string {
	var notes []string
	if t.exactNodes > 0 && t.tiny > 0 {
		notes = append(notes, fmt.Sprintf("exact but for up to %s blocks under 16 bytes that may share a block with a live one", commas(t.tiny)))
	}
	switch {
	case t.estNodes == 0:
	case st.rate > 0:
		why := "maps, strings, blocks under 8 bytes: no block to follow"
		if noDump != "" {
			why = noDump
		}
		notes = append(notes, fmt.Sprintf("%s bytes in %s blocks of it estimated, for %d allocation contexts, from the runtime's heap profile sampled every %s bytes (%s): off by up to the bytes allocated there (WEAVE_GO_MEMRATE=1 samples every allocation)", commas(t.estB), commas(t.estBlocks), t.estNodes, commas(uint64(st.rate)), why))
	default:
		notes = append(notes, fmt.Sprintf("not known for %d allocation contexts (WEAVE_INUSE=0)", t.estNodes))
	}
	if len(notes) == 0 {
		return " (exact)"
	}
	return " (" + strings.Join(notes, "; ") + ")"
}

// summaryGoroutines writes the goroutines in woven code at exit.
func (st *state) summaryGoroutines(line func(string, ...any)) {
	if len(st.goroutines) == 0 {
		return
	}
	what := "goroutines"
	if len(st.goroutines) == 1 {
		what = "goroutine"
	}
	line("%s %s in woven code at exit; spawned or running at:", commas(uint64(len(st.goroutines))), what)
	for i, n := range st.goroutines {
		if i == 5 {
			line("  ... and %d more", len(st.goroutines)-5)
			break
		}
		line("  %s", chainOf(n))
	}
}
