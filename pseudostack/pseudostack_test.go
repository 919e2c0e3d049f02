package pseudostack

import (
	"strings"
	"testing"
)

// TestGuardVariants: the header woven code gets holds the _lex64 and
// _iex64 guards generated from weave.h's _x64o ones (variants.go), and
// their addressing is the one each is for: _lex64's fields at
// __weave_tls@tpoff, with no o; _iex64's o loaded from the GOT in each asm
// before its first use there.
func TestGuardVariants(t *testing.T) {
	h := Header()
	for _, name := range guardFuncs {
		lex := guardDef(h, strings.Replace(name, "_x64o", "_lex64", 1))
		if strings.Contains(lex, "[o]") || !strings.Contains(name, "ptr") && !strings.Contains(lex, "%%fs:__weave_tls@tpoff+") {
			t.Errorf("%s:\n%s", name, lex)
		}
		iex := guardDef(h, strings.Replace(name, "_x64o", "_iex64", 1))
		for _, asm := range strings.Split(iex, "__asm__")[1:] {
			use, load := strings.Index(asm, "(%[o])"), strings.Index(asm, gotTPOff)
			if use >= 0 && (load < 0 || load > use) {
				t.Errorf("%s: an asm uses o before loading it:\n%s", name, iex)
			}
		}
	}
}

// TestTrim: the header trimmed for a unit that calls the _iex64 guard and
// its pointer enter keeps those, what they call (__weave_enter_iex64,
// __weave_no_frame) and every declaration, blanks the other variants'
// definitions, and keeps the text's length and every line end in place;
// a unit that calls nothing keeps no inline definition.
func TestTrim(t *testing.T) {
	h := Header()
	uses := map[string]bool{"__weave_leave_iex64": true, "__weave_enter_ptr_iex64": true, "__weave_pushed_x64": true}
	got := Trim(h, func(name string) bool { return uses[name] })
	if len(got) != len(h) {
		t.Fatalf("trimmed header: %d bytes, the header %d", len(got), len(h))
	}
	for i := range h {
		if (h[i] == '\n') != (got[i] == '\n') {
			t.Fatalf("a line end moved at byte %d", i)
		}
	}
	for _, name := range []string{"__weave_enter_iex64", "__weave_leave_iex64", "__weave_enter_ptr_iex64", "__weave_no_frame", "__weave_pushed_x64"} {
		if !strings.Contains(got, "\n"+name+"(") {
			t.Errorf("%s blanked", name)
		}
	}
	for _, name := range []string{"__weave_enter_lex64", "__weave_enter_x64o", "__weave_enter_fsx64", "__weave_leave", "__weave_enter_ptr"} {
		if strings.Contains(got, "\n"+name+"(") {
			t.Errorf("%s kept", name)
		}
	}
	if !strings.Contains(got, "struct __weave_frame {") || !strings.Contains(got, "void __weave_register_known(") {
		t.Errorf("a declaration was blanked")
	}
	none := Trim(h, func(string) bool { return false })
	if strings.Contains(none, inlinePrefix) {
		t.Errorf("a unit that calls nothing keeps an inline definition")
	}
}
