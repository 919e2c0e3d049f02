package weave

import (
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
	out := make([]byte, 0, n)
	pos := 0
	for _, e := range b.edits {
		if e.start < pos {
			panic(fmt.Sprintf("weave: overlapping edits at offset %d", e.start))
		}
		out = append(out, b.old[pos:e.start]...)
		out = append(out, e.text...)
		pos = e.end
	}
	return append(out, b.old[pos:]...)
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
