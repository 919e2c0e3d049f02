package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"

	"github.com/weave-profiler/weave/internal/cachedir"
	"github.com/weave-profiler/weave/runtime"
)

// coverageNote is the first line of weave's header in a coverage build:
// the line gcov charges the code weave adds to a function with.
const coverageNote = "/* weave: what weave adds to a woven function (its frame, the allocation advice) is counted on this line */\n"

// coverage reports whether c compiles for gcov (--coverage,
// -ftest-coverage): its notes file names the source of every line it
// counts, and gcov reads them.
func (c *cmdline) coverage() bool {
	for _, a := range c.args {
		if a.flag == "--coverage" || a.flag == "-ftest-coverage" {
			return true
		}
	}
	return false
}

// coverageHeader returns the path of a file in weave's cache directory
// holding weave's header as a coverage build's woven text includes it
// (coverageText), so that gcov finds the file the woven code's lines are
// charged to, as it finds a system header's; "" if it cannot be had (the
// text then names "<weave>", as in other builds, and gcov says it cannot
// open it). The name is the header's hash, written once: the #ident line
// is the first weave's to write it (every build of weave has its own, a
// file each would pile up for nothing).
func coverageHeader() string {
	base, err := cachedir.Dir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(runtime.Header()))
	path := filepath.Join(base, "include", "weave-"+hex.EncodeToString(sum[:8])+".h")
	if cachedir.Trusted(path) {
		return path
	}
	if os.MkdirAll(filepath.Dir(path), 0o700) != nil || WriteFileAtomic(path, coverageText(nil)) != nil {
		return ""
	}
	return path
}

// coverageText is the start of a coverage build's woven text after its
// first linemarker: coverageNote, weave's #ident and, with the prologue
// nil, weave's header (the file coverageHeader writes: the woven text's
// prologue has its lines, some blanked).
func coverageText(prologue []byte) []byte {
	var b bytes.Buffer
	b.WriteString(coverageNote)
	b.WriteString(weaveIdent())
	if prologue == nil {
		b.WriteString(runtime.Header())
	} else {
		b.Write(prologue)
	}
	return b.Bytes()
}
