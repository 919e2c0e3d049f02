package leakcheck

import (
	"strings"
	"testing"
)

// TestTemplateMatch: LeakSanitizer's TemplateMatch cases
// (sanitizer_common's tests): substring, '*', '^' and '$'.
func TestTemplateMatch(t *testing.T) {
	for _, c := range []struct {
		pat, s string
		want   bool
	}{
		{"foo", "foo", true},
		{"foo", "xfooy", true},
		{"foo", "fo", false},
		{"^foo", "foobar", true},
		{"^foo", "xfoo", false},
		{"foo$", "xfoo", true},
		{"foo$", "foox", false},
		{"^foo$", "foo", true},
		{"f*o", "fxxxo", true},
		{"f*o$", "fxxxob", false},
		{"*", "anything", true},
		{"a*b*c", "aXbYc", true},
		{"a*b*c", "aXcYb", false},
		{"libfoo.so", "/usr/lib/libfoo.so.1", true},
		{"x", "", false},
	} {
		if got := TemplateMatch(c.pat, c.s); got != c.want {
			t.Errorf("TemplateMatch(%q, %q) = %v, want %v", c.pat, c.s, got, c.want)
		}
	}
}

func TestChainMatch(t *testing.T) {
	chain := []Frame{{Name: "make_list", File: "list.c"}, {Name: "lose_list", File: "list.c"},
		{Name: "main", File: "main.c", Module: "/tmp/prog"}}
	s, err := Parse(strings.NewReader("# c\n\nleak:lose_list>make_list\n"), "s.supp")
	if err != nil || len(s) != 1 || s.Match(chain) == nil {
		t.Fatalf("outer>inner: %v %v", s, err)
	}
	for pat, want := range map[string]bool{
		"make_list>lose_list": false, // inner>outer
		"main>make_list":      false, // not the direct caller
		"main>lose_list":      true,
		"main.c":              true,
		"prog":                true, // the module
		"^list.c$":            true,
		"nothing":             false,
	} {
		s, err := Parse(strings.NewReader("leak:"+pat+"\n"), "s.supp")
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Match(chain) != nil; got != want {
			t.Errorf("leak:%s matches %v, want %v", pat, got, want)
		}
	}
	for _, bad := range []string{"race:x", "leak:", "leak:a>>b", "nocolon"} {
		if _, err := Parse(strings.NewReader("\n"+bad+"\n"), "s.supp"); err == nil || !strings.HasPrefix(err.Error(), "s.supp:2:1: ") {
			t.Errorf("%q: error %v, want s.supp:2:1: ...", bad, err)
		}
	}
}
