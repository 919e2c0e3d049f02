package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/weave-profiler/weave/internal/cachedir"
	"github.com/weave-profiler/weave/weave"
)

// The frame store: what weave cc learnt about the functions of external
// linkage of the units it compiled (weave.Summary), for the frame analysis
// of the units it compiles later, so that a call of another unit's
// function that cannot allocate leaves its caller frameless.
//
// It lives in weave's cache directory, one directory per working
// directory of the build (a make's), one file per unit (source and
// object), written whole under a temporary name and renamed: parallel
// compilers read the summaries complete or not at all. A weave cc command
// reads every summary there is when it starts, once for all its units.
// What is not there yet (a unit compiled later, at the same time, or by
// the same command) counts as a function that may allocate, so the first
// build of a tree depends on the order of its compiles; a second build
// (make clean; make) finds every unit's summary and weaves every unit the
// same whatever its order. A wrong summary (a stale one, or the same name
// in two programs of one directory) can only leave a function frameless
// that is on an allocation chain: the chain then misses that function,
// and its allocations are charged to its innermost framed caller, as the
// chain above it; totals, sites and leaks do not change. --frames=unit
// (WEAVE_FRAMES=unit) leaves the store alone.
type frameStore struct {
	dir string
}

const frameStoreMagic = "weave frames 1"

// openFrameStore returns the store of the working directory, or nil if
// there is none to be had.
func openFrameStore() *frameStore {
	wd, err := os.Getwd()
	if err != nil {
		return nil
	}
	base, err := cachedir.Dir()
	if err != nil {
		return nil
	}
	sum := sha256.Sum256([]byte(wd))
	top := filepath.Join(base, "frames")
	dir := filepath.Join(top, hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil
	}
	if time.Now().UnixNano()%64 == 0 {
		pruneFrameStores(top, dir)
	}
	return &frameStore{dir: dir}
}

// frameStoreAge is how long a store no compile has written to is kept,
// and frameStoreMax how many stores are kept at most (the most recently
// written): builds in temporary directories (test suites, CI) leave a
// store each, and a cache of thousands made every 64th compile pay for
// reading them all (32,000 stores: 120 ms). A store lost costs only frames
// in its tree's next build (weave.Resolve's default: may allocate).
const (
	frameStoreAge = 14 * 24 * time.Hour
	frameStoreMax = 256
)

// pruneFrameStores removes the stores under top, but keep, that no
// compile has written to for frameStoreAge (a file renamed into a
// directory updates its time), or that are not among the frameStoreMax
// most recently written: those of builds in temporary directories, of
// trees that are gone. One compile in 64 looks.
func pruneFrameStores(top, keep string) {
	ents, err := os.ReadDir(top)
	if err != nil {
		return
	}
	type store struct {
		path string
		mod  time.Time
	}
	var kept []store
	for _, e := range ents {
		path := filepath.Join(top, e.Name())
		fi, err := e.Info()
		switch {
		case err != nil || !e.IsDir() || path == keep:
		case time.Since(fi.ModTime()) > frameStoreAge:
			os.RemoveAll(path)
		default:
			kept = append(kept, store{path, fi.ModTime()})
		}
	}
	if len(kept) < frameStoreMax {
		return
	}
	slices.SortFunc(kept, func(a, b store) int { return b.mod.Compare(a.mod) })
	for _, s := range kept[frameStoreMax-1:] { // keep counts as one
		os.RemoveAll(s.path)
	}
}

// load reads every summary in the store and resolves them
// (weave.Resolve).
func (s *frameStore) load() map[string]bool {
	dir, err := os.Open(s.dir)
	if err != nil {
		return nil
	}
	defer dir.Close()
	ents, err := dir.ReadDir(-1)
	if err != nil {
		return nil
	}
	var sums []weave.Summary
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") || !e.Type().IsRegular() {
			continue
		}
		if b := cachedir.ReadTrustedIn(dir, e.Name()); b != nil {
			if sum := parseSummary(b); sum != nil {
				sums = append(sums, sum)
			}
		}
	}
	return weave.Resolve(sums)
}

// unitFile is the file of the summary of the unit compiled from src to
// out.
func (s *frameStore) unitFile(src, out string) string {
	if a, err := filepath.Abs(src); err == nil {
		src = a
	}
	if a, err := filepath.Abs(out); err == nil {
		out = a
	}
	key := sha256.Sum256([]byte(src + "\x00" + out))
	return filepath.Join(s.dir, hex.EncodeToString(key[:12]))
}

// readCacheFile returns the content of a file of weave's cache directory
// that the user's own (cachedir.ReadTrusted), else nil.
func readCacheFile(path string) []byte {
	return cachedir.ReadTrusted(path)
}

// save replaces the summary of the unit compiled from src to out.
func (s *frameStore) save(src, out string, sum weave.Summary) {
	s.stage(src, out, sum)(true)
}

// stage writes the summary as save does, but for its rename, which
// commit(true) does (commit(false) removes it): so that it is written
// while the compile runs, and only kept if it succeeds.
func (s *frameStore) stage(src, out string, sum weave.Summary) (commit func(ok bool) bool) {
	return stageCacheFile(s.unitFile(src, out), formatSummary(sum))
}

// writeCacheFile writes a file of weave's cache directory whole: under a
// temporary name (a dot file of its directory, mode 0600), renamed into
// place. It reports whether it did.
func writeCacheFile(path string, data []byte) bool {
	return stageCacheFile(path, data)(true)
}

// stageCacheFile is writeCacheFile but for the rename, which commit(true)
// does (reporting whether the file was written); commit(false) removes
// the temporary file.
func stageCacheFile(path string, data []byte) (commit func(ok bool) bool) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp*")
	if err != nil {
		return func(bool) bool { return false }
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	return func(ok bool) bool {
		if ok && werr == nil && cerr == nil && os.Rename(f.Name(), path) == nil {
			return true
		}
		os.Remove(f.Name())
		return false
	}
}

// formatSummary writes a summary as text: the magic line, then one line
// per function, "NAME a" (it allocates) or "NAME c CALLEE...".
func formatSummary(sum weave.Summary) []byte {
	var b bytes.Buffer
	b.WriteString(frameStoreMagic + "\n")
	for _, name := range slices.Sorted(maps.Keys(sum)) {
		f := sum[name]
		if f.Allocs {
			b.WriteString(name + " a\n")
			continue
		}
		b.WriteString(name + " c")
		for _, c := range f.Calls {
			b.WriteString(" " + c)
		}
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// parseSummary reads formatSummary's text; nil if it is not one. Its
// names are substrings of one copy of b: every compile in a directory
// reads the hundreds of summaries of its store (a line scanner's buffer
// of its own for each, fresh memory, was a third of their cost).
func parseSummary(b []byte) weave.Summary {
	text := string(b)
	magic, text, more := strings.Cut(text, "\n")
	if magic != frameStoreMagic {
		return nil
	}
	sum := weave.Summary{}
	for more && text != "" {
		var line string
		line, text, more = strings.Cut(text, "\n")
		f := strings.Fields(strings.TrimSuffix(line, "\r"))
		switch {
		case len(f) == 2 && f[1] == "a":
			sum[f[0]] = weave.FuncSummary{Allocs: true}
		case len(f) >= 2 && f[1] == "c":
			sum[f[0]] = weave.FuncSummary{Calls: f[2:]}
		default:
			return nil
		}
	}
	return sum
}
