package parse

import (
	"strings"
	"testing"
)

// TestCompilerText checks which of a system header's declarations that
// nothing uses CompilerText blanks: typedefs, tags, extern declarations
// and prototypes; not a tentative definition, a static constant, an
// initialised or asm-labelled declaration, a symbol-emitting attribute's,
// a static assertion, a function definition; nor one the unit or the
// weave's inserted words name, nor one an edit changes.
func TestCompilerText(t *testing.T) {
	decls := map[string]bool{ // declaration -> blanked
		"typedef int unused_t;":                                         true,
		"struct unused_s { int a; };":                                   true,
		"extern int unused_e;":                                          true,
		"extern char *unused_f(const char *, int);":                     true,
		"int unused_p(void) __attribute__((__nothrow__));":              true,
		"char *unused_q(int);":                                          true,
		"int tentative;":                                                false,
		"static const int konst = 1;":                                   false,
		"extern int init = 2;":                                          false,
		"extern int labelled(void) __asm__(\"other\");":                 false,
		"extern int weakly(void) __attribute__((__weak__));":            false,
		"int (*fnptr)(void);":                                           false,
		"_Static_assert(sizeof(int) == 4, \"int\");":                    false,
		"int defined(void) { return 0; }":                               false,
		"typedef long used_t;":                                          false,
		"typedef short inserted_t;":                                     false,
		"typedef char edited_t;":                                        false,
		"typedef struct needed_s needed_t; struct needed_s { int b; };": false,
	}
	var b strings.Builder
	b.WriteString("# 0 \"u.c\"\n# 1 \"/usr/include/h.h\" 1 3 4\n")
	for d := range decls {
		b.WriteString(d + "\n")
	}
	b.WriteString("# 2 \"u.c\" 2\nused_t main(void) { needed_t *p = 0; return 0; }\n")
	text := []byte(b.String())
	u, err := Parse("u.i", text, NewDialect([]string{"gcc"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !u.Pruned {
		t.Fatal("not parsed pruned")
	}
	edited := strings.Index(string(text), "edited_t")
	out := u.CompilerText([]string{"x = (inserted_t)1;", "nowhere"}, func(start, end int) bool { return start <= edited && edited < end })
	if len(out) != len(text) {
		t.Fatalf("%d bytes, text %d", len(out), len(text))
	}
	for d, blank := range decls {
		kept := strings.Contains(string(out), d)
		if kept == blank {
			t.Errorf("%q: kept %v, want %v", d, kept, !blank)
		}
	}
	if string(u.Text) != string(text) {
		t.Error("the unit's text changed")
	}
}
