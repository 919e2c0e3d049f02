package profile

import (
	"bytes"
	"strings"
	"testing"
)

// TestLeakRecords: K and O records survive a write and a read, and the
// reader rejects K records on other nodes or twice.
func TestLeakRecords(t *testing.T) {
	p, err := ReadFile("testdata/hidden.prof")
	if err != nil {
		t.Fatal(err)
	}
	if p.Scanned() {
		t.Fatal("hidden.prof has no leak scan")
	}
	p.Meta = append(p.Meta, Meta{"leak_scan", "12345"})
	p.Funcs[1].Module = "/usr/lib/libread.so"
	leaf := p.Nodes[6]
	leaf.Leaks = &LeakKinds{{1, 10}, {2, 20}, {3, 30}, {4, 40}}
	var a, b bytes.Buffer
	if err := p.Write(&a); err != nil {
		t.Fatal(err)
	}
	q, err := Read(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, a.String())
	}
	if !q.Scanned() || q.Funcs[1].Module != "/usr/lib/libread.so" || q.Funcs[0].Module != "" ||
		q.Nodes[6].Leaks == nil || *q.Nodes[6].Leaks != *leaf.Leaks || q.Nodes[5].Leaks != nil {
		t.Errorf("read back: scanned %v, modules %q %q, leaks %v", q.Scanned(), q.Funcs[0].Module, q.Funcs[1].Module, q.Nodes[6].Leaks)
	}
	if err := q.Write(&b); err != nil || b.String() != a.String() {
		t.Errorf("second write differs (%v):\n%s\n---\n%s", err, a.String(), b.String())
	}
	text := a.String()
	for _, c := range []struct{ from, to, want string }{
		{"K 6 ", "K 1 ", "not an allocation leaf"},
		{"K 6 1 10", "K 6 1 10 2 20 3 30 4 40\nK 6 1 10", "second K record"},
		{"K 6 1 10 2 20 3 30 4 40", "K 6 1 10", "fields"},
		{"O 1 ", "O 9 ", "function"},
	} {
		bad := strings.Replace(text, c.from, c.to, 1)
		if _, err := Read(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q -> %q: error %v, want %q", c.from, c.to, err, c.want)
		}
	}
	for _, n := range []string{"definite", "indirect", "possible", "reachable"} {
		if k, err := ParseLeakKind(n); err != nil || k.String() != n {
			t.Errorf("ParseLeakKind(%q) = %v, %v", n, k, err)
		}
	}
	if _, err := ParseLeakKind("lost"); err == nil {
		t.Error("ParseLeakKind accepted lost")
	}
}
