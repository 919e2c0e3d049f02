package parse

import (
	"bytes"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// A Location is a place in the original sources, as the linemarkers of a
// preprocessed file name it.
type Location struct {
	File   string
	Line   int
	System bool // inside a system header (linemarker flag 3)
}

// LineMap maps the physical lines of preprocessed text to the original
// file:line that its linemarkers name.
type LineMap struct {
	// marks[i] says that physical line marks[i].phys (1-based) holds line
	// marks[i].line of marks[i].file.
	marks []mark
	// starts[i] is the byte offset of physical line i+1.
	starts []int
}

type mark struct {
	phys   int
	file   string
	line   int
	system bool
}

// NewLineMap scans text for GNU linemarkers (`# 12 "file.c" 1 3`) and
// #line directives.
func NewLineMap(text []byte) *LineMap {
	m := &LineMap{starts: make([]int, 0, len(text)/32+1)}
	phys := 0
	for off := 0; off < len(text); {
		phys++
		m.starts = append(m.starts, off)
		i := bytes.IndexByte(text[off:], '\n')
		var ln []byte
		if i < 0 {
			ln, off = text[off:], len(text)
		} else {
			ln, off = text[off:off+i], off+i+1
		}
		if len(ln) == 0 || ln[0] != '#' {
			continue
		}
		if mk, ok := parseMarker(ln); ok {
			mk.phys = phys + 1 // the marker names the line after it
			m.marks = append(m.marks, mk)
		}
	}
	return m
}

// LineCol returns the physical line (1-based) and byte column (1-based) of
// byte offset off.
func (m *LineMap) LineCol(off int) (line, col int) {
	i := sort.Search(len(m.starts), func(i int) bool { return m.starts[i] > off }) // line i holds off
	if i == 0 {
		return 1, off + 1
	}
	return i, off - m.starts[i-1] + 1
}

// parseMarker parses `# N "file" flags...` or `#line N "file"`.
func parseMarker(ln []byte) (mark, bool) {
	s := bytes.TrimLeft(ln[1:], " \t")
	s = bytes.TrimPrefix(s, []byte("line"))
	s = bytes.TrimLeft(s, " \t")
	// The number, the name and the flags without a string or slice made
	// for each (strconv.Atoi's, bytes.Fields'): a unit's hundreds of
	// markers are read three times between its -E step and its parse.
	j, n := 0, 0
	for ; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
		d := int(s[j] - '0')
		if n > (math.MaxInt-d)/10 {
			return mark{}, false // out of range, as for strconv.Atoi
		}
		n = n*10 + d
	}
	if j == 0 {
		return mark{}, false
	}
	rest := bytes.TrimLeft(s[j:], " \t")
	var mk mark
	mk.line = n
	if len(rest) > 0 && rest[0] == '"' {
		k := 1
		for k < len(rest) && rest[k] != '"' {
			if rest[k] == '\\' {
				k++
			}
			k++
		}
		if k >= len(rest) {
			return mark{}, false
		}
		if q := rest[1:k]; bytes.IndexByte(q, '\\') < 0 && bytes.IndexByte(q, '\n') < 0 && utf8.Valid(q) {
			mk.file = string(q) // what strconv.Unquote returns for it
		} else if name, err := strconv.Unquote(string(rest[:k+1])); err == nil {
			mk.file = name
		} else {
			mk.file = string(q)
		}
		mk.system = hasFlag3(rest[k+1:])
	} else {
		mk.file = "\x00" // same file as before
	}
	return mk, true
}

// hasFlag3 reports whether the flags after a marker's name hold the field
// "3" (a system header), fields split as bytes.Fields splits them.
func hasFlag3(flags []byte) bool {
	for _, c := range flags {
		if c >= utf8.RuneSelf {
			for _, f := range bytes.Fields(flags) {
				if string(f) == "3" {
					return true
				}
			}
			return false
		}
	}
	for i := 0; i < len(flags); {
		for i < len(flags) && asciiSpace(flags[i]) {
			i++
		}
		start := i
		for i < len(flags) && !asciiSpace(flags[i]) {
			i++
		}
		if i-start == 1 && flags[start] == '3' {
			return true
		}
	}
	return false
}

func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// Lookup returns the original location of physical line phys (1-based).
func (m *LineMap) Lookup(phys int) Location {
	lo, hi := 0, len(m.marks)
	for lo < hi { // first mark with .phys > phys
		mid := (lo + hi) / 2
		if m.marks[mid].phys <= phys {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo == 0 {
		return Location{Line: phys}
	}
	mk := m.marks[lo-1]
	file, system := mk.file, mk.system
	for i := lo - 1; file == "\x00"; i-- { // #line N without a file name
		if i == 0 {
			file = ""
			break
		}
		file, system = m.marks[i-1].file, m.marks[i-1].system
	}
	return Location{File: file, Line: mk.line + phys - mk.phys, System: system}
}
