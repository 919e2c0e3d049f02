package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/weave-profiler/weave/internal/cachedir"
	"github.com/weave-profiler/weave/parse"
)

// The direct cache (ccache's "direct mode"): the preprocessed text of a
// unit, keyed by the command that makes it, and valid while the files it
// read are unchanged, so that a unit compiled again (make clean; make, a
// small program built again) skips the -E step, a third of a small
// program's woven compile. The key: weave's and the compiler's binaries
// (as the woven cache keys them), the compiler command and the -E step's
// flags, the working directory, the source's name and the environment
// variables the preprocessor reads. The entry: every file the text came
// from (its linemarkers: the source and each header entered) with a hash
// of its content, the -E step's diagnostics and the text, with system
// headers' comments dropped (parse.DropSystemComments), and the
// dependency file the -E step wrote under -MD or -MMD (its -MF, -MT,
// -MQ, -MP in the key), which a hit writes again. A hit needs every
// file to hash as it did; any change is a miss, which runs -E and writes
// the entry again. Not stored: a unit whose files use __DATE__, __TIME__
// or __TIMESTAMP__, or whose own (not system) files probe with
// __has_include (a header created later would change the text with no
// file of it changing), or one of whose files changed less than two seconds
// before its -E step started (it may have changed while -E read it). Not
// used: standard input, -MG and other -M flags, dependency output by
// environment (DEPENDENCIES_OUTPUT), -imacros (its file leaves no
// linemarker), -v (weave -v), and
// WEAVE_CACHE=off. As with ccache, a header newly created earlier in the
// include path than the one the text came from is not noticed (nor by a
// system header's __has_include): make clean does not remove the
// entries, WEAVE_CACHE=off (or touching the source) does. Entries are
// files of the cache directory's direct/, written and pruned as the woven
// cache's.
const (
	directMagic = "weave direct 4\n"
	directBytes = 256 << 20
)

// directEntry is what an entry holds.
type directEntry struct {
	Files  []directFile
	Stderr []byte // the -E step's diagnostics
	Text   []byte // the preprocessed text, system comments dropped
	Deps   []byte // the dependency file the -E step wrote (-MD, -MMD), if any
}

// depFlag reports whether f is one of the dependency output flags the
// direct cache takes: the -E step writes the file (-MF) as a side effect,
// which a hit writes again from the entry. Not -MG (a missing header
// taken as generated: no linemarker for it), nor clang's -MJ.
func depFlag(f string) bool {
	switch f {
	case "-MD", "-MMD", "-MP", "-MF", "-MT", "-MQ":
		return true
	}
	return strings.HasPrefix(f, "-MF") || strings.HasPrefix(f, "-MT") || strings.HasPrefix(f, "-MQ")
}

// depFile returns the dependency file of the -E step's flags (the last
// -MF), or "".
func depFile(flags []string) string {
	file := ""
	for i, f := range flags {
		if f == "-MF" && i+1 < len(flags) {
			file = flags[i+1]
		} else if strings.HasPrefix(f, "-MF") && len(f) > 3 {
			file = f[3:]
		}
	}
	return file
}

type directFile struct {
	Name string // as the linemarkers name it (relative to the working directory)
	Sum  [sha256.Size]byte
}

// directEnv are the environment variables that change what gcc's or
// clang's -E step writes (or the language of its diagnostics).
var directEnv = []string{"CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "OBJC_INCLUDE_PATH",
	"GCC_EXEC_PREFIX", "COMPILER_PATH", "SOURCE_DATE_EPOCH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
	"GCC_COLORS", "CCC_OVERRIDE_OPTIONS"}

// hashEnv writes the environment variables vars (set or not, and their
// values) into a cache key's hash.
func hashEnv(h io.Writer, vars []string) {
	for _, v := range vars {
		val, ok := os.LookupEnv(v)
		fmt.Fprintf(h, "%s=%v:%q\x00", v, ok, val)
	}
}

