package parse

import "testing"

// TestComplexIntegers: complexIntegers rewrites the complex integer types
// cc/v4 does not know, byte for byte in place, as ones of the same size,
// and leaves the rest alone (the same slice when nothing changes).
func TestComplexIntegers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"_Complex unsigned char c;", "_Complex          char c;"},
		{"static const _Complex signed char c;", "static const _Complex        char c;"},
		{"unsigned long _Complex l;", "         long _Complex l;"},
		{"long long unsigned int _Complex *p;", "long long              _Complex *p;"},
		{"_Complex unsigned x;", "_Complex int      x;"},
		{"signed __complex__ x;", "int    __complex__ x;"},
		{"_Complex signed int x;", "_Complex        int x;"},
		{"x = (_Complex short int)y;", "x = (_Complex short    )y;"},
		{"f(_Complex int a, _Complex double b, unsigned c);", ""},
		{"int complexity; _Complex float f; unsigned u;", ""},
		{"/* _Complex */ unsigned char c;", ""},
	} {
		in := []byte(c.in)
		got := complexIntegers(in)
		want := c.want
		if want == "" {
			want = c.in
			if &got[0] != &in[0] {
				t.Errorf("complexIntegers(%q) copied the text, changing nothing", c.in)
			}
		}
		if string(got) != want {
			t.Errorf("complexIntegers(%q) = %q, want %q", c.in, got, want)
		}
	}
	// Every spelling parses, as the type of its size.
	for _, ty := range []string{"unsigned char", "signed char", "unsigned int", "unsigned long", "unsigned long long", "long unsigned int", "signed", "short int", "signed short"} {
		src := "_Complex " + ty + " v; struct s { const " + ty + " _Complex m; }; int n = sizeof(_Complex " + ty + ");\n"
		if _, err := ParseAll("c.c", []byte(src), NewDialect([]string{"gcc"}, nil)); err != nil {
			t.Errorf("%s: %v", ty, err)
		}
	}
}
