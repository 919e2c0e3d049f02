package parse

import (
	"bytes"
	"strconv"
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
	m := &LineMap{}
	phys := 0
	for len(text) > 0 {
		phys++
		i := bytes.IndexByte(text, '\n')
		var ln []byte
		if i < 0 {
			ln, text = text, nil
		} else {
			ln, text = text[:i], text[i+1:]
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

// parseMarker parses `# N "file" flags...` or `#line N "file"`.
func parseMarker(ln []byte) (mark, bool) {
	s := bytes.TrimLeft(ln[1:], " \t")
	s = bytes.TrimPrefix(s, []byte("line"))
	s = bytes.TrimLeft(s, " \t")
	j := 0
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	if j == 0 {
		return mark{}, false
	}
	n, err := strconv.Atoi(string(s[:j]))
	if err != nil {
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
		name, err := strconv.Unquote(string(rest[:k+1]))
		if err != nil {
			name = string(rest[1:k])
		}
		mk.file = name
		for _, f := range bytes.Fields(rest[k+1:]) {
			if string(f) == "3" {
				mk.system = true
			}
		}
	} else {
		mk.file = "\x00" // same file as before
	}
	return mk, true
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
