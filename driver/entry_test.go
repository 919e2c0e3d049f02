package driver

import (
	"crypto/sha256"
	"reflect"
	"testing"

	"github.com/weave-profiler/weave/weave"
)

// TestEntryEncoding: each cache entry reads back as it was written, with
// empty fields and maps; an entry cut short anywhere, with a byte more,
// with another entry's magic or with any byte changed is refused or read
// without a panic.
func TestEntryEncoding(t *testing.T) {
	entries := []struct {
		magic     string
		in, blank cacheEntry
	}{
		{wovenCacheMagic, &wovenEntry{
			Text:      []byte("int main(void) { return 0; }\n"),
			Unmatched: []string{"--exclude=nothing*", ""},
			Summary:   weave.Summary{"main": {Calls: []string{"make", "use"}}, "leaf": {Allocs: true}, "none": {}},
			Extern:    map[string]bool{"make": true, "use": false},
		}, &wovenEntry{}},
		{wovenCacheMagic, &wovenEntry{Text: []byte("x"), Extern: map[string]bool{"last": true}}, &wovenEntry{}},
		{directMagic, &directEntry{
			Files:  []directFile{{Name: "prog.c", Sum: sha256.Sum256([]byte("a"))}, {Name: "/usr/include/stdio.h", Sum: sha256.Sum256([]byte("b"))}},
			Stderr: []byte("prog.c:1:2: warning: #warning hi\n"),
			Text:   []byte("# 0 \"prog.c\"\nint x;\n"),
			Deps:   []byte("prog.o: prog.c\n"),
		}, &directEntry{}},
		{objCacheMagic, &objEntry{Object: []byte("\x7fELF\x00\x01"), Stderr: nil}, &objEntry{}},
	}
	for _, e := range entries {
		b := encodeEntry(e.magic, e.in)
		got := reflect.New(reflect.TypeOf(e.blank).Elem()).Interface().(cacheEntry)
		if !decodeEntry(b, e.magic, got) || !reflect.DeepEqual(got, e.in) {
			t.Errorf("%q: read back %+v, wrote %+v", e.magic, got, e.in)
		}
		for _, other := range []string{wovenCacheMagic, directMagic, objCacheMagic} {
			if other != e.magic && decodeEntry(b, other, reflect.New(reflect.TypeOf(e.blank).Elem()).Interface().(cacheEntry)) {
				t.Errorf("%q entry read as %q", e.magic, other)
			}
		}
		for n := 0; n < len(b); n++ {
			if decodeEntry(b[:n], e.magic, reflect.New(reflect.TypeOf(e.blank).Elem()).Interface().(cacheEntry)) {
				t.Errorf("%q: the entry cut to %d of %d bytes read", e.magic, n, len(b))
			}
		}
		if decodeEntry(append(b[:len(b):len(b)], 0), e.magic, reflect.New(reflect.TypeOf(e.blank).Elem()).Interface().(cacheEntry)) {
			t.Errorf("%q: the entry with a byte more read", e.magic)
		}
		for i := len(e.magic); i < len(b); i++ {
			for _, x := range []byte{0x01, 0x80, 0xff} {
				c := append([]byte(nil), b...)
				c[i] ^= x
				decodeEntry(c, e.magic, reflect.New(reflect.TypeOf(e.blank).Elem()).Interface().(cacheEntry)) // no panic
			}
		}
	}
}
