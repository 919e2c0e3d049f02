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
