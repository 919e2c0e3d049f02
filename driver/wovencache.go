package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/weave-profiler/weave/internal/cachedir"
	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/weave"
)

// The woven cache: weave cc's woven text of a unit, keyed by everything
// the weave reads, so that a unit whose preprocessed text did not change
// (a rebuild after a touch, make clean; make, another build directory of
// the same tree) is not parsed and woven again. The key: the preprocessed
// text, the unit's name, the weave binary (path, size, modification time,
// inode: a rebuilt weave is another one), the compiler binary and the
// dialect, the frame policy, pointcuts and guard form. What the frame
// store says about other units' functions is checked, not keyed: an
// entry holds the answers the weave took from it (weave.Result.Extern:
// which functions of other units it asked about, whether each may
// allocate), and serves only while the store gives the same answers; if
// not, the unit is woven again and the entry replaced. So the second
// build of a tree, whose store knows every unit, hits wherever what it
// learnt does not change the weave. An entry holds the woven text, those
// answers and what the driver reads of the weave's result (the unmatched
// patterns, the unit's summary for the frame store), encoded
// (encodeEntry), written under a temporary name and renamed. Entries are trusted only if
// the user's own (cachedir.Trusted); one write in 32 prunes the entries
// unused (by modification time, refreshed on use at most once a day)
// beyond wovenCacheBytes. WEAVE_CACHE=off turns it off; weave -v does not
// use it (it lists what the weave decided).
const (
	wovenCacheMagic = "weave woven 4\n"
	wovenCacheBytes = 512 << 20
)

// wovenEntry is what an entry holds.
type wovenEntry struct {
	Text      []byte
	Unmatched []string
	Summary   weave.Summary
	Extern    map[string]bool // weave.Result.Extern
}

// selfID identifies the running weave binary, once per process.
var selfID = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	return cachedir.FileID(exe)
})

// wovenCacheKey is the key of src's preprocessed text woven in dialect d;
// "" when there is no cache to use.
func (cfg *Config) wovenCacheKey(src string, text []byte, d parse.Dialect) string {
	if cfg.Verbose || os.Getenv("WEAVE_CACHE") == "off" {
		return ""
	}
	self := selfID()
	if self == "" || len(d.Compiler) == 0 {
		return ""
	}
	compiler, err := lookPath(d.Compiler[0])
	if err != nil {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x01%s\x01%q\x01%q\x01", wovenCacheMagic, self, cachedir.FileID(compiler), d.Compiler)
	// Every option but the prologue (part of the binary) and extern
	// (checked against the entry: sameAnswers).
	fmt.Fprintf(h, "%q\x01%#v\x01%q\x01%d\x01", d.Flags, cfg.keyOptions(), src, len(text))
	h.Write(text)
	return hex.EncodeToString(h.Sum(nil))
}

// sameAnswers reports whether extern answers every question of answers
// (weave.Result.Extern) as it was answered: whether a function of another
// unit may allocate (the weave's rule: unless extern knows it does not).
func sameAnswers(answers, extern map[string]bool) bool {
	for name, may := range answers {
		if v, known := extern[name]; (v || !known) != may {
			return false
		}
	}
	return true
}

// wovenCacheDir returns the cache's directory, made if need be.
func wovenCacheDir() (string, error) { return cacheSubdir("woven") }

// cacheSubdir returns the directory name of weave's cache directory, made
// if need be.
func cacheSubdir(name string) (string, error) {
	base, err := cachedir.Dir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, name)
	return dir, os.MkdirAll(dir, 0o700)
}

// loadWoven returns the entry of key, or nil.
func loadWoven(key string) *wovenEntry {
	dir, err := wovenCacheDir()
	if err != nil {
		return nil
	}
	var e wovenEntry
	if !loadEntry(filepath.Join(dir, key), wovenCacheMagic, &e) || len(e.Text) == 0 {
		return nil
	}
	return &e
}

// storeWoven writes the entry of key, behind the compile (CC waits for
// it before it returns): encoding and writing it took a small program's
// first compile 1 ms between its weave and its compile.
func storeWoven(key string, e *wovenEntry) {
	behind.Go(func() {
		if dir, err := wovenCacheDir(); err == nil {
			storeEntry(dir, key, wovenCacheMagic, e, wovenCacheBytes)
		}
	})
}

