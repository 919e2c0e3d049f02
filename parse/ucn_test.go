package parse

import (
	"bytes"
	"strings"
	"testing"
)

// TestUCNIdentifiers checks that the UCNs of identifiers, and only those,
// become $-identifiers of the same length, and DisplayName reads both
// forms back.
func TestUCNIdentifiers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`int caf\U000000e9 = 1;`, `int caf$U000000e9 = 1;`},
		{`x\u00e9y(\u00e8);`, `x$u00e9y($u00e8);`},
		{`char *s = "\u00e9\"\U000000e9"; int \u00e9;`, `char *s = "\u00e9\"\U000000e9"; int $u00e9;`},
		{`char c = '\u00e9', d = '\''; int \u00e9;`, `char c = '\u00e9', d = '\''; int $u00e9;`},
		{"/* don't \\u00e9 */ int \\u00e9; // \\u00e9 it's\nint \\u00e8;", "/* don't \\u00e9 */ int $u00e9; // \\u00e9 it's\nint $u00e8;"},
		{`int a\u00e; int b\uzzzz;`, `int a\u00e; int b\uzzzz;`}, // not UCNs
		{"int x = 1'000; int \\u00e9;\nint \\u00e8;", "int x = 1'000; int \\u00e9;\nint $u00e8;"},
		{`no escapes at all`, `no escapes at all`},
	} {
		in := []byte(tc.in)
		got := ucnIdentifiers(in)
		if string(got) != tc.want {
			t.Errorf("ucnIdentifiers(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if string(in) != tc.in {
			t.Errorf("ucnIdentifiers changed its input %q", tc.in)
		}
	}
	for in, want := range map[string]string{
		`$U0000043f$U00000440$U00000438`:  "при",
		`caf\u00e9`:                       "café",
		`a$u0041 b\U0000d800 c\U00110000`: `a$u0041 b\U0000d800 c\U00110000`, // not characters a UCN may name
		`unexpected '$u00e9x'`:            "unexpected 'éx'",
		"plain":                           "plain",
	} {
		if got := DisplayName(in); got != want {
			t.Errorf("DisplayName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestUCNParse checks that gcc's UCN output parses, every offset as in the
// text, and the names read back in UTF-8.
func TestUCNParse(t *testing.T) {
	text := []byte("# 1 \"u.c\"\nstatic int \\U0000043f(int \\u00e9) { return \\u00e9 + 1; }\nint main(void) { return \\U0000043f(-1); }\n")
	u, err := Parse("u.i", text, NewDialect([]string{"gcc"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for l := u.AST.TranslationUnit; l != nil; l = l.TranslationUnit {
		if fd := l.ExternalDeclaration.FunctionDefinition; fd != nil {
			names = append(names, DisplayName(fd.Declarator.Name()))
			name := strings.ReplaceAll(fd.Declarator.Name(), "$", `\`)
			if off := u.Offset(fd.Declarator); !bytes.HasPrefix(text[off:], []byte(name)) {
				t.Errorf("%s at offset %d: %q", name, off, text[off:])
			}
		}
	}
	if got := strings.Join(names, " "); got != "п main" {
		t.Errorf("functions %q, want \"п main\"", got)
	}
}

// TestLanguageFlags checks which options make the dialect.
func TestLanguageFlags(t *testing.T) {
	in := []string{"-O2", "-std=c99", "-I", "inc", "-DX=1", "--std", "gnu11", "-fno-asm", "-fPIC", "-funsigned-char",
		"-fno-short-enums", "-Wall", "-ansi", "-fms-extensions", "-fno-builtin-malloc", "-m32", "-g"}
	want := "-std=c99 -std=gnu11 -fno-asm -fPIC -funsigned-char -fno-short-enums -ansi -fms-extensions -fno-builtin-malloc -m32"
	if got := strings.Join(LanguageFlags(in), " "); got != want {
		t.Errorf("LanguageFlags = %q, want %q", got, want)
	}
}

// TestDialectParse checks that one process parses each text in the
// dialect it is given: the same text fails in one and parses in another.
func TestDialectParse(t *testing.T) {
	gcc := []string{"gcc"}
	for _, tc := range []struct {
		text      string
		bad, good []string // flags of a dialect that rejects it, one that accepts it
	}{
		{"struct s { char *asm; int typeof; };\n", nil, []string{"-std=c99"}},
		{"struct s { char *asm; int typeof; };\n", []string{"-std=gnu99"}, []string{"-fno-asm"}},
		{"int inline = 1;\n", []string{"-std=c99"}, []string{"-ansi"}},
		{"char a[(char)-1 > 0 ? 1 : -1];\n", []string{"-fsigned-char"}, []string{"-funsigned-char"}},
		{"char a[sizeof(long) == 4 ? 1 : -1];\n", nil, []string{"-m32"}},
	} {
		text := []byte("# 1 \"d.c\"\n" + tc.text + "int end;\n") // (cc/v4 loops on an asm label at the end of the text)
		if _, err := Parse("d.i", text, NewDialect(gcc, tc.bad)); err == nil {
			t.Errorf("%q parsed with %q", tc.text, tc.bad)
		}
		if _, err := Parse("d.i", text, NewDialect(gcc, tc.good)); err != nil {
			t.Errorf("%q with %q: %v", tc.text, tc.good, err)
		}
	}
}
