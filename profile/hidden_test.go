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
		{head + "A 0 -1 1 2 3 2 -1 0\nE 5\n", "line 6: bad A record: function -1 for a site that is not hidden"},
		{head + "A 0 -1 1 2 3 2 -1 0 0\nE 5\n", "line 6: bad A record: function -1 for a site that is not hidden"},
		{head + "A 0 0 1 2 3 2 -1 0 1 1\nE 5\n", "line 6: bad A record: 10 fields, want 8 or 9"},
		{head + "A 0 0 1 2 3 2 -1\nE 5\n", "line 6: bad A record: 7 fields, want 8 or 9"},
		{head + "A 0 0 1 2 3 2 -1 0 x\nE 5\n", `line 6: bad A record: flags "x" is not a number`},
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
