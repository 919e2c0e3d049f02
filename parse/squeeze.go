package parse

import (
	"bytes"
	"sort"
)

// squeezeMin is how many blank lines in a row squeeze takes out.
const squeezeMin = 2

// squeeze returns pruned text for cc/v4 with its blank lines (the
// declarations prune blanked: a small program's text keeps 193 of its
// 2,284 lines) emptied, as few bytes as their newlines, and the map from
// the offsets of the squeezed text to the text's. Every other line is
// kept whole, so every token is on its line at its column, and the
// tokens' offsets map back exactly (offsetMap.orig). cc/v4 read the
// blanks byte by byte: a fifth of a small program's parse. nil if
// nothing is worth taking out.
func squeeze(text []byte) ([]byte, offsetMap) {
	var out []byte
	var m offsetMap
	blankFrom, blanks := -1, 0 // the run of blank lines being read
	flush := func(off int) {
		if blanks >= squeezeMin {
			if out == nil {
				out = append(make([]byte, 0, len(text)/4), text[:blankFrom]...)
			}
			out = append(out, bytes.Repeat([]byte{'\n'}, blanks)...)
			m = append(m, offsetPair{len(out), off})
		} else if out != nil && blankFrom >= 0 {
			out = append(out, text[blankFrom:off]...)
		}
		blankFrom, blanks = -1, 0
	}
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off + 1
		}
		if isBlank(text[off:end]) && end < len(text) {
			if blanks == 0 {
				blankFrom = off
			}
			blanks++
		} else {
			flush(off)
			if out != nil {
				out = append(out, text[off:end]...)
			}
		}
		off = end
	}
	flush(len(text))
	if out == nil {
		return nil, nil
	}
	return out, m
}

// isBlank reports whether line (with its newline) holds only spaces and
// tabs.
func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' && c != '\n' {
			return false
		}
	}
	return true
}

// An offsetMap maps offsets of a squeezed text back to the text's: at
// each pair, the squeezed offset sq is the text's orig, and so on until
// the next pair. Before the first pair the offsets are the same.
type offsetMap []offsetPair

type offsetPair struct{ sq, orig int }

// orig returns the text's offset of the squeezed text's offset off.
func (m offsetMap) orig(off int) int {
	i := sort.Search(len(m), func(i int) bool { return m[i].sq > off })
	if i == 0 {
		return off
	}
	return m[i-1].orig + off - m[i-1].sq
}
