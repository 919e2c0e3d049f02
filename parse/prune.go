package parse

import (
	"bytes"
	"strings"
)

// Pruning.
//
// Most of a small unit's preprocessed text is headers, and most of what
// they declare the unit never uses (a 4-line program including stdio.h,
// stdlib.h and string.h: 2,284 lines, 3 of them its own). cc/v4 spends
// its time on every declaration it is given, so prune gives it only those
// the unit may use: it blanks the top-level declarations of headers
// (after a linemarker naming a file other than the main one) that declare
// no name the rest of the text mentions, transitively (a kept
// declaration's identifiers are needed too). Blanked bytes become spaces,
// newlines and directive lines stay, so every byte offset, line and
// column of what is kept is the same: weave edits the text as it is; only
// what cc/v4 parses is pruned.
//
// The names are compared as words, whatever their kind (a member, a label
// or a tag named like a typedef keeps the typedef): a name no kept token
// spells cannot change the parse of what is kept. What is not understood
// is kept: a declaration that declares nothing prune can name, one that
// is partly in the main file, one after a directive other than a
// linemarker, #pragma or #ident (prune returns nil then). Function
// definitions are kept in the program's own headers (weave weaves them),
// and those of external linkage in system headers (glibc's extern inline
// ones), for the unit's frame summary (weave.Summary) to name them as
// before.

// A pToken is one token of the text for prune: an identifier (id >= 0,
// its index in the names), a punctuator (id = -1, c its byte) or another
// token (id = -1, c = 0).
type pToken struct {
	start, end int32
	id         int32
	c          byte
	region     byte // regionMain, regionHeader, regionSystem
}

// Where a token is: in the main file (or <built-in>, <command-line>), in
// another file (a header of the program's), in a system header.
const (
	regionMain = iota
	regionHeader
	regionSystem
)

// A pDecl is a top-level declaration or function definition: its tokens
// toks[from:to].
type pDecl struct {
	from, to  int
	inHeaders bool // all in headers (system or not): may be blanked
	body      bool // a function definition
	ownHeader bool // partly in a header of the program's
	keep      bool // kept whatever it declares
	// names are what it declares (if in headers): declNames[names[0]:names[1]]
	names [2]int32
}

type pruner struct {
	text      []byte
	toks      []pToken
	names     map[string]int32
	words     []string // by id
	keep      []string // prune's keep
	decls     []pDecl
	declNames []int32
}

// prune returns text with the declarations of headers that the
// rest of it does not need blanked (see above), keep naming more names
// that are needed, and the pruner, whose names are the identifiers of the
// text (and which compilerBlanks asks again); nil if it does not follow
// the text. The text itself is returned if nothing is blanked.
func prune(text []byte, keep []string) ([]byte, *pruner) {
	p := &pruner{text: text, names: map[string]int32{}, keep: keep}
	if !p.tokenize() {
		return nil, nil
	}
	decls, ok := p.split()
	if !ok {
		return nil, nil
	}
	p.decls = decls
	c := p.newClosure()
	for i := range decls {
		d := &decls[i]
		if !d.inHeaders {
			c.keep(i)
			continue
		}
		if p.staticAssert(d) {
			continue // declares nothing, asserts what the compiler checked
		}
		start := len(p.declNames)
		p.declNames, d.keep = p.declares(p.toks[d.from:d.to], p.declNames)
		d.names = [2]int32{int32(start), int32(len(p.declNames))}
		if d.keep || len(p.declNames) == start || d.ownHeader && d.body {
			d.keep = true
			c.keep(i)
			continue
		}
		c.declare(i, p.declNames[start:])
	}
	c.run(keep)
	out := text
	for i, d := range decls {
		if c.kept[i] {
			continue
		}
		if &out[0] == &text[0] {
			out = bytes.Clone(text)
		}
		blankDecl(out, int(p.toks[d.from].start), int(p.toks[d.to-1].end))
	}
	return out, p
}

