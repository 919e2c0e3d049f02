package parse

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/cc/v4"
)

// smallProgram is a small program as configure's conftests and first
// tries are: three system headers, a few calls.
const smallProgram = `#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) { char *s = malloc(16); strcpy(s, "hello"); printf("%s\n", s); free(s); return 0; }
`

// preprocessed writes src to a file and returns its preprocessed text (a
// copy: not the one the speculative parse follows).
func preprocessed(t testing.TB, src string, flags ...string) (file string, text []byte) {
	t.Helper()
	file = filepath.Join(t.TempDir(), "prog.c")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	text, err := Preprocess([]string{"gcc"}, flags, file, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	return file, bytes.Clone(text)
}

// TestPrune checks what prune keeps of a small program's text: its own
// line, and of the headers the declarations it uses and what they need
// (malloc's size_t, printf, FILE's struct for the extern inline functions
// of bits/stdio.h), not the rest (fopen, memmove); every byte offset and
// line the same, the linemarkers kept.
func TestPrune(t *testing.T) {
	_, text := preprocessed(t, smallProgram, "-O2")
	out, _ := prune(parseable(text), nil)
	if out == nil {
		t.Fatal("not pruned")
	}
	if len(out) != len(text) || bytes.Count(out, []byte("\n")) != bytes.Count(text, []byte("\n")) {
		t.Fatalf("pruned: %d bytes, %d lines; text: %d bytes, %d lines", len(out), bytes.Count(out, []byte("\n")), len(text), bytes.Count(text, []byte("\n")))
	}
	for i := range out {
		if out[i] != text[i] && out[i] != ' ' {
			t.Fatalf("offset %d: %q became %q", i, text[i], out[i])
		}
	}
	for _, l := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(l, "#") && !bytes.Contains(out, []byte(l+"\n")) {
			t.Errorf("directive %q lost", l)
		}
	}
	for _, want := range []string{"int main(void)", "extern void *malloc (size_t __size)", "typedef long unsigned int size_t;", "extern int printf (", "struct _IO_FILE\n{", "extern char *strcpy ("} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("%q pruned", want)
		}
	}
	for _, gone := range []string{"fopen", "memmove", "strtok"} {
		if bytes.Contains(out, []byte(gone+" (")) {
			t.Errorf("%s kept", gone)
		}
	}
	kept := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "#") {
			kept++
		}
	}
	if total := bytes.Count(text, []byte("\n")); kept*4 > total {
		t.Errorf("%d of %d lines kept", kept, total)
	}
}

// TestPruneErrors checks that errors in a unit's own code are those of
// the whole text's parse: an undeclared identifier, a call of a function
// its headers declare otherwise.
func TestPruneErrors(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"return undeclared_x;", "undeclared_x"},
		{"return stdout->no_such_field;", "no_such_field"},
	} {
		src := strings.Replace(smallProgram, "return 0;", c.body, 1)
		file, text := preprocessed(t, src)
		d := NewDialect([]string{"gcc"}, nil)
		_, whole := ParseAll(file+".i", text, d)
		_, pruned := Parse(file+".i", text, d)
		if whole == nil || pruned == nil {
			t.Fatalf("%s: whole: %v; pruned: %v", c.body, whole, pruned)
		}
		if pruned.Error() != whole.Error() {
			t.Errorf("%s: pruned: %v; whole: %v", c.body, pruned, whole)
		}
		if !strings.HasPrefix(pruned.Error(), file+":4:") || !strings.Contains(pruned.Error(), c.want) {
			t.Errorf("%s: %v, want %s:4:...%s", c.body, pruned, file, c.want)
		}
	}
}

