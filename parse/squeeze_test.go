package parse

import (
	"bytes"
	"strings"
	"testing"
)

// TestSqueeze: squeeze empties runs of blank lines (two or more), keeps
// every other line whole and in order, and its map takes each byte of a
// kept line back to that byte of the text.
func TestSqueeze(t *testing.T) {
	blank := strings.Repeat(" ", 70) + "\n"
	text := "int a;\n" + blank + blank + blank + "  int b ;\n" + blank + "char *s = \"x    y\";\n\t \n" +
		strings.Repeat(blank, 50) + "# 5 \"f.h\"\n" + blank + blank + "int c" + strings.Repeat(" ", 40) + ";\n" + blank + blank + "  "
	sq, m := squeeze([]byte(text))
	if sq == nil {
		t.Fatal("nothing squeezed")
	}
	if got, want := bytes.Count(sq, []byte("\n")), strings.Count(text, "\n"); got != want {
		t.Errorf("%d lines squeezed, want %d", got, want)
	}
	if len(sq) >= len(text)/3 {
		t.Errorf("squeezed to %d bytes of %d", len(sq), len(text))
	}
	sqLines, lines := strings.SplitAfter(string(sq), "\n"), strings.SplitAfter(text, "\n")
	off, sqOff := 0, 0
	for i, l := range lines {
		kept := sqLines[i]
		if kept != l && (kept != "\n" || strings.TrimSpace(l) != "") {
			t.Errorf("line %d: %q squeezed to %q", i+1, l, kept)
		}
		if kept == l {
			for j := range l {
				if got := m.orig(sqOff + j); got != off+j {
					t.Fatalf("line %d byte %d: offset %d maps to %d, want %d", i+1, j, sqOff+j, got, off+j)
				}
			}
		}
		off, sqOff = off+len(l), sqOff+len(kept)
	}
	// One blank line alone is kept; nothing to squeeze at all gives nil.
	if sq, m := squeeze([]byte("int a;\n" + blank + "int b;\n")); sq != nil || m.orig(20) != 20 {
		t.Errorf("a single blank line: squeezed %q", sq)
	}
}
