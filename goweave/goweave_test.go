package goweave

import (
	"errors"
	"go/importer"
	"go/token"
	"strings"
	"testing"
)

func weaveSrc(t *testing.T, src string, esc map[Escape]bool) (string, error) {
	t.Helper()
	out, err := Package([]Source{{"/x/a.go", []byte(src)}}, Options{
		ImportPath: "example.com/p", Importer: importer.ForCompiler(token.NewFileSet(), "gc", nil), Escapes: esc})
	if err != nil {
		return "", err
	}
	return string(out[0]), nil
}

// TestTypeError: a package that does not type-check is an *Error at its
// file:line:col, and nothing is woven.
func TestTypeError(t *testing.T) {
	_, err := weaveSrc(t, "package p\n\nfunc f() int {\n\treturn \"s\"\n}\n", nil)
	var e *Error
	if !errors.As(err, &e) || e.Pos != (Pos{"/x/a.go", 4, 9}) {
		t.Fatalf("err %v", err)
	}
}

// TestNames: functions are named as the Go runtime names them.
func TestNames(t *testing.T) {
	out, err := weaveSrc(t, `package p

type T[K any] struct{}

func (*T[K]) M() { go func() { func() {}() }() }
func (T[K]) V()  {}
func F()         { _ = func() {} }

//go:nosplit
func N() {}
`, map[Escape]bool{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, `p.N"`) {
		t.Errorf("a nosplit function woven:\n%s", out)
	}
	for _, name := range []string{`"example.com/p.(*T[...]).M"`, `"example.com/p.T[...].V"`, `"example.com/p.F"`,
		`"example.com/p.(*T[...]).M.func1"`, `"example.com/p.(*T[...]).M.func1.1"`, `"example.com/p.F.func1"`} {
		if !strings.Contains(out, "Name: "+name) {
			t.Errorf("no %s in\n%s", name, out)
		}
	}
}

// TestEscapes: a site the escape analysis keeps on the stack is not woven;
// with no analysis every allocation expression is, marked Expr.
func TestEscapes(t *testing.T) {
	src := "package p\n\nfunc f() (*int, *int) {\n\treturn new(int), new(int)\n}\n"
	out, err := weaveSrc(t, src, map[Escape]bool{{Pos{"/x/a.go", 4, 12}, kindNew}: false, {Pos{"/x/a.go", 4, 22}, kindNew}: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "return new(int), __wrt.New(&__ws0[0], new(int))") || strings.Contains(out, "Expr") {
		t.Errorf("escape analysis not followed:\n%s", out)
	}
	out, _ = weaveSrc(t, src, nil)
	if strings.Count(out, "__wrt.New(") != 2 || !strings.Contains(out, "Expr: true") {
		t.Errorf("without escape analysis:\n%s", out)
	}
}

func TestSelected(t *testing.T) {
	for _, c := range []struct {
		pkg, dir string
		pats     []string
		want     bool
	}{
		{"example.com/m", "/src/m", nil, true},
		{"fmt", "/goroot/src/fmt", nil, false},
		{"fmt", "/goroot/src/fmt", []string{"std"}, true},
		{"github.com/a/b/c", modCache() + "/github.com/a/b@v1/c", []string{"github.com/a/..."}, true},
		{"github.com/a/b_test", modCache() + "/github.com/a/b@v1", []string{"github.com/a/b"}, true},
		{"github.com/a/bc", modCache() + "/github.com/a/bc@v1", []string{"github.com/a/b"}, false},
	} {
		if got := Selected(c.pkg, c.dir, "/goroot", c.pats); got != c.want {
			t.Errorf("Selected(%s, %s, %v) = %v", c.pkg, c.dir, c.pats, got)
		}
	}
}

// TestParseEscapes: each allocation is known by its place and kind; a
// conversion and its operand reported at one place are told apart.
func TestParseEscapes(t *testing.T) {
	out := `# p
./a.go:3:9: &T{...} escapes to heap
./a.go:4:2: moved to heap: x
/abs/b.go:5:6: make([]int, 3) does not escape
./a.go:6:20: string([]byte{...}) escapes to heap
./a.go:6:20: []byte{...} does not escape
./a.go:7:8: s + t + u escapes to heap
./a.go:8:14: ([]byte)(s) does not escape
./a.go:9:19: append does not escape
./a.go:9:19: string(append(x, byte(97))) escapes to heap
./a.go:10:3: func literal escapes to heap
`
	m := ParseEscapes([]byte(out), "/d")
	want := map[Escape]bool{
		{Pos{"/d/a.go", 3, 9}, kindAddr}:     true,
		{Pos{"/abs/b.go", 5, 6}, kindMake}:   false,
		{Pos{"/d/a.go", 6, 20}, kindConvert}: true,
		{Pos{"/d/a.go", 6, 20}, kindLit}:     false,
		{Pos{"/d/a.go", 7, 8}, kindConcat}:   true,
		{Pos{"/d/a.go", 8, 14}, kindConvert}: false,
		{Pos{"/d/a.go", 9, 19}, kindAppend}:  false,
		{Pos{"/d/a.go", 9, 19}, kindConvert}: true,
		{Pos{"/d/a.go", 10, 3}, ""}:          true,
	}
	if len(m) != len(want) {
		t.Fatalf("%v", m)
	}
	for k, v := range want {
		if e, ok := m[k]; !ok || e != v {
			t.Errorf("%v: %v %v", k, e, ok)
		}
	}
}

// TestInlinableFrameless: a function that calls an allocation leaf is
// framed, but not when the compiler's -m output (ParseInlinable) says the
// plain build can inline it; a method is found at its receiver, a closure
// at func.
func TestInlinableFrameless(t *testing.T) {
	src := "package p\n\ntype T struct{ n int }\n\nfunc leaf() *T { return &T{} }\n\nfunc wrap() *T { return leaf() }\n\nfunc (t T) m() *T { return leaf() }\n\nvar f = func() *T { return leaf() }\n"
	count := func(inl map[Pos]bool) int {
		out, err := Package([]Source{{"/x/a.go", []byte(src)}}, Options{
			ImportPath: "example.com/p", Importer: importer.ForCompiler(token.NewFileSet(), "gc", nil), Inlinable: inl})
		if err != nil {
			t.Fatal(err)
		}
		return strings.Count(string(out[0]), ".Enter(")
	}
	inl := ParseInlinable([]byte("# p\n./a.go:5:6: can inline leaf\n./a.go:7:6: can inline wrap\n./a.go:9:6: can inline T.m\n./a.go:11:9: can inline glob..func1\n"), "/x")
	if len(inl) != 4 {
		t.Fatalf("ParseInlinable: %v", inl)
	}
	if n := count(nil); n != 3 {
		t.Errorf("%d frames, want 3 (wrap, T.m, the closure)", n)
	}
	if n := count(inl); n != 0 {
		t.Errorf("%d frames, want none: all inlinable", n)
	}
}
