package driver

import (
	"encoding/binary"
	"maps"
	"slices"

	"github.com/weave-profiler/weave/weave"
)

// The caches' entries (woven, direct, object) are written in a small
// binary form of their own: each field a length-prefixed byte string
// (uvarint lengths and counts) in a fixed order, maps by sorted key. It
// replaced encoding/gob, whose package init cost every weave process
// 0.15-0.25 ms and each entry written or read 0.05-0.1 ms more.

// cacheEntry is an entry that can be written (put) and read back (get).
type cacheEntry interface {
	put(w *entryWriter)
	get(r *entryReader)
}

type entryWriter struct{ b []byte }

func (w *entryWriter) uint(n int) { w.b = binary.AppendUvarint(w.b, uint64(n)) }

func (w *entryWriter) bytes(p []byte) {
	w.uint(len(p))
	w.b = append(w.b, p...)
}

func (w *entryWriter) str(s string) {
	w.uint(len(s))
	w.b = append(w.b, s...)
}

func (w *entryWriter) strs(ss []string) {
	w.uint(len(ss))
	for _, s := range ss {
		w.str(s)
	}
}

func (w *entryWriter) flag(f bool) {
	n := 0
	if f {
		n = 1
	}
	w.uint(n)
}

// entryReader reads an entry's fields; bad is set, and every later field
// reads empty, once the bytes do not hold what is asked for.
type entryReader struct {
	b   []byte
	bad bool
}

func (r *entryReader) uint() int {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > 1<<40 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[k:]
	return int(n)
}

// count reads a number of items that take a byte each at least.
func (r *entryReader) count() int {
	n := r.uint()
	if n > len(r.b) {
		r.bad, r.b = true, nil
		return 0
	}
	return n
}

// bytes returns the next byte string, nil if empty (as gob did).
func (r *entryReader) bytes() []byte {
	n := r.uint()
	if n > len(r.b) {
		r.bad, r.b = true, nil
	}
	if r.bad || n == 0 {
		return nil
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p
}

func (r *entryReader) str() string { return string(r.bytes()) }

func (r *entryReader) strs() []string {
	n := r.count()
	var ss []string
	for range n {
		ss = append(ss, r.str())
	}
	return ss
}

func (r *entryReader) flag() bool { return r.uint() != 0 }

// encodeEntry returns a cache entry: magic, then v.
func encodeEntry(magic string, v cacheEntry) []byte {
	w := &entryWriter{b: []byte(magic)}
	v.put(w)
	return w.b
}

// decodeEntry decodes the entry b (encodeEntry's) into v and reports
// whether it could: the magic, then v's fields, and nothing more.
func decodeEntry(b []byte, magic string, v cacheEntry) bool {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return false
	}
	r := &entryReader{b: b[len(magic):]}
	v.get(r)
	return !r.bad && len(r.b) == 0
}

func (e *wovenEntry) put(w *entryWriter) {
	w.bytes(e.Text)
	w.strs(e.Unmatched)
	w.uint(len(e.Summary))
	for _, name := range slices.Sorted(maps.Keys(e.Summary)) {
		f := e.Summary[name]
		w.str(name)
		w.flag(f.Allocs)
		w.strs(f.Calls)
	}
	w.uint(len(e.Extern))
	for _, name := range slices.Sorted(maps.Keys(e.Extern)) {
		w.str(name)
		w.flag(e.Extern[name])
	}
}

func (e *wovenEntry) get(r *entryReader) {
	e.Text = r.bytes()
	e.Unmatched = r.strs()
	if n := r.count(); n > 0 {
		e.Summary = make(weave.Summary, n)
		for range n {
			name := r.str()
			allocs := r.flag()
			e.Summary[name] = weave.FuncSummary{Allocs: allocs, Calls: r.strs()}
		}
	}
	if n := r.count(); n > 0 {
		e.Extern = make(map[string]bool, n)
		for range n {
			name := r.str()
			e.Extern[name] = r.flag()
		}
	}
}

func (e *directEntry) put(w *entryWriter) {
	w.uint(len(e.Files))
	for _, f := range e.Files {
		w.str(f.Name)
		w.bytes(f.Sum[:])
	}
	w.bytes(e.Stderr)
	w.bytes(e.Text)
	w.bytes(e.Deps)
}

func (e *directEntry) get(r *entryReader) {
	for range r.count() {
		f := directFile{Name: r.str()}
		if copy(f.Sum[:], r.bytes()) != len(f.Sum) {
			r.bad = true
		}
		e.Files = append(e.Files, f)
	}
	e.Stderr = r.bytes()
	e.Text = r.bytes()
	e.Deps = r.bytes()
}

func (e *objEntry) put(w *entryWriter) {
	w.bytes(e.Object)
	w.bytes(e.Stderr)
}

func (e *objEntry) get(r *entryReader) {
	e.Object = r.bytes()
	e.Stderr = r.bytes()
}