// A closure finds the declarations to keep: those kept whatever they
// declare, and, transitively, those declaring a name a kept one spells.
type closure struct {
	p         *pruner
	kept      []bool // by declaration
	needed    []bool // by name
	work      []int32
	declaring map[int32][]int // name -> the declarations that may go declaring it
}

func (p *pruner) newClosure() *closure {
	return &closure{p: p, kept: make([]bool, len(p.decls)), needed: make([]bool, len(p.words)), declaring: map[int32][]int{}}
}

func (c *closure) need(id int32) {
	if !c.needed[id] {
		c.needed[id] = true
		c.work = append(c.work, id)
	}
}

// keep keeps declaration i.
func (c *closure) keep(i int) {
	c.kept[i] = true
	d := &c.p.decls[i]
	for _, t := range c.p.toks[d.from:d.to] {
		if t.id >= 0 {
			c.need(t.id)
		}
	}
}

// declare records that declaration i, which may go, declares names.
func (c *closure) declare(i int, names []int32) {
	for _, id := range names {
		c.declaring[id] = append(c.declaring[id], i)
	}
}

// needWords needs the identifiers of text (C code) that name
// declarations.
func (c *closure) needWords(text string) {
	for i := 0; i < len(text); {
		if !isIdentStart(text[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(text) && isIdentPart(text[j]) {
			j++
		}
		if id, ok := c.p.names[text[i:j]]; ok {
			c.need(id)
		}
		i = j
	}
}

// run keeps the declarations of the needed names, words' too.
func (c *closure) run(words []string) {
	for _, w := range words {
		if id, ok := c.p.names[w]; ok {
			c.need(id)
		}
	}
	for len(c.work) > 0 {
		id := c.work[len(c.work)-1]
		c.work = c.work[:len(c.work)-1]
		for _, i := range c.declaring[id] {
			if !c.kept[i] {
				c.keep(i)
			}
		}
	}
}

// blankDecl replaces out[from:to] by spaces but for newlines and directive
// lines.
func blankDecl(out []byte, from, to int) {
	lineStart := false
	for i := from; i < to; i++ {
		c := out[i]
		if c == '\n' {
			lineStart = true
			continue
		}
		if lineStart && c != ' ' && c != '\t' {
			lineStart = false
			if c == '#' {
				for i < to && out[i] != '\n' {
					i++
				}
				i--
				continue
			}
		}
		out[i] = ' '
	}
}

// tokenize splits the text into p.toks; false if it has what prune does
// not follow (a line splice, a carriage return, a directive other than a
// linemarker, #pragma or #ident).
func (p *pruner) tokenize() bool {
	text := p.text
	if len(text) == 0 {
		return false
	}
	region := byte(regionMain)
	main := "" // the name of the main file: the first linemarker's
	lineStart := true
	p.toks = make([]pToken, 0, len(text)/5)
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\f' || c == '\v':
			i++
			continue
		case c == '\r' || c == '\\':
			return false
		case c == '#' && lineStart:
			end := bytes.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text)
			} else {
				end += i
			}
			mk, marker, ok := directive(text[i:end])
			if !ok {
				return false
			}
			if marker {
				name := mk.file
				if main == "" {
					main = name
				}
				switch {
				case mk.system:
					region = regionSystem
				case name == main || strings.HasPrefix(name, "<"):
					region = regionMain
				default:
					region = regionHeader
				}
			}
			i = end
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			k := bytes.Index(text[i+2:], []byte("*/"))
			if k < 0 {
				return false
			}
			i += 2 + k + 2
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			k := bytes.IndexByte(text[i:], '\n')
			if k < 0 {
				k = len(text) - i
			}
			i += k
			continue
		}
		lineStart = false
		t := pToken{start: int32(i), id: -1, region: region}
		switch {
		case isIdentStart(c):
			j := i + 1
			for j < len(text) && isIdentPart(text[j]) {
				j++
			}
			if j < len(text) && (text[j] == '"' || text[j] == '\'') && isStringPrefix(text[i:j]) {
				j, ok := skipQuoted(text, j)
				if !ok {
					return false
				}
				i = j
				break
			}
			t.id = p.intern(text[i:j])
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(text) && text[i+1] >= '0' && text[i+1] <= '9':
			j := i + 1
			for j < len(text) && (isIdentPart(text[j]) || text[j] == '.' ||
				(text[j] == '+' || text[j] == '-') && (text[j-1]|0x20 == 'e' || text[j-1]|0x20 == 'p')) {
				j++
			}
			i = j
		case c == '"' || c == '\'':
			j, ok := skipQuoted(text, i)
			if !ok {
				return false
			}
			i = j
		default:
			t.c = c
			i++
		}
		t.end = int32(i)
		p.toks = append(p.toks, t)
	}
	return true
}

