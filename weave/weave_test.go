package weave

import (
	"bytes"
	"os"
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
