// Package readelf gives the page-rounded segment sizes of an executable from `readelf -lW`: the tests' oracle for the memory map.
package readelf

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/weave-profiler/weave/internal/testtool"
)

// Sizes are what the loader maps of an executable, in bytes, rounded to
// pages as the kernel maps them.
type Sizes struct {
	Text uint64 // the executable LOAD segments
	// DataBSS is the writable LOAD segment from the end of RELRO (made
	// read-only at start-up) to the end of its memory image; BSS its part
	// beyond the file image, mapped anonymous.
	DataBSS, BSS uint64
}

const page = 4096

func down(v uint64) uint64 { return v &^ (page - 1) }
func up(v uint64) uint64   { return down(v + page - 1) }

var loadRE = regexp.MustCompile(`^\s*(LOAD|GNU_RELRO)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x[0-9a-f]+\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(R?\s?W?\s?E?)\s+0x`)

// Of runs readelf -lW on bin; without readelf the test skips (fails
// under CI).
func Of(t testing.TB, bin string) Sizes {
	t.Helper()
	testtool.Need(t, "readelf")
	out, err := exec.Command("readelf", "-lW", bin).Output()
	if err != nil {
		t.Fatalf("readelf -lW %s: %v", bin, err)
	}
	var s Sizes
	var relroEnd uint64
	type load struct{ vaddr, filesz, memsz uint64 }
	var rw []load
	for _, l := range strings.Split(string(out), "\n") {
		m := loadRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		ld := load{hex(m[2]), hex(m[3]), hex(m[4])}
		switch {
		case m[1] == "GNU_RELRO":
			relroEnd = ld.vaddr + ld.memsz
		case strings.Contains(m[5], "E"):
			s.Text += up(ld.vaddr+ld.memsz) - down(ld.vaddr)
		case strings.Contains(m[5], "W"):
			rw = append(rw, ld)
		}
	}
	for _, ld := range rw {
		from := down(ld.vaddr)
		if relroEnd > ld.vaddr {
			from = down(relroEnd)
		}
		s.DataBSS += up(ld.vaddr+ld.memsz) - from
		s.BSS += up(ld.vaddr+ld.memsz) - up(ld.vaddr+ld.filesz)
	}
	return s
}

func hex(s string) uint64 {
	v, _ := strconv.ParseUint(s, 16, 64)
	return v
}