// skipQuoted returns the offset after the string or character literal at
// text[i]; false if it is not closed on its line.
func skipQuoted(text []byte, i int) (int, bool) {
	q := text[i]
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case '\n':
			return 0, false
		case q:
			return j + 1, true
		}
	}
	return 0, false
}

func isStringPrefix(w []byte) bool {
	switch string(w) {
	case "L", "u", "U", "u8":
		return true
	}
	return false
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '$' || c >= 0x80
}

func isIdentPart(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// directive classifies a directive line (from its '#'): a linemarker
// (marker, its mark from parseMarker, as the line map reads it), or
// #pragma or #ident (ok), or another (not ok).
func directive(line []byte) (mk mark, marker, ok bool) {
	rest := bytes.TrimLeft(line[1:], " \t")
	if len(rest) > 0 && rest[0] >= '0' && rest[0] <= '9' {
		mk, ok = parseMarker(line)
		return mk, true, ok && mk.file != "\x00" // a marker without a file name: not gcc's
	}
	if bytes.HasPrefix(rest, []byte("pragma")) || bytes.HasPrefix(rest, []byte("ident")) || len(rest) == 0 {
		return mark{}, false, true
	}
	return mark{}, false, false
}

// systemShare returns the share of text's bytes in system headers'
// regions (after a linemarker with flag 3).
func systemShare(text []byte) float64 {
	system, n := false, 0
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n') + 1
		if end == 0 {
			end = len(text) - off
		}
		line := text[off : off+end]
		if len(line) > 1 && line[0] == '#' {
			if mk, marker, _ := directive(line); marker {
				system = mk.system
			}
		} else if system {
			n += len(line)
		}
		off += end
	}
	return float64(n) / float64(max(len(text), 1))
}

func (p *pruner) intern(w []byte) int32 {
	if id, ok := p.names[string(w)]; ok {
		return id
	}
	id := int32(len(p.words))
	s := string(w)
	p.names[s] = id
	p.words = append(p.words, s)
	return id
}

// word returns the identifier of token t, or "".
func (p *pruner) word(t pToken) string {
	if t.id < 0 {
		return ""
	}
	return p.words[t.id]
}

// split splits the tokens into top-level declarations: each ends at a ';'
// outside brackets, or at the '}' of a function body (a '{' outside
// brackets that is no struct, union or enum body nor initializer). false
// if the brackets do not balance.
func (p *pruner) split() ([]pDecl, bool) {
	var decls []pDecl
	depth, from := 0, 0
	body := false    // the declaration has a function body
	initial := false // it has an initializer
	tag := 0         // 1: after struct, union or enum; 2: after its tag
	for i, t := range p.toks {
		lvl := depth // the depth of t itself
		switch t.c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			lvl = depth
		}
		if depth < 0 {
			return nil, false
		}
		if lvl != 0 {
			continue
		}
		switch w := p.word(t); {
		case t.c == '{':
			body = body || tag == 0 && !initial
			tag = 0
		case isTagKeyword(w):
			tag = 1
		case tag > 0 && (isAttribute(w) || t.c == '(' || t.c == ')'): // attributes of the tag
		case tag == 1 && t.id >= 0:
			tag = 2
		case t.c == '=':
			initial, tag = true, 0
		default:
			tag = 0
		}
		if t.c == ';' || t.c == '}' && body {
			decls = append(decls, p.decl(from, i+1, body))
			from, body, initial, tag = i+1, false, false, 0
		}
	}
	if depth != 0 {
		return nil, false
	}
	if from < len(p.toks) {
		decls = append(decls, p.decl(from, len(p.toks), false))
	}
	return decls, true
}

