package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/weave-profiler/weave/internal/cachedir"
)

// The -E step without gcc's driver: gcc's driver only runs cc1 -E (with
// the options its specs add) for it, and its own start and end cost a
// small program's woven compile 2-3 ms of wall time (an exec and the
// dynamic loader before cc1's, its exit after). So the command the
// driver runs is asked once (gcc -###) per compiler binary, flags,
// source extension and environment, kept in weave's cache directory as
// a template (the source's path, base name and extension left out), and
// later -E steps run that cc1 command with the source put back, in the
// driver's environment for it (COLLECT_GCC_OPTIONS, COMPILER_PATH,
// LIBRARY_PATH). Only where the driver would run that one command and
// say nothing else: gcc's own binary (not a launcher, not a script in
// front of it: isELF), WEAVE_CACHE not off, a regular file for a source (a
// missing one is the driver's to report), no dependency output, no -v,
// -wrapper, -time, -fcompare-debug, -save-temps, -no-integrated-cpp or
// options passed through the driver (-Wp, -Xpreprocessor, @file); a
// template whose -### said anything else (a warning) or ran more than
// cc1 -E is not kept. The first compile of a flag set asks -### while its
// -E step runs through the driver.

const cc1Magic = "weave cc1 1"

// cc1Template is a cc1 -E command with the source left out.
type cc1Template struct {
	argv []string // cc1Src, cc1Base and cc1Ext stand for the source's parts
	env  []string
	cc1  string // cc1's FileID when the template was made (cc1ID)
}

// cc1ID is cachedir.FileID of cc1 (without its NULs: the template's
// separators).
func cc1ID(path string) string {
	return strings.ReplaceAll(cachedir.FileID(path), "\x00", " ")
}

const (
	cc1Src  = "\x01src"
	cc1Base = "\x01base"
	cc1Ext  = "\x01ext"
)

// cc1Env are the variables whose values change what gcc's driver runs.
var cc1Env = []string{"GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", "GCC_COMPARE_DEBUG", "QEMU_LD_PREFIX"}