// behind is the work a command does not wait for before its next step
// (writing cache entries: the texts it holds are no longer written to),
// which CC waits for before it returns.
var behind sync.WaitGroup

// loadEntry decodes the cache entry at path (storeEntry's, magic) into v
// and reports whether it could; an entry used is marked so (its
// modification time, at most once a day) for the pruning.
func loadEntry(path, magic string, v cacheEntry) bool {
	if !decodeEntry(readCacheFile(path), magic, v) {
		return false
	}
	if fi, err := os.Stat(path); err == nil && time.Since(fi.ModTime()) > 24*time.Hour {
		now := time.Now()
		os.Chtimes(path, now, now)
	}
	return true
}

// storeEntry writes v as the entry key of the cache directory dir
// (encodeEntry's, magic; writeCacheFile: a temporary name renamed), and,
// one write in 32 if dir was not pruned in the last pruneEvery, prunes
// dir to limit bytes (pruneCache).
func storeEntry(dir, key, magic string, v cacheEntry, limit int64) {
	if b := encodeEntry(magic, v); b != nil &&
		writeCacheFile(filepath.Join(dir, key), b) && time.Now().UnixNano()%32 == 0 && pruneDue(dir) {
		pruneCache(dir, limit)
	}
}

// pruneEvery is how often a cache directory is pruned at most. A prune
// reads the size and time of every entry: 32-38 ms for 10,000 objects
// (the object cache at about its limit), which one write in 32 paid, so
// every woven compile about 3 ms on average (three entries written). The
// limits are soft: a cache may outgrow its limit by what is written in
// pruneEvery.
const pruneEvery = 5 * time.Minute

// pruneDue reports whether dir is due a prune, and if so marks it pruned
// now (the time of its file .pruned; pruneCache keeps dot files younger
// than an hour). Concurrent compiles may both prune, as before: removing
// an entry twice is harmless.
func pruneDue(dir string) bool {
	stamp := filepath.Join(dir, ".pruned")
	if fi, err := os.Lstat(stamp); err == nil && time.Since(fi.ModTime()) < pruneEvery {
		return false
	}
	now := time.Now()
	if os.Chtimes(stamp, now, now) != nil {
		f, err := os.OpenFile(stamp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return !os.IsExist(err) // made since by another compile, which prunes
		}
		f.Close()
	}
	return true
}

// Entries are not compressed (encodeEntry, entry.go): flate cost a Lua
// unit's compile about 1.7 ms to store each of its two entries and 1 ms
// to read each (lapi.c's woven text, 225 KB, 61 KB compressed), for about
// 3.7 times the space on disk, which the caches' limits bound.

// pruneCache removes the least recently used entries of dir beyond limit
// bytes, temporary files older than an hour (of weaves that died) and
// empty files (the object cache's marks) older than a day.
func pruneCache(dir string, limit int64) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type entry struct {
		path string
		size int64
		mod  time.Time
	}
	var es []entry
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			if time.Since(fi.ModTime()) > time.Hour {
				os.Remove(path)
			}
			continue
		}
		if fi.Size() == 0 && time.Since(fi.ModTime()) > 24*time.Hour {
			os.Remove(path)
			continue
		}
		es = append(es, entry{path, fi.Size(), fi.ModTime()})
	}
	slices.SortFunc(es, func(a, b entry) int { return b.mod.Compare(a.mod) })
	total := int64(0)
	for _, e := range es {
		total += e.size
		if total > limit {
			os.Remove(e.path)
		}
	}
}

// weaveCached is weaveStdinText through the woven cache.
func (cfg *Config) weaveCached(src string, text []byte, d parse.Dialect, extern map[string]bool) ([]byte, *weave.Result, error) {
	key := cfg.wovenCacheKey(src, text, d)
	if key != "" {
		if e := loadWoven(key); e != nil && sameAnswers(e.Extern, extern) {
			return e.Text, &weave.Result{Text: e.Text, Unmatched: e.Unmatched, Summary: e.Summary, Extern: e.Extern}, nil
		}
	}
	woven, res, err := cfg.weaveStdinText(src, text, d, extern)
	if err == nil && key != "" && res != nil {
		storeWoven(key, &wovenEntry{Text: woven, Unmatched: res.Unmatched, Summary: res.Summary, Extern: res.Extern})
	}
	return woven, res, err
}
