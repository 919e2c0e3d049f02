package driver

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"os"
	"strings"
	"sync"

	"github.com/weave-profiler/weave/internal/cachedir"
)

// weaveIdent is the #ident line woven text starts with: weave's build ID
// (the Go linker's, a hash of the binary's inputs), so that the text of
// one unit woven by two builds of weave differs, and a compiler cache
// (ccache, sccache) keyed by the text does not serve one build's objects
// to the other even where their woven code happens to agree; the
// compiler puts it in the object's .comment section (gcc; clang drops
// it). Without a build ID note (not an ELF binary), a hash of the
// executable's name, size and time stands in.
var weaveIdent = sync.OnceValue(func() string {
	id := ""
	if exe, err := os.Executable(); err == nil {
		id = goBuildID(exe)
		if id == "" {
			sum := sha256.Sum256([]byte(cachedir.FileID(exe)))
			id = hex.EncodeToString(sum[:12])
		}
	}
	return "#ident \"weave " + id + "\"\n"
})

// goBuildID returns the Go build ID of the ELF executable exe, or "".
func goBuildID(exe string) string {
	f, err := elf.Open(exe)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	// The note: namesz, descsz, type (4 bytes each), "Go\x00\x00", the ID.
	if err != nil || len(data) < 16 || string(data[12:16]) != "Go\x00\x00" {
		return ""
	}
	// actionID/contentID of the main package, then of the link: the last
	// names the binary's content.
	id := strings.TrimRight(string(data[16:]), "\x00")
	id = id[strings.LastIndexByte(id, '/')+1:]
	if strings.ContainsAny(id, "\"\\\n") {
		return ""
	}
	return id
}
