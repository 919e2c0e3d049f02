package parse

import "bytes"

// Pruning for the compiler.
//
// The compiler spends on every declaration of the text too: gcc -O2 on a
// small program's woven text (stdio, stdlib, string) runs 12% fewer
// instructions without the system headers' declarations the unit does
// not use, and writes the same object. CompilerText blanks those, as
// prune does for cc/v4, but only what cannot change the object or a
// diagnostic: declarations wholly in system headers (whose warnings gcc
// does not print) that reserve no storage and emit nothing (typedefs,
// tags, extern declarations and prototypes, no initializer), without an
// asm label (gcc calls a builtin it synthesises, memcpy for a structure
// copy, by its declaration's label) or an attribute that emits or
// renames a symbol; static assertions stay. A name the woven code adds
// keeps its declarations, as a name of the unit's does.

// CompilerText returns u.Text with the system headers' declarations the
// compiler need not see blanked (see above); inserted are the texts the
// weave adds to it, and busy reports whether an edit of the weave changes
// bytes in [start, end) (such a declaration is kept). u.Text itself if
// the parse was not pruned or nothing is blanked.
func (u *Unit) CompilerText(inserted []string, busy func(start, end int) bool) []byte {
	p := u.pruner
	if p == nil || bytes.Contains(u.Text, []byte("redefine_extname")) || bytes.Contains(u.Text, []byte("pragma weak")) {
		return u.Text
	}
	c := p.newClosure()
	may := make([]bool, len(p.decls))
	kept := make([]bool, len(p.words))
	for w := range compilerKeeps {
		if id, ok := p.names[w]; ok {
			kept[id] = true
		}
	}
	for i := range p.decls {
		if d := &p.decls[i]; !d.keep && p.compilerMayBlank(d, kept) {
			may[i] = true
			c.declare(i, p.declNames[d.names[0]:d.names[1]])
			continue
		}
		c.keep(i)
	}
	for _, s := range inserted {
		c.needWords(s)
	}
	c.run(p.keep)
	out := u.Text
	for i, d := range p.decls {
		if !may[i] || c.kept[i] {
			continue
		}
		from, to := int(p.toks[d.from].start), int(p.toks[d.to-1].end)
		if busy(from, to) {
			continue
		}
		if &out[0] == &u.Text[0] {
			out = bytes.Clone(u.Text)
		}
		blankDecl(out, from, to)
	}
	return out
}

// compilerMayBlank reports whether d may be blanked for the compiler if
// nothing needs it: in system headers only, no function body, no static
// assertion, no storage, no asm label nor attribute that emits or names
// a symbol. kept marks the ids of compilerKeeps' words.
func (p *pruner) compilerMayBlank(d *pDecl, kept []bool) bool {
	if !d.inHeaders || d.ownHeader || d.body || p.staticAssert(d) {
		return false
	}
	toks := p.toks[d.from:d.to]
	typedef, extern := false, false
	for _, t := range toks {
		if t.region != regionSystem || t.c == '=' || t.id >= 0 && kept[t.id] {
			return false
		}
		switch p.word(t) {
		case "typedef":
			typedef = true
		case "extern":
			extern = true
		}
	}
	return typedef || extern || p.prototypeOrTag(toks)
}

// compilerKeeps are the words that keep a declaration for the compiler:
// asm labels, and attributes that define, emit, rename or keep a symbol.
var compilerKeeps = map[string]bool{
	"asm": true, "__asm": true, "__asm__": true,
	"alias": true, "__alias__": true, "weakref": true, "__weakref__": true, "weak": true, "__weak__": true,
	"used": true, "__used__": true, "retain": true, "__retain__": true, "section": true, "__section__": true,
	"constructor": true, "__constructor__": true, "destructor": true, "__destructor__": true,
	"ifunc": true, "__ifunc__": true, "symver": true, "__symver__": true, "common": true, "__common__": true,
}

// prototypeOrTag reports whether the tokens of a declaration (no typedef,
// no extern, no initializer) declare one function, or only a tag: the
// only ones of them that reserve no storage (a declarator that is no
// function's, `int x;`, is a tentative definition).
func (p *pruner) prototypeOrTag(toks []pToken) bool {
	typed := false
	for i := 0; i < len(toks); {
		if j, ok := p.typeSpecifier(toks, i); ok {
			typed, i = true, j
			continue
		}
		t := toks[i]
		w := p.word(t)
		switch {
		case t.c == ';' && i == len(toks)-1:
			return true // specifiers only: a tag
		case parenKeywords[w]:
			i = skipParens(toks, i+1)
			continue
		case otherKeywords[w]:
		case t.id >= 0 && !typed: // a typedef name
			typed = true
		case t.id >= 0:
			// The declarator's name: followed by its parameter list,
			// then only attributes, it declares a function.
			if i+1 < len(toks) && toks[i+1].c == '(' {
				j := p.skipAttributes(toks, skipParens(toks, i+1))
				return j == len(toks)-1 && toks[j].c == ';'
			}
			return false
		case t.c != '*' || !typed:
			return false // an abstract or parenthesised declarator...
		}
		i++
	}
	return false
}
