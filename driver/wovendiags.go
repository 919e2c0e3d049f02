package driver

import (
	"bytes"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/parse"
	"github.com/weave-profiler/weave/weave"
)

// Warnings the woven code itself draws, which the plain compile does not.
// gcc's -Waggregate-return (xz's and libxml2's flags) warns "function call
// has aggregate value" at each call that returns a structure, and the
// frame guards' out-of-line entries (__weave_enter_call at -O0, the
// frames weave keeps out of line at any level) and a declared
// allocator's wrapper (__weave_outer_begin) return their frame as one:
// xz 5.4's woven build drew 59 such warnings, its plain build none.
// Those whose column in the woven text begins a call of the runtime are
// dropped from the compiler's diagnostics; the program's own stay.

// aggregateRE matches such a diagnostic's first line (the message may be
// translated; the option is not): its file, line and column.
var aggregateRE = regexp.MustCompile(`^(.+):(\d+):(\d+): .*\[-W(?:error=)?aggregate-return\]$`)

// ansiRE matches the escapes of gcc's coloured diagnostics.
var ansiRE = regexp.MustCompile("\x1b\\[[0-9;]*[mK]")

// dropWovenDiagnostics returns diags, the compiler's stderr for the woven
// text woven, without the warnings its runtime calls drew. tabstop is the
// compile's -ftabstop (gcc counts columns in display columns).
func dropWovenDiagnostics(diags, woven []byte, tabstop int) []byte {
	if !bytes.Contains(diags, []byte("-Waggregate-return")) && !bytes.Contains(diags, []byte("=aggregate-return")) {
		return diags
	}
	lines := strings.SplitAfter(string(diags), "\n")
	var lm *parse.LineMap
	var physOf map[string][]int    // "file:line" -> its physical lines in woven
	sources := map[string][]byte{} // each source file read once, as gcc reads it
	wovenLines := bytes.Split(woven, []byte("\n"))
	fromRuntime := func(file string, line, col int) bool {
		if lm == nil {
			lm, physOf = parse.NewLineMap(woven), map[string][]int{}
			for p := 1; p <= len(wovenLines); p++ {
				loc := lm.Lookup(p)
				k := loc.File + ":" + strconv.Itoa(loc.Line)
				physOf[k] = append(physOf[k], p)
			}
		}
		src, ok := sources[file]
		if !ok {
			src, _ = os.ReadFile(file) // nil if unread: byte columns only
			sources[file] = src
		}
		orig := lineOf(src, line)
		for _, p := range physOf[file+":"+strconv.Itoa(line)] {
			if callsRuntimeAt(wovenLines[p-1], orig, col, tabstop) {
				return true
			}
		}
		return false
	}
	// A header ("f.c: In function 'g':"; "In function 'g'," and "    inlined
	// from ...") is printed once before a context's first diagnostic: it
	// is kept if one under it is.
	var out, header []string
	kept, dropping := false, false
	for _, l := range lines {
		if l == "" {
			continue // after the last newline
		}
		text := ansiRE.ReplaceAllString(strings.TrimRight(l, "\n"), "") // -fdiagnostics-color=always
		switch {
		case isContextHeader(text):
			header, kept, dropping = []string{l}, false, false
			continue
		case strings.HasPrefix(text, "    inlined from "):
			header, kept, dropping = append(header, l), false, false
			continue
		case dropping && (isContext(text) || strings.Contains(text, ": note: ")):
			continue // the dropped warning's source, caret and notes
		}
		dropping = false
		if m := aggregateRE.FindStringSubmatch(text); m != nil {
			line, _ := strconv.Atoi(m[2])
			col, _ := strconv.Atoi(m[3])
			if dropping = fromRuntime(m[1], line, col); dropping {
				continue
			}
		}
		if !kept {
			out, kept = append(out, header...), true
		}
		out = append(out, l)
	}
	return []byte(strings.Join(out, ""))
}

