package weave

import (
	"sort"
	"sync"

	"modernc.org/cc/v4"
)

// adviceNames returns the offsets, in order, of the identifiers in text
// that name a function in allocOps or setjmpNames, or swapName: one pass
// over the text, each identifier hashed as it is read and looked up only
// if its hash's bit is set in adviceFilter (six bytes.Index passes, one
// per substring the names hold, took 0.16 ms of the conftest's 60 KB and
// 1.7 ms of Lua's lapi.c, whose common first letters kept IndexByte busy).
func adviceNames(text []byte) []int {
	names, filter := adviceFilter()
	var offs []int
	for i := 0; i < len(text); {
		if !identBytes[text[i]] {
			i++
			continue
		}
		start, h := i, uint32(text[i])
		for i++; i < len(text) && identBytes[text[i]]; i++ {
			h = h*31 + uint32(text[i])
		}
		if filter[h>>6&15]&(1<<(h&63)) != 0 && names[string(text[start:i])] {
			offs = append(offs, start)
		}
	}
	return offs
}

// adviceFilter returns the names adviceNames finds and its filter: a bit
// for the low 10 bits of each name's hash (h = h*31 + byte).
var adviceFilter = sync.OnceValues(func() (map[string]bool, [16]uint64) {
	names := map[string]bool{swapName: true}
	for n, o := range allocOps {
		if o.op != "" {
			names[n] = true
		}
	}
	for n, ok := range setjmpNames {
		if ok {
			names[n] = true
		}
	}
	var filter [16]uint64
	for n := range names {
		h := uint32(0)
		for i := 0; i < len(n); i++ {
			h = h*31 + uint32(n[i])
		}
		filter[h>>6&15] |= 1 << (h & 63)
	}
	return names, filter
})

// identBytes are the bytes isIdentByte accepts.
var identBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = isIdentByte(byte(c))
	}
	return t
}()

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// namesSetjmp reports whether a function body's text names one of
// setjmpNames (a call the body walk may advise with
// __weave_setjmp_return, which needs the frame's slot).
func (w *weaver) namesSetjmp(body *cc.CompoundStatement) bool {
	lb, rb := w.u.Offset(body.Token), w.u.Offset(body.Token2)
	code := w.u.Text
	for i := sort.SearchInts(w.names, lb); i < len(w.names) && w.names[i] < rb; i++ {
		j := w.names[i]
		for j < len(code) && identBytes[code[j]] {
			j++
		}
		if setjmpNames[string(code[w.names[i]:j])] {
			return true
		}
	}
	return false
}
