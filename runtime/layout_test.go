package runtime

import (
	"strings"
	"testing"
)

// The runtime stays in parts a reader can hold in mind: no C file over
// about 800 lines, no function over about 120 (issue 10's layout). A part
// that outgrows them splits by concern, with a line in parts.go.
const (
	maxPartLines = 820
	maxFuncLines = 125
)

func TestLayout(t *testing.T) {
	seen := 0
	for _, p := range parts {
		if p.gen {
			continue
		}
		seen++
		lines := strings.Split(p.text(), "\n")
		if n := len(lines); n > maxPartLines {
			t.Errorf("%s: %d lines, over %d: split it by concern", p.path, n, maxPartLines)
		}
		for _, f := range functions(lines) {
			if f.lines > maxFuncLines {
				t.Errorf("%s:%d: function %q is %d lines, over %d", p.path, f.line, f.name, f.lines, maxFuncLines)
			}
		}
	}
	if seen < 10 {
		t.Fatalf("only %d parts checked: is the parts list read?", seen)
	}
}

type cFunc struct {
	name        string
	line, lines int
}

// functions finds the function definitions of C text written in the
// runtime's style: the declarator starts in column 0, the body's "{" ends
// that line or stands alone on the next, and its "}" is in column 0.
func functions(lines []string) []cFunc {
	var out []cFunc
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if l == "" || !isIdentStart(l[0]) || !strings.Contains(l, "(") || strings.HasSuffix(l, ";") {
			continue
		}
		open := strings.HasSuffix(l, "{") || (i+1 < len(lines) && lines[i+1] == "{")
		if !open || strings.Contains(l, "=") {
			continue // a declaration, or an initialised table
		}
		name := l[:strings.Index(l, "(")]
		name = name[strings.LastIndexAny(name, " *")+1:]
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "}") {
				out = append(out, cFunc{name, i + 1, j - i + 1})
				i = j
				break
			}
		}
	}
	return out
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func TestFunctionsFinder(t *testing.T) {
	src := "static int f(int x)\n{\n\treturn x;\n}\nint g(void) {\n\tint a;\n\treturn 0;\n}\nint h(void);\nstatic const int t[] = {\n1,\n};\n"
	got := functions(strings.Split(src, "\n"))
	want := []cFunc{{"f", 1, 4}, {"g", 5, 4}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("functions = %+v, want %+v", got, want)
	}
}
