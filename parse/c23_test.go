package parse

import (
	"strings"
	"testing"
)

// TestC23Spans: what c23Syntax blanks (marked ^ under the text), and what
// it leaves: literals, comments, linemarkers, designators, static
// assertions with a message.
func TestC23Spans(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"[[gnu::cold]] int f(void);", "^^^^^^^^^^^^^"},
		{"int f([ [maybe_unused] ] int a);", "      ^^^^^^^^^^^^^^^^^^"},
		{"[[deprecated(\"]]\")]] int g;", "^^^^^^^^^^^^^^^^^^^^"},
		{"_Static_assert (sizeof (int) == 4);", "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		{"_Static_assert (f (1, 2));", "^^^^^^^^^^^^^^^^^^^^^^^^^^"},
		{"_Static_assert (1, \"one\");", ""},
		{"my_Static_assert (1);", ""},
		{"int a[2][2] = { [0][1] = 7 }, b = a[ 0 ][1];", ""},
		{"char *s = \"[[x]] _Static_assert(1);\"; char c = '[';", ""},
		{"_Static_assert \n# 33 \"l.c\"\n (\n# 33 \"l.c\" 3 4\n 16 <= 0x7f);", strings.Repeat("^", 58)},
		{"/* [[x]] */ int y; // [[z]]\n# 1 \"[[w]].h\"\n", ""},
	} {
		var got []byte
		for _, s := range c23Spans([]byte(c.text)) {
			for len(got) < s.from {
				got = append(got, ' ')
			}
			for len(got) < s.to {
				got = append(got, '^')
			}
		}
		if string(got) != c.want {
			t.Errorf("%s\n%s: got\n%s", c.text, c.want, got)
		}
		want := []byte(c.text)
		for k := range c.want {
			if c.want[k] == '^' && c.text[k] != '\n' && !inMarker(c.text, k) {
				want[k] = ' '
			}
		}
		if blanked := c23Syntax([]byte(c.text)); string(blanked) != string(want) {
			t.Errorf("%s: blanked %q", c.text, blanked)
		}
	}
	u := &Unit{Text: []byte("[[a]] /* c */ [[b]]\nstatic int f(void);")}
	if got, want := u.AttributesBefore(20), 0; got != want {
		t.Errorf("AttributesBefore(20) = %d, want %d", got, want)
	}
}

// inMarker reports whether text[k] is in a linemarker line.
func inMarker(text string, k int) bool {
	return text[strings.LastIndexByte(text[:k+1], '\n')+1] == '#'
}
