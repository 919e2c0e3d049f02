package parse

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"modernc.org/cc/v4"
)

func TestJoinLines(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" for nil
	}{
		{"join", "int a;\nint b;\n", "int a; int b;\n"},
		{"marker", "# 1 \"a.c\"\nint a;\n# 3 \"a.c\" 2\nint b;\n", "          int a;" + strings.Repeat(" ", 13) + "int b;\n"},
		{"pragma keeps its line", "int a;\n#pragma pack(1)\nint b;\n", "int a;\n#pragma pack(1)\nint b;\n"},
		{"ident", "int a;\n  #ident \"x\"\nint b;\nint c;\n", "int a;\n  #ident \"x\"\nint b; int c;\n"},
		{"line comment", "int a; // x\nint b;\nint c;\n", "int a; // x\nint b; int c;\n"},
		{"block comment", "int a; /* x\ny */ int b;\nint c;\n", "int a; /* x y */ int b; int c;\n"},
		{"comment in literal", "char *s = \"/*\";\nint b;\n", "char *s = \"/*\"; int b;\n"},
		{"escaped quote", "char *s = \"\\\"\", c = '\\'';\nint b;\n", "char *s = \"\\\"\", c = '\\''; int b;\n"},
		{"no final newline", "int a;\nint b;", "int a; int b;"},
		{"carriage return", "int a;\r\nint b;\r\n", ""},
		{"splice", "int a \\\n;\n", ""},
		{"open literal", "char c = 'a;\nint b;\n", ""},
		{"define", "#define X 1\nint a = X;\n", ""},
		{"line", "#line 5 \"a.c\"\nint a;\n", ""},
		{"digraph directive", "%:pragma x\nint a;\n", ""},
		{"comment before directive", "/* x */ #pragma x\nint a;\n", ""},
		{"comment around directive", "int a; /*\n*/ #pragma x\nint b;\n", ""},
		{"directive opens comment", "#pragma x /*\n*/\nint b;\n", ""},
	} {
		got := joinLines([]byte(tc.in))
		switch {
		case tc.want == "" && got != nil:
			t.Errorf("%s: joinLines(%q) = %q, want nil", tc.name, tc.in, got)
		case tc.want != "" && string(got) != tc.want:
			t.Errorf("%s: joinLines(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	long := strings.Repeat("int a;\n", 1000)
	got := joinLines([]byte(long))
	if n := bytes.Count(got, []byte("\n")); n < len(long)/joinedLineBytes || n > len(long)/joinedLineBytes+1 {
		t.Errorf("%d bytes of short lines joined into %d lines, want about one per %d bytes", len(long), n, joinedLineBytes)
	}
}

// TestBlankMacroLines: -g3's and -dD's #define and #undef lines and -dI's
// #include lines are blanked for cc/v4 (their expansion is the text
// already), every other byte where it was (with the lines of a comment a
// #define opens: -CC); none inside a comment or after one, and none where
// a line's state is not sure.
func TestBlankMacroLines(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string // want "" for the text itself
	}{
		{"define", "#define fw u.fw\nint fw;\n", "               \nint fw;\n"},
		{"undef and include", "# undef X\n  #include <a.h>\n#include_next \"b\"\nint a;\n", "         \n                \n                 \nint a;\n"},
		{"kept", "# 1 \"a.c\"\n#pragma x\n#ident \"y\"\n#line 3\nint a;\n", ""},
		{"in a comment", "/*\n#define X 1 */ int a;\n", ""},
		{"after a comment", "/* c */ #define X 1\nint a;\n", ""},
		{"after a closed comment", "/* c */\n#define X /* d */ 1\nint a;\n", "/* c */\n                   \nint a;\n"},
		// -CC keeps a #define's comments, which may go over lines: the
		// directive goes on to the line the comment closes on.
		{"opens a comment", "#define X 1 /*\n*/ int a;\n", "              \n         \n"},
		{"a comment over lines", "#define W 2 /* a\n   b\n c */\nint fw;\n", "                \n    \n     \nint fw;\n"},
		{"a comment not closed", "#define X 1 /*\nint a;\n", ""},
		{"splice", "#define X \\\n 1\n", ""},
		{"in a literal", "char *s = \"\n#define X\";\n", ""},
		{"none", "int define;\n", ""},
	} {
		got := blankMacroLines([]byte(tc.in))
		want := tc.want
		if want == "" {
			want = tc.in
		}
		if string(got) != want {
			t.Errorf("%s: blankMacroLines(%q) = %q, want %q", tc.name, tc.in, got, want)
		}
	}
}

// TestJoinedParse checks that cc/v4 makes the same AST of the text as it
// is as of the text joined (joinLines) and of the text as the speculative
// parse reads it (in parts, joined), but for line numbers: same nodes, tokens
// at the same offsets (Unit.Offset), same types; and that Unit.Location
// agrees with cc/v4's lines of the text as it is.
func TestJoinedParse(t *testing.T) {
	files, _ := filepath.Glob("../testdata/*.c")
	if out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "modernc.org/ccorpus2").Output(); err == nil {
		files = append(files, filepath.Join(strings.TrimSpace(string(out)), "assets", "sqlite-amalgamation-3380100", "sqlite3.c"))
	}
	st, err := NewDialect([]string{"gcc"}, nil).state()
	if err != nil {
		t.Fatal(err)
	}
	utf := filepath.Join(t.TempDir(), "utf.c")
	if err := os.WriteFile(utf, []byte("#include <stdlib.h>\nint main(void) { char *s = \"h\xc3\xa9llo\\n\"; void *p = /* \xc3\xa9 */ malloc(3); free(p); return s[0]; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files = append(files, utf)
	for _, src := range files {
		for _, flags := range [][]string{nil, {"-C"}} {
			if flags != nil && strings.HasSuffix(src, "sqlite3.c") && testing.Short() {
				continue
			}
			var stderr bytes.Buffer
			text, err := Preprocess([]string{"gcc"}, flags, src, &stderr)
			if err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			spec, err := ParseAll("x.i", text, NewDialect([]string{"gcc"}, flags))
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := spec.sources[specName(0)]; !ok && len(text) >= specStart && systemShare(text) <= specSystemShare {
				t.Errorf("%s %v: not parsed speculatively", src, flags)
			}
			joined := joinLines(parseable(text))
			if joined == nil {
				t.Errorf("%s %v: not joined", src, flags)
				continue
			}
			if len(joined) != len(text) || bytes.Count(joined, []byte("\n"))*10 > bytes.Count(text, []byte("\n")) {
				t.Errorf("%s %v: joined %d bytes, %d lines, from %d bytes, %d lines", src, flags, len(joined), bytes.Count(joined, []byte("\n")), len(text), bytes.Count(text, []byte("\n")))
			}
			want, err := translate(st, "x.i", parseable(text))
			if err != nil {
				t.Fatal(err)
			}
			ast, err := translate(st, "x.i", joined)
			if err != nil {
				t.Fatalf("%s %v: joined: %v", src, flags, err)
			}
			lines := NewLineMap(text)
			for _, got := range []*Unit{{Name: "x.i", Text: text, AST: ast, Lines: lines, sources: map[string]int{"x.i": 0}}, spec} {
				tokens := 0
				sameToken := func(a, b cc.Token) error {
					pa, pb := a.Position(), b.Position()
					if pb.Filename == "x.i" {
						tokens++
						pa.Filename, pa.Offset = "x.i", got.Offset(a)
						if loc, col := got.Location(a); loc != lines.Lookup(pb.Line) || col != pb.Column {
							return fmt.Errorf("token %q at %v: Location says %v:%d", b.SrcStr(), pb, loc, col)
						}
					}
					if a.Ch != b.Ch || a.SrcStr() != b.SrcStr() || pa.Offset != pb.Offset || pa.Filename != pb.Filename {
						return fmt.Errorf("token %q at %v vs %q at %v", a.SrcStr(), pa, b.SrcStr(), pb)
					}
					return nil
				}
				if err := sameAST(reflect.ValueOf(got.AST.TranslationUnit), reflect.ValueOf(want.TranslationUnit), sameToken); err != nil {
					t.Errorf("%s %v: %v", src, flags, err)
				}
				if tokens == 0 {
					t.Errorf("%s %v: no tokens compared", src, flags)
				}
			}
		}
	}
}

var (
	tokenType = reflect.TypeFor[cc.Token]()
	typer     = reflect.TypeFor[interface{ Type() cc.Type }]()
)

// sameAST compares two cc/v4 ASTs through their exported fields (slices
// and arrays element by element), tokens with sameToken and typed nodes by
// type. A kind it cannot compare is an error, not a silent match.
func sameAST(a, b reflect.Value, sameToken func(a, b cc.Token) error) error {
	if a.Kind() == reflect.Interface {
		if a.IsNil() != b.IsNil() {
			return fmt.Errorf("nil %v, %v", a, b)
		}
		if a.IsNil() {
			return nil
		}
		a, b = a.Elem(), b.Elem()
	}
	if a.Type() != b.Type() {
		return fmt.Errorf("%v vs %v", a.Type(), b.Type())
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() != b.IsNil() {
			return fmt.Errorf("%v: nil vs not", a.Type())
		}
		if a.IsNil() {
			return nil
		}
		if a.Type().Implements(typer) {
			ta, tb := a.Interface().(interface{ Type() cc.Type }).Type(), b.Interface().(interface{ Type() cc.Type }).Type()
			if (ta == nil) != (tb == nil) || ta != nil && ta.String() != tb.String() {
				return fmt.Errorf("%v at %v: type %v vs %v", a.Type(), a.Interface().(cc.Node).Position(), ta, tb)
			}
		}
		return sameAST(a.Elem(), b.Elem(), sameToken)
	case reflect.Struct:
		if a.Type() == tokenType {
			return sameToken(a.Interface().(cc.Token), b.Interface().(cc.Token))
		}
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			if err := sameAST(a.Field(i), b.Field(i), sameToken); err != nil {
				return fmt.Errorf("%s.%s: %w", a.Type().Name(), a.Type().Field(i).Name, err)
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Errorf("%v: length %d vs %d", a.Type(), a.Len(), b.Len())
		}
		for i := range a.Len() {
			if err := sameAST(a.Index(i), b.Index(i), sameToken); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Bool, reflect.String:
		if !a.Equal(b) {
			return fmt.Errorf("%v vs %v", a, b)
		}
		return nil
	}
	return fmt.Errorf("%v: cannot compare a %v", a.Type(), a.Kind())
}

// TestSameAST: sameAST sees a difference in a slice field.
func TestSameAST(t *testing.T) {
	a, b := &cc.StorageClassSpecifier{}, &cc.StorageClassSpecifier{Declspecs: make([]cc.Token, 1)}
	same := func(a, b cc.Token) error { return nil }
	if err := sameAST(reflect.ValueOf(a), reflect.ValueOf(b), same); err == nil {
		t.Error("sameAST found no difference in Declspecs")
	}
	if err := sameAST(reflect.ValueOf(a), reflect.ValueOf(&cc.StorageClassSpecifier{}), same); err != nil {
		t.Error(err)
	}
}