// isAttribute reports whether w starts an attribute with a parenthesised
// operand.
func isAttribute(w string) bool {
	return w == "__attribute__" || w == "__attribute" || w == "__declspec" || w == "_Alignas" || w == "alignas"
}

func isTagKeyword(w string) bool { return w == "struct" || w == "union" || w == "enum" }

// decl returns the declaration of toks[from:to].
func (p *pruner) decl(from, to int, body bool) pDecl {
	d := pDecl{from: from, to: to, inHeaders: true, body: body}
	for _, t := range p.toks[from:to] {
		switch {
		case t.region == regionMain:
			d.inHeaders = false
		case t.region == regionHeader:
			d.ownHeader = true
		}
	}
	return d
}

// staticAssert reports whether d is a _Static_assert: it declares nothing
// and asserts what the compiler checked.
func (p *pruner) staticAssert(d *pDecl) bool {
	w := p.word(p.toks[d.from])
	return w == "_Static_assert" || w == "static_assert"
}

// Keywords in declaration specifiers.
var (
	typeKeywords = map[string]bool{
		"void": true, "char": true, "short": true, "int": true, "long": true, "float": true, "double": true,
		"signed": true, "__signed": true, "__signed__": true, "unsigned": true, "_Bool": true, "bool": true,
		"_Complex": true, "__complex__": true, "__complex": true, "_Imaginary": true, "__int128": true,
		"__float128": true, "__float80": true, "__ibm128": true, "__bf16": true, "_Float16": true,
		"_Float32": true, "_Float64": true, "_Float128": true, "_Float32x": true, "_Float64x": true, "_Float128x": true,
		"_Decimal32": true, "_Decimal64": true, "_Decimal128": true, "__auto_type": true,
	}
	otherKeywords = map[string]bool{
		"const": true, "__const": true, "__const__": true, "volatile": true, "__volatile": true, "__volatile__": true,
		"restrict": true, "__restrict": true, "__restrict__": true, "_Atomic": true,
		"static": true, "extern": true, "typedef": true, "auto": true, "register": true, "constexpr": true,
		"inline": true, "__inline": true, "__inline__": true, "_Noreturn": true, "__extension__": true,
		"_Thread_local": true, "thread_local": true, "__thread": true,
	}
	// parenKeywords take a parenthesised operand that is skipped.
	parenKeywords = map[string]bool{
		"__attribute__": true, "__attribute": true, "__declspec": true, "_Alignas": true, "alignas": true,
		"__asm__": true, "__asm": true, "asm": true,
	}
	typeofKeywords = map[string]bool{"typeof": true, "__typeof__": true, "__typeof": true, "typeof_unqual": true, "__typeof_unqual__": true}
)

