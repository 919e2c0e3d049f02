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

	"github.com/weave-profiler/weave/internal/cachedir"
)

// The object cache (ccache's, for the woven compile): the object the
// compiler made of a unit's woven text, so that a rebuild whose woven
// text did not change (a touched file, make clean; make, the same file
// compiled and linked again) does not run the compiler on it, the largest
// part of a woven compile. The key: the woven text, the compile command
// without its input and output names (the compiler command, the flags,
// the mode), the compiler binary (as the woven cache keys it: the
// driver's identity, as ccache's default, not cc1's or the assembler's), the
// working directory when the object may have debug information (its
// DW_AT_comp_dir; through -fdebug-prefix-map or -ffile-prefix-map if
// exactly one of them maps it), the woven file's name when the text has
// no linemarker to name the unit, and the environment variables that
// change the compiler's output or diagnostics. An entry holds the object
// and the compile's diagnostics, replayed on a hit. Cached only:
//   - a compile that succeeded, of an object (-c, or a command's
//     temporary object for its link), not to standard output;
//   - with every flag known to read and write nothing but the text, the
//     object and the diagnostics (pureFlag): not -fprofile-*, --coverage,
//     -fplugin, -save-temps, -fdump-*, -fstack-usage, -gsplit-dwarf,
//     -flto, -B, -specs, -Wa,-a... listings, -v, and so on;
//   - without GCC_COMPARE_DEBUG, DEPENDENCIES_OUTPUT or
//     SUNPRO_DEPENDENCIES in the environment, and without an assembler
//     .incbin or .include in the text (a file it reads);
//   - for a command that compiles and links one file (whose link command
//     compiles the woven text: driver.oneStepJob), from the second time
//     it is compiled;
//   - with no compiler launcher in WEAVE_CC (ccache, sccache, distcc,
//     icecc...): the launcher is the user's choice of what caches and
//     where the compiles go (ccache's own configuration, statistics and
//     limits; distcc and icecream's remote hosts), and weave hands it the
//     compile as before. Put ccache in front of distcc (CCACHE_PREFIX) to
//     have both.
//
// Entries are files of the cache directory's object/, written under a
// temporary name and renamed, trusted only if the user's own, pruned as
// the woven cache's beyond objCacheBytes. WEAVE_CACHE=off turns it off;
// --weave-verbose does not use it.
const (
	objCacheMagic = "weave object 2\n"
	objCacheBytes = 1 << 30
)

// objEntry is what an entry holds.
type objEntry struct {
	Object []byte
	Stderr []byte // the compile's diagnostics
}

// objEnv are the environment variables, besides the preprocessor's, that
// change what the compiler writes: its diagnostics' width and links.
var objEnv = append(slices.Clone(directEnv), "COLUMNS", "GCC_URLS", "TERM_URLS", "GCC_EXTRA_DIAGNOSTIC_OUTPUT")

// objKey is the object cache's key of compiling woven text (the file
// wfile) with argv (the command without its input and output), "" when
// it is not to be cached.
func (cfg *Config) objKey(argv []string, woven []byte, wfile string) string {
	if cfg.Verbose || os.Getenv("WEAVE_CACHE") == "off" || len(cfg.bareCompiler()) != len(cfg.Compiler) {
		return ""
	}
	for _, v := range []string{"GCC_COMPARE_DEBUG", "DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES"} {
		if os.Getenv(v) != "" {
			return ""
		}
	}
	flags := argv[1:]
	debug := false
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		if flagsWithValue[f] && i+1 < len(flags) {
			if !pureFlagValue(f) {
				return ""
			}
			i++
			continue
		}
		if !pureFlag(f) {
			return ""
		}
		debug = debug || strings.HasPrefix(f, "-g") && f != "-g0"
	}
	if bytes.Contains(woven, []byte(".incbin")) || bytes.Contains(woven, []byte(".include")) {
		return ""
	}
	compiler, err := lookPath(argv[0])
	if err != nil {
		return ""
	}
	comp := cachedir.FileID(compiler)
	if comp == "" {
		return ""
	}
	keyed := argv
	if debug {
		wd, err := os.Getwd() // $PWD if it names it, as gcc's getpwd
		if err != nil {
			return ""
		}
		var dir string
		dir, keyed = compDir(argv, wd, woven)
		keyed = append(slices.Clip(keyed), "cwd="+dir)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x01%q\x01%q\x01", objCacheMagic, comp, keyed)
	if !bytes.HasPrefix(woven, []byte("# ")) {
		// The compiler names the unit after its input file.
		fmt.Fprintf(h, "file %q\x01", filepath.Base(wfile))
	}
	hashEnv(h, objEnv)
	fmt.Fprintf(h, "%d\x01", len(woven))
	h.Write(woven)
	return hex.EncodeToString(h.Sum(nil))
}