// isContextHeader reports whether l begins the context gcc prints before
// a function's diagnostics: "f.c: In function 'g':", or "In function 'g',"
// (then "    inlined from 'h' at f.c:8:79:").
func isContextHeader(l string) bool {
	return strings.HasSuffix(l, ":") && (strings.Contains(l, ": In function ") || strings.Contains(l, ": At top level")) ||
		strings.HasPrefix(l, "In function ") && strings.HasSuffix(l, ",")
}

// isContext reports whether l is a source or caret line gcc prints under
// a diagnostic ("    7 |  code", "      |   ^").
func isContext(l string) bool {
	t := strings.TrimLeft(strings.TrimLeft(strings.TrimLeft(l, " "), "0123456789"), " ")
	return len(t) < len(l) && strings.HasPrefix(t, "|")
}

// callsRuntimeAt reports whether a runtime name (__weave_...) begins at
// column col of the woven line. gcc counts columns in display columns
// (tabs to the next multiple of tabstop) of the source file's line, as
// it reads it from disk (orig; nil if unread), for the byte column of the
// woven line; a column past the end of orig's line is one byte each.
func callsRuntimeAt(line, orig []byte, col, tabstop int) bool {
	at := func(i int) bool { return i >= 0 && i < len(line) && bytes.HasPrefix(line[i:], []byte("__weave_")) }
	if at(col - 1) {
		return true
	}
	c := 1 // the display column of byte i of orig
	for i, b := range orig {
		if b&0xC0 == 0x80 {
			continue // inside a character
		}
		if c >= col {
			return c == col && at(i)
		}
		if b == '\t' {
			c += tabstop - (c-1)%tabstop
		} else {
			c++
		}
	}
	return at(len(orig) + col - c)
}

// lineOf returns line n (1-based) of the text data, nil past its end.
func lineOf(data []byte, n int) []byte {
	for ; n > 1; n-- {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return nil
		}
		data = data[i+1:]
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		data = data[:i]
	}
	return data
}

// tabstop returns the -ftabstop= of a compile's argv (gcc's default, 8).
func tabstop(argv []string) int {
	n := 8
	for _, a := range argv {
		if v, ok := strings.CutPrefix(a, "-ftabstop="); ok {
			if t, err := strconv.Atoi(v); err == nil && t > 0 {
				n = t
			}
		}
	}
	return n
}

// wovenNameRE matches a runtime entry's name where the compiler quotes a
// function's name (‘__weave_malloc’, 'x' in the C locale), coloured or
// not.
var wovenNameRE = regexp.MustCompile("([\u2018'](?:\x1b\\[[0-9;]*[mK])*)__weave_([a-z0-9_]+)")

// wovenDiagnostics returns the compiler's stderr for the woven text woven
// as the plain compile would have printed it: without the warnings the
// runtime's calls drew, and with the allocators' own names. argv is the
// compile's command line (its -ftabstop). Both the compile of a unit and
// a one-step compile and link apply it.
func wovenDiagnostics(diags, woven []byte, argv []string) []byte {
	return renameWovenCalls(dropWovenDiagnostics(diags, woven, tabstop(argv)))
}

// renameWovenCalls returns diags with the runtime's entries that took the
// place of a C library allocator at a call named as the program named
// them: gcc's -Wunused-result says "ignoring return value of ‘malloc’"
// for `malloc(10);`, as for the plain build, not of ‘__weave_malloc’.
func renameWovenCalls(diags []byte) []byte {
	if !bytes.Contains(diags, []byte("__weave_")) {
		return diags
	}
	return wovenNameRE.ReplaceAllFunc(diags, func(m []byte) []byte {
		s := wovenNameRE.FindSubmatch(m)
		if !weave.LibraryAllocator(string(s[2])) {
			return m
		}
		return append(bytes.Clone(s[1]), s[2]...)
	})
}