// declares appends to names the names a declaration declares (tags,
// enumerators, typedefs, variables, functions) and reports whether it must
// be kept whatever it declares (a function definition of external linkage,
// a top-level asm, one it does not follow).
func (p *pruner) declares(toks []pToken, names []int32) ([]int32, bool) {
	// Tags and enumerators, wherever they are: a tag named in a
	// declaration may declare it at file scope.
	for i, t := range toks {
		w := p.word(t)
		if !isTagKeyword(w) {
			continue
		}
		j := p.skipAttributes(toks, i+1)
		if j < len(toks) && toks[j].id >= 0 {
			names = append(names, toks[j].id)
			j++
		}
		if w == "enum" && j < len(toks) && toks[j].c == '{' {
			names = p.enumerators(toks, j, names)
		}
	}
	// Declaration specifiers.
	i, typed, static := 0, false, false
	for i < len(toks) {
		if j, ok := p.typeSpecifier(toks, i); ok {
			typed, i = true, j
			continue
		}
		t := toks[i]
		w := p.word(t)
		switch {
		case t.id < 0:
			if t.c == ';' && i == len(toks)-1 { // no declarators
				return names, false
			}
			goto declarators
		case parenKeywords[w]:
			if !isAttribute(w) {
				return names, true // top-level asm
			}
			i = skipParens(toks, i+1)
			continue
		case w == "static":
			static = true
		case otherKeywords[w]:
			if w == "_Atomic" && i+1 < len(toks) && toks[i+1].c == '(' {
				typed = true
				i = skipParens(toks, i+1)
				continue
			}
		case !typed: // a typedef name
			typed = true
		default:
			goto declarators
		}
		i++
	}
	return names, true
declarators:
	if !typed {
		return names, true // implicit int: not followed
	}
	for i < len(toks) {
		// One declarator: its name is its first identifier.
		named := false
	declarator:
		for i < len(toks) {
			t := toks[i]
			w := p.word(t)
			switch {
			case t.c == ',' || t.c == ';' || t.c == '=' || t.c == '{':
				break declarator
			case parenKeywords[w] || typeofKeywords[w]:
				i = skipParens(toks, i+1)
			case t.id >= 0 && !named && !otherKeywords[w] && !typeKeywords[w]:
				names = append(names, t.id)
				named = true
				i++
			case named && (t.c == '(' || t.c == '['):
				i = skipParens(toks, i)
			default:
				i++
			}
		}
		if !named {
			return names, true
		}
		if i >= len(toks) {
			return names, true
		}
		switch toks[i].c {
		case '{': // a function definition
			return names, !static
		case '=':
			for i < len(toks) && toks[i].c != ',' && toks[i].c != ';' {
				if c := toks[i].c; c == '(' || c == '[' || c == '{' {
					i = skipParens(toks, i)
					continue
				}
				i++
			}
		}
		if i >= len(toks) {
			return names, true
		}
		if toks[i].c == ';' {
			return names, i != len(toks)-1
		}
		i++ // ','
	}
	return names, true
}

// enumerators appends the enumerators of the enum body at toks[open] ('{').
func (p *pruner) enumerators(toks []pToken, open int, names []int32) []int32 {
	expect := true
	for i := open + 1; i < len(toks); {
		t := toks[i]
		switch {
		case t.c == '}':
			return names
		case t.c == ',':
			expect = true
		case expect && t.id >= 0:
			names = append(names, t.id)
			expect = false
		case t.c == '(' || t.c == '[' || t.c == '{':
			i = skipParens(toks, i)
			continue
		}
		i++
	}
	return names
}

// typeSpecifier returns the index after the type specifier at toks[i] (a
// type keyword, typeof's, a struct, union or enum type) and true; i and
// false if there is none.
func (p *pruner) typeSpecifier(toks []pToken, i int) (int, bool) {
	switch w := p.word(toks[i]); {
	case typeKeywords[w]:
		return i + 1, true
	case typeofKeywords[w]:
		return skipParens(toks, i+1), true
	case isTagKeyword(w):
		return p.skipTag(toks, i+1), true
	}
	return i, false
}

// skipTag returns the index after the attributes, tag and body of a
// struct, union or enum type whose keyword is before toks[i].
func (p *pruner) skipTag(toks []pToken, i int) int {
	i = p.skipAttributes(toks, i)
	if i < len(toks) && toks[i].id >= 0 {
		i++
	}
	if i < len(toks) && toks[i].c == '{' {
		i = skipParens(toks, i)
	}
	return i
}

// skipAttributes returns the index after the attributes at toks[i:].
func (p *pruner) skipAttributes(toks []pToken, i int) int {
	for i < len(toks) {
		if !isAttribute(p.word(toks[i])) {
			return i
		}
		i = skipParens(toks, i+1)
	}
	return i
}

// skipParens returns the index after the bracketed tokens that start at
// toks[i], or i if toks[i] opens none.
func skipParens(toks []pToken, i int) int {
	if i >= len(toks) || toks[i].c != '(' && toks[i].c != '[' && toks[i].c != '{' {
		return i
	}
	depth := 0
	for ; i < len(toks); i++ {
		switch toks[i].c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return i
}