// BenchmarkParse parses a small program (smallProgram) and one of Lua's
// units (lapi.c), pruned and whole.
func BenchmarkParse(b *testing.B) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "modernc.org/ccorpus2").Output()
	if err != nil {
		b.Fatal(err)
	}
	lua := filepath.Join(b.TempDir(), "lua")
	if err := os.MkdirAll(lua, 0o755); err != nil {
		b.Fatal(err)
	}
	tgz := filepath.Join(strings.TrimSpace(string(out)), "assets", "www.lua.org", "ftp", "lua-5.4.4.tar.gz")
	if out, err := exec.Command("tar", "-C", lua, "-xzf", tgz).CombinedOutput(); err != nil {
		b.Fatalf("tar: %v: %s", err, out)
	}
	luaSrc, err := os.ReadFile(filepath.Join(lua, "lua-5.4.4", "src", "lapi.c"))
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, src string
		flags     []string
	}{
		{"small", smallProgram, []string{"-O2"}},
		{"lua", string(luaSrc), []string{"-std=gnu99", "-O2", "-DLUA_COMPAT_5_3", "-DLUA_USE_LINUX", "-I", filepath.Join(lua, "lua-5.4.4", "src")}},
	} {
		file, text := preprocessed(b, c.src, c.flags...)
		d := NewDialect([]string{"gcc"}, c.flags)
		for _, mode := range []struct {
			name  string
			parse func(string, []byte, Dialect) (*Unit, error)
		}{{"pruned", Parse}, {"whole", ParseAll}} {
			b.Run(c.name+"/"+mode.name, func(b *testing.B) {
				for b.Loop() {
					if _, err := mode.parse(file+".i", text, d); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestBuiltinFor checks which of cc/v4's builtin declarations a unit is
// given: those it spells (memcpy's __builtin_memcpy: cc/v4 resolves an
// undeclared memcpy to it), those cc.Builtin's macros call
// (__builtin_huge_val, __ccgo__types_compatible_p), no other; and that
// the rest of cc.Builtin is as it was, every line in its place.
func TestBuiltinFor(t *testing.T) {
	got := builtinFor(map[string]int32{"memcpy": 0, "__builtin_expect": 1})
	for _, want := range []string{"__builtin_memcpy(", "__builtin_expect(", "__builtin_huge_val(", "__ccgo__types_compatible_p(", "#define __builtin_va_copy", "typedef void *__builtin_va_list;"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q not kept", want)
		}
	}
	for _, gone := range []string{"__builtin_strstr(", "__atomic_load(", "__builtin_bswap64 ("} {
		if strings.Contains(got, gone) {
			t.Errorf("%q kept", gone)
		}
	}
	if len(got) != len(cc.Builtin) || strings.Count(got, "\n") != strings.Count(cc.Builtin, "\n") {
		t.Errorf("%d bytes, %d lines; cc.Builtin %d, %d", len(got), strings.Count(got, "\n"), len(cc.Builtin), strings.Count(cc.Builtin, "\n"))
	}
}

// TestPruneProgramHeaders checks pruning in a header of the program's
// own: its declarations the unit does not use are blanked, its function
// definitions kept (weave weaves them), used or not, with what they use.
func TestPruneProgramHeaders(t *testing.T) {
	dir := t.TempDir()
	hdr := "struct unused_s { int a; };\nint unused_proto(int);\ntypedef long helper_t;\nstatic helper_t helper(void) { return 1; }\nint used(int);\n"
	if err := os.WriteFile(filepath.Join(dir, "h.h"), []byte(hdr), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "main.c")
	if err := os.WriteFile(file, []byte("#include \"h.h\"\nint main(void) { return used(0); }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	text, err := Preprocess([]string{"gcc"}, nil, file, &stderr)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	out, _ := prune(bytes.Clone(text), nil)
	for _, want := range []string{"static helper_t helper(void) { return 1; }", "typedef long helper_t;", "int used(int);", "int main(void)"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("%q pruned", want)
		}
	}
	for _, gone := range []string{"unused_s", "unused_proto"} {
		if bytes.Contains(out, []byte(gone)) {
			t.Errorf("%s kept", gone)
		}
	}
}
