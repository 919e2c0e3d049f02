package main

import (
	"strings"
	"testing"
)

func TestSummary(t *testing.T) {
	in := `{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}
{"Action":"output","Package":"p","Test":"TestA/valgrind","Output":"    a_test.go:12: valgrind not installed\n"}
{"Action":"output","Package":"p","Test":"TestA/valgrind","Output":"--- SKIP: TestA/valgrind (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestA/valgrind"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestC","Output":"    c_test.go:9: excluded: plain build: exit 1\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"        c.c:1:1: error: x\n"}
{"Action":"output","Package":"p","Test":"TestC","Output":"--- SKIP: TestC (0.00s)\n"}
{"Action":"skip","Package":"p","Test":"TestC"}
{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:3: want 2, got 3\n"}
{"Action":"fail","Package":"p","Test":"TestB"}
{"Action":"fail","Package":"p","Elapsed":1.5}
# q
q/x.go:1:1: expected 'package', found 'EOF'
{"ImportPath":"r [r.test]","Action":"build-output","Output":"r/r_test.go:3:2: undefined: x\n"}
{"ImportPath":"r [r.test]","Action":"build-fail"}
{"Action":"fail","Package":"r","Elapsed":0,"FailedBuild":"r [r.test]"}
`
	var out strings.Builder
	s := &summary{out: &out, output: map[string][]string{}}
	for _, l := range strings.Split(in, "\n") {
		s.line([]byte(l))
	}
	if s.print() {
		t.Error("print reported success with a failed test")
	}
	got := out.String()
	for _, want := range []string{
		"b_test.go:3: want 2, got 3\n",
		"fail p 1.5s\n",
		"q/x.go:1:1: expected 'package'",
		"tests (subtests included): 4 ran, 1 passed, 1 failed, 2 skipped\n",
		"skipped: p TestC: excluded: plain build: exit 1\n",
		"skipped: p TestA/valgrind: valgrind not installed\n",
		"FAILED: p TestB\n",
		"FAILED package: p\n",
		"r/r_test.go:3:2: undefined: x\n",
		"FAILED package: r\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