// compDir returns the working directory wd as the debug information of
// a compile with argv names it: mapped by the one -fdebug-prefix-map or
// -ffile-prefix-map whose old prefix it starts with, or wd itself (also
// when several match: which one wins is the compiler's business). With
// that map, the object does not depend on the old prefix if no file of
// the woven text (its linemarkers: "NAME") starts with it either; then
// keyed is argv with the old prefix left out of the map, so that the same
// tree built elsewhere, mapped to the same name, hits. Else keyed is argv.
func compDir(argv []string, wd string, woven []byte) (dir string, keyed []string) {
	dir, at := wd, -1
	for i, f := range argv {
		m, ok := strings.CutPrefix(f, "-fdebug-prefix-map=")
		if !ok {
			m, ok = strings.CutPrefix(f, "-ffile-prefix-map=")
		}
		old, new, found := strings.Cut(m, "=")
		if ok && found && old != "" && strings.HasPrefix(wd, old) {
			if at >= 0 {
				return wd, argv
			}
			dir, at = new+wd[len(old):], i
		}
	}
	if at < 0 {
		return wd, argv
	}
	old, new, _ := strings.Cut(argv[at][strings.IndexByte(argv[at], '=')+1:], "=")
	if strings.ContainsAny(old, "\\\"\n") || bytes.Contains(woven, []byte("\""+old)) {
		return dir, argv
	}
	keyed = slices.Clone(argv)
	keyed[at] = argv[at][:strings.IndexByte(argv[at], '=')+1] + "\x00=" + new
	return dir, keyed
}

// pureFlags are the compile flags (beside the -W, -m, -g, -f and -O
// families: pureFlag) that make the compiler read nothing but its input
// and write nothing but the object and its diagnostics.
var pureFlags = map[string]bool{
	"-pedantic": true, "-pedantic-errors": true, "--pedantic": true, "--pedantic-errors": true, "-ansi": true,
	"-w": true, "-pipe": true, "-pthread": true, "--pthread": true, "-p": true, "-pg": true,
	"-Qunused-arguments": true, "-c": true,
}

// pureValueFlags are the flags with a separate value that pureFlag takes.
var pureValueFlags = map[string]bool{"--param": true, "-target": true, "--target": true, "-arch": true, "--sysroot": true}

// pureFValues are the -fNAME=VALUE options (-fno-NAME=VALUE too) whose
// value names no file.
var pureFValues = map[string]bool{
	"debug-prefix-map": true, "file-prefix-map": true, "macro-prefix-map": true, "visibility": true,
	"tls-model": true, "sanitize": true, "sanitize-recover": true, "sanitize-trap": true,
	"sanitize-address-use-after-return": true, "sanitize-coverage": true, "cf-protection": true,
	"diagnostics-color": true, "diagnostics-urls": true, "diagnostics-show-location": true,
	"diagnostics-column-unit": true, "diagnostics-column-origin": true, "diagnostics-escape-format": true,
	"diagnostics-path-format": true, "diagnostics-minimum-margin-width": true, "message-length": true,
	"max-errors": true, "error-limit": true, "fp-contract": true, "excess-precision": true,
	"permitted-flt-eval-methods": true, "patchable-function-entry": true, "zero-call-used-regs": true,
	"trivial-auto-var-init": true, "align-functions": true, "align-jumps": true, "align-loops": true,
	"align-labels": true, "exec-charset": true, "wide-exec-charset": true, "input-charset": true,
	"strict-flex-arrays": true, "inline-limit": true, "live-patching": true, "simd-cost-model": true,
	"vect-cost-model": true, "ira-algorithm": true, "ira-region": true, "stack-reuse": true,
	"random-seed": true, "pack-struct": true, "abi-version": true, "debug-default-version": true,
	"asan-shadow-offset": true, "stack-limit-symbol": true, "stack-limit-register": true, "tabstop": true,
	"macro-backtrace-limit": true, "fp-model": true, "denormal-fp-math": true, "fp-exception-behavior": true, "diagnostics-format": true,
	"instrument-functions-exclude-function-list": true, "instrument-functions-exclude-file-list": true,
	"stack-protector": true, "stack-check": true, "hardcfr-check-returning-calls": true,
}

// impureF are the -f options (by prefix, -fno- forms taken apart) that
// read or write files beside the input and the object (profiles, plugins,
// dumps, reports, LTO), or print what changes from run to run.
var impureF = []string{
	"profile", "auto-profile", "branch-probabilities", "test-coverage", "coverage", "condition-coverage",
	"plugin", "dump", "stack-usage", "callgraph-info", "compare-debug", "lto", "save-optimization-record",
	"record-gcc-switches", "mem-report", "time-report", "stats", "sched-verbose", "deps", "module",
	"pch", "crash-diagnostics", "embed-bitcode", "time-trace", "proc-stat-report", "self-test",
	"cs-profile", "debug-compilation-dir", "opt-info", "ipa-profile", "diagnostics-format", "report-bug",
}

