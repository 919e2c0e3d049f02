package pseudostack

import (
	"regexp"
	"strings"
	"testing"
)

// TestLocalExecGuard: weave.h's local-exec guard (_lex64) is its _x64o
// one with the thread's fields addressed at __weave_tls@tpoff instead of
// from o, and its initial-exec one (_iex64) is the _x64o one with o
// loaded from the GOT in the asm: the same instructions, operands and
// rare paths, so that a fix to one cannot miss the others.
func TestLocalExecGuard(t *testing.T) {
	h := Header()
	def := func(name string) string {
		i := strings.Index(h, "\n"+name+"(")
		if i < 0 {
			t.Fatalf("weave.h defines no %s", name)
		}
		end := strings.Index(h[i:], "\n}\n")
		if end < 0 {
			t.Fatalf("weave.h: %s has no end", name)
		}
		return h[i : i+end+3]
	}
	fs := regexp.MustCompile(`%%fs:(\d+)\(%\[o\]\)`)
	for _, pair := range [][2]string{
		{"__weave_enter_x64o", "__weave_enter_lex64"},
		{"__weave_leave_x64o", "__weave_leave_lex64"},
		{"__weave_enter_ptr_x64o", "__weave_enter_ptr_lex64"},
	} {
		ie, le := def(pair[0]), def(pair[1])
		want := fs.ReplaceAllString(ie, "%%fs:__weave_tls@tpoff+$1")
		want = strings.NewReplacer(", [o] \"r\"(o)", "", ", __weave_size_t o)", ")", "__weave_enter_x64o(fn, o)", "__weave_enter_lex64(fn)",
			pair[0]+"(", pair[1]+"(",
			// __weave_solo is the executable's: no GOT entry to load.
			"\"movq __weave_solo@GOTPCREL(%%rip), %[x]\\n\\t\"\n\t\t\"cmpb $0, (%[x])\\n\\t\"", "\"cmpb $0, __weave_solo(%%rip)\\n\\t\"").Replace(want)
		if strings.Contains(want, "[o]") || !strings.Contains(want, "tpoff") && !strings.Contains(pair[0], "ptr") {
			t.Fatalf("%s: the rewrite left o in or found no field:\n%s", pair[0], want)
		}
		if le != want {
			t.Errorf("%s is not %s with local-exec addressing:\n%s\nwant:\n%s", pair[1], pair[0], le, want)
		}
	}
	// The initial-exec guard (_iex64): the asm loads o itself.
	load := `"movq __weave_tls@gottpoff(%%rip), %[o]\n\t"` + "\n\t\t"
	for _, r := range []struct{ x64o, iex64 string }{
		{"__weave_enter_x64o", "__weave_enter_iex64"},
		{"__weave_leave_x64o", "__weave_leave_iex64"},
		{"__weave_enter_ptr_x64o", "__weave_enter_ptr_iex64"},
	} {
		want := strings.NewReplacer(
			r.x64o+"(const struct __weave_fn *fn, __weave_size_t o)", r.iex64+"(const struct __weave_fn *fn)",
			r.x64o+"(struct __weave_frame *f, __weave_size_t o)\n{\n", r.iex64+"(struct __weave_frame *f)\n{\n\t__weave_size_t o;\n\n",
			r.x64o+"(const struct __weave_fn *fn, __weave_size_t t, __weave_size_t o)", r.iex64+"(const struct __weave_fn *fn, __weave_size_t t)",
			"return __weave_enter_x64o(fn, o);", "return __weave_enter_iex64(fn);",
			"__weave_size_t x, y;", "__weave_size_t x, y, o;",
			`"movq %%fs:0(%[o]), %[p]\n\t"`, load+`"movq %%fs:0(%[o]), %[p]\n\t"`,
			`"jz 1f\n\t"`, `"jz 1f\n\t"`+"\n\t\t"+strings.TrimSuffix(load, "\n\t\t"),
			`[y] "=&r"(y)`, `[y] "=&r"(y), [o] "=&r"(o)`,
			", [o] \"r\"(o)", "",
			"\t\t:\n\t\t: [d]", "\t\t: [o] \"=&r\"(o)\n\t\t: [d]").Replace(def(r.x64o))
		if got := def(r.iex64); got != want || strings.Contains(got, `"r"(o)`) {
			t.Errorf("%s is not %s loading o itself:\n%s\nwant:\n%s", r.iex64, r.x64o, got, want)
		}
	}
}
