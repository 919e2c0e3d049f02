package weave

// code is the unit's text with what is not code blanked: comments
// (kept by the -E -C step in the program's own files), string and
// character literals, and directive lines (the -dD definitions of -g3,
// linemarkers naming files such as malloc.h). Every other byte is at its
// offset, newlines kept. The readers of a declaration's text for its
// attributes (leadingText, declText, skipReason) read this one: a
// comment saying "a malloc() equivalent" above a function declared
// alloc_size alone made it an allocator (libxml2 2.9's xmlMallocLoc,
// whose blocks lie behind a header: weave's totals lost a fifth of the
// bytes and 185 of 10 million frees). Computed once per unit, when first
// needed.
func (w *weaver) code() []byte {
	if w.codeText == nil {
		w.codeText = codeOnly(w.u.Text)
	}
	return w.codeText
}

// codeOnly returns a copy of preprocessed text with its comments,
// literals and directive lines turned to spaces (newlines kept).
func codeOnly(text []byte) []byte {
	out := make([]byte, len(text))
	copy(out, text)
	blankTo := func(i, j int) {
		for ; i < j; i++ {
			if out[i] != '\n' {
				out[i] = ' '
			}
		}
	}
	lineStart := true // no token yet on this line
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '\n':
			lineStart = true
			i++
			continue
		case c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r':
			i++
			continue
		case c == '#' && lineStart:
			j := i
			for j < len(text) && (text[j] != '\n' || j > 0 && text[j-1] == '\\') {
				j++
			}
			blankTo(i, j)
			i = j
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			j := i + 2
			for j+1 < len(text) && !(text[j] == '*' && text[j+1] == '/') {
				j++
			}
			j = min(j+2, len(text))
			blankTo(i, j)
			i = j
			continue // a comment is no token: a # after it is still a directive's
		case c == '/' && i+1 < len(text) && text[i+1] == '/':
			j := i
			for j < len(text) && (text[j] != '\n' || text[j-1] == '\\') {
				j++
			}
			blankTo(i, j)
			i = j
			continue
		case c == '"' || c == '\'' && !afterPPNumber(text[:i]):
			j := i + 1
			for j < len(text) && text[j] != c && text[j] != '\n' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(text))
			blankTo(i, j)
			i = j
		default:
			i++
		}
		lineStart = false
	}
	return out
}

// afterPPNumber reports whether a quote after before is a C23 digit
// separator (1'000): before ends in a preprocessing number.
func afterPPNumber(before []byte) bool {
	i := len(before)
	for i > 0 && (isIdentByte(before[i-1]) || before[i-1] == '.' || before[i-1] == '\'') {
		i--
	}
	return i < len(before) && (before[i] >= '0' && before[i] <= '9' || before[i] == '.')
}