// pureFlag reports whether f (without a separate value) may be cached.
func pureFlag(f string) bool {
	switch {
	case pureFlags[f]:
		return true
	case strings.HasPrefix(f, "-O"), strings.HasPrefix(f, "-std="), strings.HasPrefix(f, "--std="),
		strings.HasPrefix(f, "--param="), strings.HasPrefix(f, "--target="), strings.HasPrefix(f, "--sysroot="):
		return true
	case strings.HasPrefix(f, "-Wa,"):
		return pureAsmFlags(f[len("-Wa,"):])
	case strings.HasPrefix(f, "-W"):
		return !strings.Contains(f, ",") // -Wl, -Wp, -Wa: not compile warnings
	case strings.HasPrefix(f, "-m"):
		return f != "-mllvm"
	case strings.HasPrefix(f, "-g"):
		return !strings.HasPrefix(f, "-gsplit-dwarf")
	case strings.HasPrefix(f, "-f"):
		name, value, hasValue := strings.Cut(strings.TrimPrefix(f[2:], "no-"), "=")
		if hasValue && !pureFValues[name] {
			return false
		}
		if name == "opt-info" || strings.HasPrefix(name, "opt-info-") {
			return !hasValue // to stderr without a file name
		}
		if name == "diagnostics-format" {
			return hasValue && !strings.Contains(value, "file")
		}
		for _, p := range impureF {
			if strings.HasPrefix(name, p) {
				return false
			}
		}
		return true
	}
	return false
}

// pureFlagValue reports whether the flag f with a separate value may be
// cached.
func pureFlagValue(f string) bool { return pureValueFlags[f] }

// pureAsmFlags reports whether the assembler options of -Wa, (commas
// between) write nothing but the object: no listing (-a...), no
// dependency file (--MD).
func pureAsmFlags(opts string) bool {
	for _, o := range strings.Split(opts, ",") {
		switch {
		case o == "--noexecstack", o == "--64", o == "--32", o == "-W", o == "--no-warn", o == "--fatal-warnings",
			o == "--nocompress-debug-sections", strings.HasPrefix(o, "--compress-debug-sections"),
			strings.HasPrefix(o, "-mrelax-relocations="), strings.HasPrefix(o, "-mx86-used-note="):
		default:
			return false
		}
	}
	return true
}

// firstMiss reports whether key was never missed before (in the last
// day): it leaves a mark (an empty file KEY.seen) that says it was.
func firstMiss(key string) bool {
	dir, err := objCacheDir()
	if err != nil {
		return false
	}
	f, err := os.OpenFile(filepath.Join(dir, key+".seen"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// objCacheDir returns the cache's directory, made if need be.
func objCacheDir() (string, error) { return cacheSubdir("object") }

// loadObject writes the object of key's entry to out (in sc's directory,
// made if need be, for a link's object) and returns the compile's
// diagnostics; ok is false if there is no entry (or it cannot be written:
// the compiler then writes out as it would).
func loadObject(key, out string, sc *scratch) (stderr []byte, ok bool) {
	dir, err := objCacheDir()
	if err != nil {
		return nil, false
	}
	var e objEntry
	if !loadEntry(filepath.Join(dir, key), objCacheMagic, &e) || len(e.Object) == 0 {
		return nil, false
	}
	if _, err := sc.path(); err != nil || writeObject(out, e.Object) != nil {
		return nil, false
	}
	return e.Stderr, true
}

// writeObject writes an object from the cache to out whole (WriteAtomic:
// never a part of it, which make would take as built, if weave is
// stopped), with the mode the assembler would give it: an existing
// file's, or 0666 less the umask.
func writeObject(out string, obj []byte) error {
	mode, fix := os.FileMode(0o644), true
	if fi, err := os.Stat(out); err == nil {
		mode, fix = fi.Mode().Perm(), fi.Mode().IsRegular()
	} else if b, err := os.ReadFile("/proc/self/status"); err == nil {
		if _, rest, ok := bytes.Cut(b, []byte("\nUmask:\t")); ok {
			if m, err := strconv.ParseUint(string(rest[:min(4, len(rest))]), 8, 32); err == nil {
				mode = 0o666 &^ os.FileMode(m)
			}
		}
	}
	err := WriteAtomic(out, func(w io.Writer) error { _, err := w.Write(obj); return err })
	if err == nil && fix && mode != 0o644 {
		err = os.Chmod(out, mode)
	}
	return err
}

// storeObject stores the object the compiler wrote to out (a regular
// file), with its diagnostics, as key's entry.
func storeObject(key, out string, stderr []byte) {
	fi, err := os.Stat(out)
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	obj, err := os.ReadFile(out)
	dir, derr := objCacheDir()
	if err != nil || derr != nil || len(obj) == 0 {
		return
	}
	storeEntry(dir, key, objCacheMagic, &objEntry{Object: obj, Stderr: stderr}, objCacheBytes)
}
