package profile

import (
	"strings"
	"testing"
)

// TestHiddenSites: an A record with flags 1 is a hidden site, without a
// function; the flags field is optional, and only a hidden site may have
// function -1.
func TestHiddenSites(t *testing.T) {
	p, err := ReadFile("testdata/hidden.prof")
	if err != nil {
		t.Fatal(err)
	}
	var hidden, plain int
	for _, s := range p.Sites {
		if s.Hidden {
			hidden++
			if s.Func != nil || s.File != "(hidden)" || s.Line != 0 {
				t.Errorf("hidden site %+v", s)
			}
		} else if plain++; s.Func == nil {
			t.Errorf("site %d has no function", s.ID)
		}
	}
	if hidden != 2 || plain != 1 {
		t.Errorf("%d hidden sites, %d others", hidden, plain)
	}
	if v, _ := p.MetaValue("hidden"); v != "1" {
		t.Errorf("M hidden %q", v)
	}

	const head = "weave profile 1\nS 0 f\nS 1 f.c\nS 2 malloc\nF 0 0 1 1\n"
	for _, tc := range []struct{ in, want string }{
		{head + "A 0 -1 1 2 3 2 -1 0\nE 5\n", "6:1: bad A record: function -1 for a site that is not hidden"},
		{head + "A 0 -1 1 2 3 2 -1 0 0\nE 5\n", "6:1: bad A record: function -1 for a site that is not hidden"},
		{head + "A 0 0 1 2 3 2 -1 0 1 1\nE 5\n", "6:1: bad A record: 10 fields, want 8 or 9"},
		{head + "A 0 0 1 2 3 2 -1\nE 5\n", "6:1: bad A record: 7 fields, want 8 or 9"},
		{head + "A 0 0 1 2 3 2 -1 0 x\nE 5\n", `6:1: bad A record: flags "x" is not a number`},
	} {
		if _, err := Read(strings.NewReader(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("Read(%q): %v, want %q", tc.in, err, tc.want)
		}
	}
	// Unknown flag bits are ignored; a woven site may carry flags 0.
	p = readString(t, head+"A 0 0 1 2 3 2 -1 0 6\nE 5\n")
	if p.Sites[0].Hidden || p.Sites[0].Func == nil {
		t.Errorf("site %+v", p.Sites[0])
	}

	// Write refuses a site without a function unless it is hidden.
	p = readString(t, head+"A 0 0 1 2 3 2 -1 0\nE 5\n")
	p.Sites[0].Func = nil
	if err := p.Write(&strings.Builder{}); err == nil {
		t.Error("Write accepted a site without function")
	}
}

// TestHiddenFrom: R records say where a hidden site's allocator was called
// from; without the object's name, HiddenObject finds it in the maps; Write
// keeps them.
func TestHiddenFrom(t *testing.T) {
	const in = "weave profile 1\nS 0 (hidden)\nS 1 malloc\nS 2 /lib/libfoo.so\n" +
		"A 0 -1 0 0 0 1 -1 0 1\nA 1 -1 0 0 0 1 -1 0 1\nR 0 4096 2\nR 1 8192 -1\n" +
		"Y exit 1 0 0 -1 -1\nV exit 1000-3000 r-xp 00000000 08:01 7 /usr/lib/libbar.so.2\nE 9\n"
	p := readString(t, in)
	if got := p.HiddenObject(p.Sites[0]); got != "/lib/libfoo.so" || p.Sites[0].From != 4096 {
		t.Errorf("site 0: %q from %d", got, p.Sites[0].From)
	}
	if got := p.HiddenObject(p.Sites[1]); got != "/usr/lib/libbar.so.2" {
		t.Errorf("site 1 (0x2000, in the map's 0x1000-0x3000): %q", got)
	}
	var b strings.Builder
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	q := readString(t, b.String())
	if q.Sites[0].Object != "/lib/libfoo.so" || q.Sites[1].From != 8192 || q.Sites[1].Object != "" {
		t.Errorf("after Write: %+v, %+v", q.Sites[0], q.Sites[1])
	}
	if _, err := Read(strings.NewReader(strings.Replace(in, "A 1 -1 0 0 0 1 -1 0 1", "A 1 -1 0 0 0 1 -1 0 2", 1))); err == nil ||
		!strings.Contains(err.Error(), "not hidden") {
		t.Errorf("an R record for a site that is not hidden: %v", err)
	}
}
