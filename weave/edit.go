package weave

import (
	"bytes"
	"fmt"
	"sort"
)

// An editBuffer queues insertions and replacements by byte offset into an
// unchanging original text and applies them once, in Bytes.
//
// Edits at the same offset apply in the order they were queued, except
// that closing text (InsertClose) goes first, the last queued first: it
// ends a wrapping opened earlier, and an inner wrapping is queued after the
// one around it. A replacement must not overlap another replacement (that
// is a weaver bug).
type editBuffer struct {
	old   []byte
	edits []edit
	// realign, when set, gives the original file and line of physical
	// line phys of old ("" if none): Bytes then puts the original text
	// that follows an insertion on its line back at its column, on a line
	// of its own behind a linemarker, so that the compiler's diagnostics
	// and the debug information name the source's columns (realigned).
	realign func(phys int) (file string, line int, system bool)
	// bodyEnds are the offsets of function bodies' closing braces, where
	// the compiler reports a non-void function's missing return
	// (-Wreturn-type): realigned does not count them as punctuation.
	bodyEnds map[int]bool
}

type edit struct {
	start, end int // replace old[start:end]; start == end inserts
	text       string
	seq        int
	close      bool
}

func newEditBuffer(old []byte) *editBuffer { return &editBuffer{old: old} }

// Insert inserts text at offset pos.
func (b *editBuffer) Insert(pos int, text string) { b.Replace(pos, pos, text) }

// InsertClose inserts text that closes a wrapping at offset pos.
func (b *editBuffer) InsertClose(pos int, text string) {
	b.Insert(pos, text)
	b.edits[len(b.edits)-1].close = true
}

// Replace replaces old[start:end] with text.
func (b *editBuffer) Replace(start, end int, text string) {
	if start < 0 || start > end || end > len(b.old) {
		panic(fmt.Sprintf("weave: invalid edit [%d,%d) of %d bytes", start, end, len(b.old)))
	}
	b.edits = append(b.edits, edit{start, end, text, len(b.edits), false})
}

// Bytes returns the edited text.
func (b *editBuffer) Bytes() []byte {
	sort.SliceStable(b.edits, func(i, j int) bool {
		ei, ej := b.edits[i], b.edits[j]
		if ei.start != ej.start {
			return ei.start < ej.start
		}
		if ei.close != ej.close {
			return ei.close
		}
		if ei.close {
			return ei.seq > ej.seq
		}
		return ei.seq < ej.seq
	})
	n := len(b.old)
	for _, e := range b.edits {
		n += len(e.text) - (e.end - e.start)
	}
	out := make([]byte, 0, n+n/8)
	pos, lines := 0, 0 // lines: the line ends in old[:pos]
	for i, e := range b.edits {
		if e.start < pos {
			panic(fmt.Sprintf("weave: overlapping edits at offset %d", e.start))
		}
		lines += bytes.Count(b.old[pos:e.start], []byte{'\n'})
		out = append(out, b.old[pos:e.start]...)
		out = append(out, e.text...)
		lines += bytes.Count(b.old[e.start:e.end], []byte{'\n'})
		pos = e.end
		if b.realign == nil {
			continue
		}
		// A call's ( stays with the name an edit put before it (the
		// thunk's, the advice's), which the text is searched for.
		q := pos
		for q < len(b.old) && b.old[q] == '(' {
			q++
		}
		if i+1 == len(b.edits) || b.edits[i+1].start > q {
			out = append(out, b.old[pos:q]...)
			pos = q
			out = b.realigned(out, pos, lines+1)
		}
	}
	return append(out, b.old[pos:]...)
}

// realigned returns out, the edited text up to old[pos] (on physical line
// phys of old), with what follows on old's line put back at its column:
// a line end, a linemarker naming the line, and the line's text before
// pos as blanks (its tabs kept, for the compiler's display columns).
// Nothing if the rest of the line is already at its column, or blank but
// for closing punctuation other than a function body's closing brace.
func (b *editBuffer) realigned(out []byte, pos, phys int) []byte {
	start := bytes.LastIndexByte(b.old[:pos], '\n') + 1
	end := bytes.IndexByte(b.old[pos:], '\n')
	if end < 0 {
		end = len(b.old) - pos
	}
	if len(out)-(bytes.LastIndexByte(out, '\n')+1) == pos-start || len(bytes.Trim(b.old[pos:pos+end], " \t\r\f\v);}],")) == 0 && !b.bodyEndIn(pos, pos+end) {
		return out // nothing a diagnostic would point at
	}
	file, line, system := b.realign(phys)
	if file == "" {
		return out
	}
	out = fmt.Appendf(out, "\n# %d %s", line, cString(file))
	if system {
		out = append(out, " 3"...)
	}
	out = append(out, '\n')
	for _, c := range b.old[start:pos] {
		if c != '\t' {
			c = ' '
		}
		out = append(out, c)
	}
	return out
}

// bodyEndIn reports whether old[start:end] holds a function body's
// closing brace.
func (b *editBuffer) bodyEndIn(start, end int) bool {
	for i := bytes.IndexByte(b.old[start:end], '}'); i >= 0; i = bytes.IndexByte(b.old[start:end], '}') {
		if b.bodyEnds[start+i] {
			return true
		}
		start += i + 1
	}
	return false
}

// changes reports whether an edit changes old[start:end]: replaces bytes
// in it or inserts inside it.
func (b *editBuffer) changes(start, end int) bool {
	for _, e := range b.edits {
		if e.start < end && e.end > start && (e.end > e.start || e.start > start) {
			return true
		}
	}
	return false
}

// inserted returns the texts the edits insert.
func (b *editBuffer) inserted() []string {
	texts := make([]string, len(b.edits))
	for i, e := range b.edits {
		texts[i] = e.text
	}
	return texts
}
