package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/weave-profiler/weave/internal/cachedir"
	"github.com/weave-profiler/weave/internal/replacefile"
)

// The object index: every woven link asks Object for the runtime object,
// and naming it costs the runtime's source (generated, 430 KB, hashed)
// and the compiler's --version, 4-5 ms of a 30 ms link of a small
// program. An index entry, rtx-<key>, names the object for a key made
// of what decides that source and that output without computing them:
// weave's binary (the source is embedded in it) and the compiler's
// binary (path, size, time and inode, as the woven cache keys them), the
// compiler command and the flags. A rebuilt weave or compiler misses,
// finds or builds the object the long way and writes a new entry. Like
// the objects, an entry is trusted only if it is the user's own and
// names an object of this directory that is.

// indexKey returns the index key of the compiler command cc and flags,
// "" if weave's or the compiler's binary cannot be identified.
func indexKey(cc, flags []string) string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	compiler, err := exec.LookPath(cc[0])
	if err != nil {
		return ""
	}
	self, comp := cachedir.FileID(exe), cachedir.FileID(compiler)
	if self == "" || comp == "" {
		return ""
	}
	h := sha256.New()
	fmt.Fprintf(h, "weave runtime index 1\x00%q\x00%q\x00%q\x00%q", self, comp, cc, flags)
	return hex.EncodeToString(h.Sum(nil))
}

const indexPrefix = "rtx-"

// lookIndex returns the object the entry of key names, or "".
func lookIndex(dir, key string) string {
	if key == "" {
		return ""
	}
	entry := filepath.Join(dir, indexPrefix+key)
	if !cachedir.Trusted(entry) {
		return ""
	}
	b, err := os.ReadFile(entry)
	name := strings.TrimSpace(string(b))
	if err != nil || !strings.HasPrefix(name, "rt-") || !strings.HasSuffix(name, ".o") || strings.ContainsRune(name, '/') {
		return ""
	}
	obj := filepath.Join(dir, name)
	fi, err := os.Stat(obj)
	if err != nil || !cachedir.Trusted(obj) {
		return ""
	}
	touch(obj, fi)
	if fi, err := os.Stat(entry); err == nil {
		touch(entry, fi)
	}
	return obj
}

// writeIndex writes the entry of key naming obj (its own temporary file,
// renamed: concurrent links write the same text). One write in 16 prunes
// the entries (pruneIndex).
func writeIndex(dir, key, obj string) {
	if key == "" {
		return
	}
	if replacefile.Write(filepath.Join(dir, indexPrefix+key), indexPrefix+"*.tmp", []byte(filepath.Base(obj)+"\n")) != nil {
		return
	}
	if time.Now().UnixNano()%16 == 0 {
		pruneIndex(dir)
	}
}