// directKey is the direct cache's key of the -E step of src with flags,
// "" when the cache is not to be used for it.
func (cfg *Config) directKey(flags []string, src string) string {
	if cfg.Verbose || os.Getenv("WEAVE_CACHE") == "off" || src == "-" ||
		os.Getenv("DEPENDENCIES_OUTPUT") != "" || os.Getenv("SUNPRO_DEPENDENCIES") != "" {
		return ""
	}
	for _, f := range flags {
		if strings.HasPrefix(f, "-M") && !depFlag(f) || strings.HasPrefix(f, "-Wp,") || f == "-imacros" || f == "-v" || f == "-H" {
			return ""
		}
	}
	cc := cfg.bareCompiler()
	compiler, err := lookPath(cc[0])
	if err != nil {
		return ""
	}
	wd, err := os.Getwd()
	self, comp := selfID(), cachedir.FileID(compiler)
	if err != nil || self == "" || comp == "" {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x01%q\x01%q\x01%q\x01%q\x01%q\x01%q\x01", directMagic, self, comp, cc, flags, wd, src)
	hashEnv(h, directEnv)
	return hex.EncodeToString(h.Sum(nil))
}

// preprocessDirect is the -E step through the direct cache: it returns
// the preprocessed text of src with system headers' comments dropped,
// its diagnostics in stderr. running, if not nil, is called once the -E
// step has started.
func (cfg *Config) preprocessDirect(flags []string, src string, stdin []byte, stderr *bytes.Buffer, running func()) ([]byte, error) {
	key := cfg.directKey(flags, src)
	if running == nil {
		running = func() {}
	}
	if key == "" {
		text, err := cfg.preprocess(flags, src, stdin, stderr, running)
		return parse.DropSystemComments(text), err
	}
	dir, derr := cacheSubdir("direct")
	deps := depFile(flags)
	if derr == nil {
		if e := loadDirect(filepath.Join(dir, key)); e != nil &&
			(deps == "" || WriteAtomic(deps, func(w io.Writer) error { _, err := w.Write(e.Deps); return err }) == nil) {
			stderr.Write(e.Stderr)
			return e.Text, nil
		}
	}
	start := time.Now()
	var pp bytes.Buffer
	text, err := cfg.preprocess(flags, src, stdin, &pp, running)
	stderr.Write(pp.Bytes())
	if err != nil {
		return nil, err
	}
	full := text
	text = parse.DropSystemComments(text)
	if derr != nil {
		return text, nil
	}
	e := &directEntry{Stderr: pp.Bytes(), Text: text}
	if deps != "" {
		if fi, err := os.Stat(deps); err != nil || !fi.Mode().IsRegular() {
			return text, nil
		}
		if e.Deps, err = os.ReadFile(deps); err != nil {
			return text, nil
		}
	}
	// Behind the weave (CC waits for it): the files named in the text
	// (0.1 ms for a small program's, once between its -E step and its
	// parse), read and hashed again, the entry written.
	behind.Go(func() {
		if files, system := sourceFiles(full); files != nil {
			storeDirect(dir, key, e, files, system, start)
		}
	})
	return text, nil
}

// storeDirect writes e, the entry of key, with the files the text came
// from (sourceFiles), unless one of them changed since two seconds before
// the -E step started or makes the text depend on more than the files.
func storeDirect(dir, key string, e *directEntry, files []string, system map[string]bool, start time.Time) {
	var buf []byte
	for _, name := range files {
		b, mtime, err := readFile(name, buf)
		buf = b
		if err != nil || !mtime.Before(start.Add(-2*time.Second)) || volatile(b, system[name]) {
			return
		}
		e.Files = append(e.Files, directFile{Name: name, Sum: sha256.Sum256(b)})
	}
	storeEntry(dir, key, directMagic, e, directBytes)
}

// loadDirect returns the entry at path if every file it lists hashes as
// it did, else nil.
func loadDirect(path string) *directEntry {
	var e directEntry
	if !loadEntry(path, directMagic, &e) || len(e.Files) == 0 {
		return nil
	}
	var buf []byte
	for _, f := range e.Files {
		b, _, err := readFile(f.Name, buf)
		buf = b
		if err != nil || sha256.Sum256(b) != f.Sum {
			return nil
		}
	}
	return &e
}

// readFile returns the content of the file name and its modification
// time, from one open: os.ReadFile and os.Stat looked the path up twice
// and registered each file with the network poller (an epoll_ctl that
// fails for a regular file), for each of the tens of headers a unit's
// entry hashes. The content is read into buf's memory where it fits: one
// buffer for all of them, not a fresh one each (a small program's 59
// headers, 256 KB: 70 page faults fewer).
func readFile(name string, buf []byte) ([]byte, time.Time, error) {
	fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, time.Time{}, &os.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, time.Time{}, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	b := buf[:0]
	if int64(cap(b)) < st.Size+1 { // +1: the read that sees the end
		b = make([]byte, 0, max(st.Size+1, 64<<10))
	}
	for {
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, time.Time{}, &os.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, time.Unix(st.Mtim.Unix()), nil
		}
		b = b[:len(b)+n]
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grown since the fstat
		}
	}
}

// sourceFiles returns the files preprocessed text came from, in the order
// its linemarkers name them first, or nil if a name cannot be read back
// (or there is none). Names in angle brackets (<built-in>,
// <command-line>) are not files.
func sourceFiles(text []byte) (files []string, system map[string]bool) {
	seen := map[string]bool{}
	system = map[string]bool{}
	for len(text) > 0 {
		var line []byte
		line, text, _ = bytes.Cut(text, []byte{'\n'})
		if len(line) < 4 || line[0] != '#' || line[1] != ' ' || line[2] < '0' || line[2] > '9' {
			continue
		}
		q := bytes.IndexByte(line, '"')
		e := bytes.LastIndexByte(line, '"')
		if q < 0 || e <= q {
			continue
		}
		name, err := strconv.Unquote(string(line[q : e+1]))
		if err != nil {
			return nil, nil
		}
		if name == "" || strings.HasPrefix(name, "<") || seen[name] {
			continue
		}
		// Flag 3: a system header (its __has_include probes the C
		// library's own headers, not the project's).
		system[name] = slices.Contains(strings.Fields(string(line[e+1:])), "3")
		seen[name] = true
		files = append(files, name)
	}
	return files, system
}

// volatile reports whether a file's text may make the preprocessed text
// depend on more than the files: __DATE__, __TIME__, __TIMESTAMP__, or,
// outside system headers, a probe for a file that need not exist
// (__has_include, __has_include_next, __has_embed), whose answer can
// change with none of the files changing (a header created since).
// System headers' probes are taken as stable (glibc's unistd.h asks for
// linux/close_range.h). One pass over the "__" of the text: five
// bytes.Contains took 3 times as long over a small program's 59 headers
// (0.5 against 0.17 ms).
func volatile(b []byte, system bool) bool {
	for {
		i := bytes.Index(b, []byte("__"))
		if i < 0 {
			return false
		}
		rest := b[i+2:]
		switch {
		case bytes.HasPrefix(rest, []byte("DATE__")), bytes.HasPrefix(rest, []byte("TIME__")), bytes.HasPrefix(rest, []byte("TIMESTAMP__")):
			return true
		case !system && (bytes.HasPrefix(rest, []byte("has_include")) || bytes.HasPrefix(rest, []byte("has_embed"))):
			return true
		}
		b = b[i+1:] // "___DATE__": the next "__" may overlap this one
	}
}