// cc1Key is the key of the template of the -E step of src with flags
// under cc, "" if the step is to run through the driver.
func cc1Key(cc, flags []string, src string) string {
	if len(cc) != 1 || !isGCC(cc[0]) || src == "-" || os.Getenv("GCC_COMPARE_DEBUG") != "" || os.Getenv("WEAVE_CACHE") == "off" {
		return ""
	}
	for _, f := range flags {
		if strings.HasPrefix(f, "-M") || strings.HasPrefix(f, "-Wp,") || strings.HasPrefix(f, "-Xpreprocessor") ||
			strings.HasPrefix(f, "@") || strings.HasPrefix(f, "-save-temps") || strings.HasPrefix(f, "-fcompare-debug") ||
			f == "-v" || f == "-###" || f == "-wrapper" || f == "-time" || strings.HasPrefix(f, "-time=") ||
			f == "-no-integrated-cpp" || f == "-traditional-cpp" || f == "-pipe" {
			return ""
		}
	}
	if st, err := os.Stat(src); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	path, err := lookPath(cc[0])
	id := cachedir.FileID(path)
	if err != nil || id == "" || !isELF(path) {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x01%q\x01%q\x01%q\x01%q\x01", cc1Magic, id, cc, flags, filepath.Ext(src))
	for _, v := range append(slices.Clone(directEnv), cc1Env...) {
		val, ok := os.LookupEnv(v)
		fmt.Fprintf(h, "%s=%v:%q\x00", v, ok, val)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// isELF reports whether the file at path is an ELF executable: gcc's
// driver itself, not a script in front of it (WEAVE_CC=mygcc, named like
// gcc), which may set variables, flags or a directory for the -E step
// that a template of the driver's cc1 command would not keep.
func isELF(path string) bool {
	if v, ok := elfs.Load(path); ok {
		return v.(bool)
	}
	var b [4]byte
	f, err := os.Open(path)
	elf := err == nil
	if elf {
		_, err = io.ReadFull(f, b[:])
		f.Close()
		elf = err == nil && string(b[:]) == "\x7fELF"
	}
	elfs.Store(path, elf)
	return elf
}

var elfs sync.Map // path -> isELF's answer

// cc1Command returns the cc1 command of the -E step of src with flags
// (the driver's arguments), or nil: no template (yet), and then ask, if
// not nil, makes one (gcc -###), to be called while the step runs.
func (cfg *Config) cc1Command(flags []string, src string) (cmd *exec.Cmd, ask func()) {
	cc := cfg.bareCompiler()
	key := cc1Key(cc, flags, src)
	if key == "" {
		return nil, nil
	}
	dir, err := cacheSubdir("cc1")
	if err != nil {
		return nil, nil
	}
	path := filepath.Join(dir, key)
	if t := parseCC1Template(readCacheFile(path)); t != nil && cc1ID(t.argv[0]) == t.cc1 {
		return t.command(src), nil
	}
	return nil, func() {
		args := append(append(append([]string{}, cc[1:]...), flags...), "-###", "-E", "-x", "c", src)
		c := command(cc[0], args...)
		var out bytes.Buffer
		c.Stderr = &out
		c.Env = append(os.Environ(), "LC_ALL=C")
		if runChild(c) != nil {
			return
		}
		if t := newCC1Template(out.String(), src); t != nil {
			writeCacheFile(path, t.format())
		}
	}
}

// command is the template's cc1 command for src.
func (t *cc1Template) command(src string) *exec.Cmd {
	argv := slices.Clone(t.argv)
	for i, a := range argv {
		switch a {
		case cc1Src:
			argv[i] = src
		case cc1Base:
			argv[i] = filepath.Base(src)
		case cc1Ext:
			argv[i] = filepath.Ext(src)
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), t.env...)
	return cmd
}

// newCC1Template makes a template from gcc -###'s output for src, or
// returns nil if it shows more than one command, not cc1 -E, or a line
// it does not know (a warning).
func newCC1Template(out, src string) *cc1Template {
	t := &cc1Template{}
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, " "):
			if t.argv != nil {
				return nil
			}
			argv, ok := splitHashes(l)
			if !ok || len(argv) < 2 || filepath.Base(argv[0]) != "cc1" || argv[1] != "-E" || !filepath.IsAbs(argv[0]) {
				return nil
			}
			t.argv = argv
		case t.argv == nil && (strings.HasPrefix(l, "COLLECT_GCC=") || strings.HasPrefix(l, "COLLECT_GCC_OPTIONS=") ||
			strings.HasPrefix(l, "OFFLOAD_TARGET_")):
			// What the driver puts in cc1's environment (strace: those
			// after the command are the linker's).
			t.env = append(t.env, l)
		case t.argv != nil && (strings.HasPrefix(l, "COLLECT_GCC_OPTIONS=") ||
			strings.HasPrefix(l, "COMPILER_PATH=") || strings.HasPrefix(l, "LIBRARY_PATH=")):
		case l == "Using built-in specs." || strings.HasPrefix(l, "Target: ") || strings.HasPrefix(l, "Configured with: ") ||
			strings.HasPrefix(l, "Thread model: ") || strings.HasPrefix(l, "Supported LTO compression algorithms: ") ||
			strings.HasPrefix(l, "gcc version "):
		default:
			return nil
		}
	}
	if t.argv == nil {
		return nil
	}
	// The source, its base name after -dumpbase, its extension after
	// -dumpbase-ext: once each, nothing else naming it.
	n := 0
	for i, a := range t.argv {
		switch {
		case i > 0 && t.argv[i-1] == "-dumpbase" && a == filepath.Base(src):
			t.argv[i] = cc1Base
		case i > 0 && t.argv[i-1] == "-dumpbase-ext" && a == filepath.Ext(src):
			t.argv[i] = cc1Ext
		case a == src:
			t.argv[i] = cc1Src
			n++
		case strings.Contains(a, filepath.Base(src)) || strings.ContainsAny(a, "\x00\x01"):
			return nil
		}
	}
	if n != 1 {
		return nil
	}
	t.cc1 = cc1ID(t.argv[0])
	if t.cc1 == "" {
		return nil
	}
	return t
}

// splitHashes splits a command line as gcc -### prints it: words
// separated by a space, those with other characters than letters, digits
// and a few in double quotes with \ before ", \ and $.
func splitHashes(l string) ([]string, bool) {
	var argv []string
	for i := 0; i < len(l); {
		if l[i] == ' ' {
			i++
			continue
		}
		var w strings.Builder
		if l[i] == '"' {
			i++
			for ; i < len(l) && l[i] != '"'; i++ {
				if l[i] == '\\' && i+1 < len(l) {
					i++
				}
				w.WriteByte(l[i])
			}
			if i == len(l) {
				return nil, false
			}
			i++
		} else {
			for ; i < len(l) && l[i] != ' '; i++ {
				if l[i] == '"' || l[i] == '\\' {
					return nil, false
				}
				w.WriteByte(l[i])
			}
		}
		argv = append(argv, w.String())
	}
	return argv, true
}

// format writes the template: the magic line, cc1's FileID, then the
// command's words and the variables, each ended by NUL, a blank word
// between them.
func (t *cc1Template) format() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\n%s\x00", cc1Magic, t.cc1)
	for _, a := range t.argv {
		b.WriteString(a + "\x00")
	}
	b.WriteString("\x00")
	for _, e := range t.env {
		b.WriteString(e + "\x00")
	}
	return b.Bytes()
}

func parseCC1Template(b []byte) *cc1Template {
	rest, ok := bytes.CutPrefix(b, []byte(cc1Magic+"\n"))
	if !ok {
		return nil
	}
	words := strings.Split(string(rest), "\x00")
	if len(words) < 4 || words[len(words)-1] != "" {
		return nil
	}
	words = words[:len(words)-1]
	k := slices.Index(words[1:], "")
	if k < 2 {
		return nil
	}
	return &cc1Template{cc1: words[0], argv: words[1 : 1+k], env: words[2+k:]}
}

// asked waits for the -### runs started (cc1Command's ask) before weave
// cc ends.
var asked sync.WaitGroup
