package weave

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weave/parse"
)

// weaveFile preprocesses and weaves a file with gcc, for tests.
func weaveFile(t *testing.T, src string) *Result {
	t.Helper()
	var stderr bytes.Buffer
	text, err := parse.Preprocess([]string{"gcc"}, nil, src, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	u, err := parse.Parse(src+".i", text)
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := os.ReadFile("../runtime/weave.h")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Weave(u, Options{Prologue: string(hdr)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestWeaveWidgets(t *testing.T) {
	res := weaveFile(t, "../testdata/widgets.c")
	os.WriteFile("/tmp/widgets.woven.i", res.Text, 0o644)
	t.Logf("functions %v sites %v", res.Functions, res.Sites)
}

func TestNameKeys(t *testing.T) {
	names := []string{}
	for n := range allocOps {
		names = append(names, n)
	}
	for n := range setjmpNames {
		names = append(names, n)
	}
	for _, n := range names {
		found := false
		for _, k := range nameKeys {
			found = found || strings.Contains(n, k)
		}
		if !found {
			t.Errorf("%s contains none of nameKeys %q", n, nameKeys)
		}
		text := []byte("x " + n + "(1); y_" + n + "(2); " + n + "_z(3); " + n)
		if got := adviceNames(text); len(got) != 2 || got[0] != 2 || got[1] != len(text)-len(n) {
			t.Errorf("adviceNames(%q) = %v", text, got)
		}
	}
}

// TestNestedFunctions checks that GNU nested functions are woven, also
// where the enclosing body names no allocation function.
func TestNestedFunctions(t *testing.T) {
	src := filepath.Join(t.TempDir(), "nested.c")
	if err := os.WriteFile(src, []byte(`#include <stdlib.h>
int outer(int n)
{
	int inner(int k) { return k + 1; }
	return inner(n);
}
void *outer2(void)
{
	{ void *mk(void) { return malloc(4); } return mk(); }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res := weaveFile(t, src)
	var fns []string
	for _, f := range res.Functions {
		fns = append(fns, f.Name)
	}
	if got := strings.Join(fns, " "); got != "outer inner outer2 mk" {
		t.Errorf("functions %q, want outer inner outer2 mk", got)
	}
	if len(res.Sites) != 1 || res.Sites[0].Func != "mk" || res.Sites[0].Line != 9 {
		t.Errorf("sites %+v, want malloc in mk at line 9", res.Sites)
	}
	if n := bytes.Count(res.Text, []byte("= __weave_enter(&__weave_fns_")); n != 4 {
		t.Errorf("%d guards, want 4", n)
	}
}
