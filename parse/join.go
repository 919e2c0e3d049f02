package parse

import "bytes"

// joinedLineBytes is about how long the lines joinLines makes are.
const joinedLineBytes = 8192

// joinLines returns a copy of preprocessed text for cc/v4 to parse, of the
// same length and with every token at the same byte offset, in which the
// GNU linemarkers are blanked and most newlines are spaces, so that the
// text has about one line per joinedLineBytes. cc/v4 spends much of its
// time and memory per line (each is a token slice kept until the end of the
// translation), and in C the line breaks of preprocessed text matter only
// to directives, which keep theirs, and to // comments, which keep the
// newline that ends them.
//
// Only the byte offsets of the text keep their meaning: positions in it are
// taken from offsets (Unit.Location), not from cc/v4's line numbers.
//
// It returns nil, and the text is parsed as it is, if a line break might
// matter in a way it does not follow: a line splice, a carriage return, a
// string or character literal not closed on its line, a directive other
// than a linemarker, #pragma or #ident (#line, #define, ... see cc/v4's line
// numbers), or a comment around a directive.
func joinLines(text []byte) []byte {
	out := make([]byte, len(text))
	copy(out, text)
	if ok, _ := join(out); !ok {
		return nil
	}
	return out
}

// join joins the lines of text in place, as joinLines describes, but for
// the newline that ends it, and reports whether it could, and whether text
// ends inside a /* comment.
func join(out []byte) (ok, open bool) {
	if bytes.IndexByte(out, '\r') >= 0 {
		return false, false
	}
	lastKept := 0        // offset of the last newline kept
	pending := -1        // the newline before the current line, not yet decided
	keepPending := false // it ends a // comment or a directive
	inComment := false   // the current line starts inside a /* comment
	for off := 0; off < len(out); {
		end := bytes.IndexByte(out[off:], '\n')
		if end < 0 {
			end = len(out)
		} else {
			end += off
		}
		line := out[off:end]
		if len(line) > 0 && line[len(line)-1] == '\\' {
			return false, false
		}
		var directive, lineComment bool
		switch kind := lineKind(line, inComment); kind {
		case textLine:
			var ok bool
			if ok, inComment, lineComment = scanLine(line, inComment); !ok {
				return false, false
			}
		case markerLine, keptDirective:
			ok, open, _ := scanLine(line, false)
			if !ok || open {
				return false, false
			}
			if kind == markerLine {
				for i := range line {
					line[i] = ' '
				}
			} else {
				directive = true
			}
		default:
			return false, false
		}
		if pending >= 0 {
			if keepPending || directive || pending-lastKept >= joinedLineBytes {
				lastKept = pending
			} else {
				out[pending] = ' '
			}
		}
		pending, keepPending = -1, directive || lineComment
		if end < len(out) {
			pending = end
		}
		off = end + 1
	}
	return true, inComment
}

const (
	textLine = iota
	markerLine
	keptDirective
	otherDirective
)

// lineKind classifies a line: text, a GNU linemarker (`# 12 "file.c" 1`), a
// directive that keeps its own line (#pragma, #ident) or another directive.
// A line that starts inside a comment is text, but one whose first token
// after that comment is # is another directive (it is none in C, but its
// meaning should not depend on that).
func lineKind(line []byte, inComment bool) int {
	i := 0
	commented := inComment // a comment comes before the first token
	if inComment {
		k := bytes.Index(line, []byte("*/"))
		if k < 0 {
			return textLine
		}
		i = k + 2
	}
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if !bytes.HasPrefix(line[i:], []byte("/*")) {
			break
		}
		k := bytes.Index(line[i+2:], []byte("*/"))
		if k < 0 {
			return textLine
		}
		i += 2 + k + 2
		commented = true
	}
	switch {
	case i == len(line):
		return textLine
	case line[i] == '%' && i+1 < len(line) && line[i+1] == ':': // digraph #
		return otherDirective
	case line[i] != '#':
		return textLine
	case commented:
		return otherDirective
	}
	i++
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	if i < len(line) && line[i] >= '0' && line[i] <= '9' {
		return markerLine
	}
	j := i
	for j < len(line) && line[j] >= 'a' && line[j] <= 'z' {
		j++
	}
	switch string(line[i:j]) {
	case "pragma", "ident":
		return keptDirective
	}
	return otherDirective
}

// scanLine scans a line that starts inside a /* comment or not for
// literals and comments. ok is false if a literal is not closed on the
// line; open reports that the line ends inside a /* comment, lineComment
// that it ends with a // comment.
func scanLine(line []byte, inComment bool) (ok, open, lineComment bool) {
	i := 0
	if inComment {
		k := bytes.Index(line, []byte("*/"))
		if k < 0 {
			return true, true, false
		}
		i = k + 2
	}
	for ; i < len(line); i++ {
		switch c := line[i]; c {
		case '"', '\'':
			for i++; i < len(line) && line[i] != c; i++ {
				if line[i] == '\\' {
					i++
				}
			}
			if i >= len(line) {
				return false, false, false
			}
		case '/':
			if i+1 < len(line) {
				switch line[i+1] {
				case '/':
					return true, false, true
				case '*':
					k := bytes.Index(line[i+2:], []byte("*/"))
					if k < 0 {
						return true, true, false
					}
					i += 2 + k + 1
				}
			}
		}
	}
	return true, false, false
}

// blankMacroLines returns text with its #define, #undef, #include,
// #include_next and #import lines blanked (but for their newlines), or
// text itself if it has none. The preprocessor writes them into its output
// under -g3 and -dD (the macros, which the compiler reads from the woven
// text for the debug information), -dN, -dU and -dI; the rest of the text
// is their expansion already: expanded again, a macro that names itself
// (`#define fw u.fw`) or includes read again would change the unit cc/v4
// parses. A text where a line's state is not sure (a line splice, a
// literal not closed on its line, a directive behind a comment) is left
// as it is.
func blankMacroLines(text []byte) []byte {
	if !bytes.Contains(text, []byte("#define")) && !bytes.Contains(text, []byte("#undef")) &&
		!bytes.Contains(text, []byte("#include")) && !bytes.Contains(text, []byte("#import")) {
		return text
	}
	var out []byte
	inComment := false
	for off := 0; off < len(text); {
		end := bytes.IndexByte(text[off:], '\n')
		if end < 0 {
			end = len(text)
		} else {
			end += off
		}
		line := text[off:end]
		if len(line) > 0 && line[len(line)-1] == '\\' {
			return text
		}
		if !inComment && lineKind(line, false) == otherDirective && macroDirective(line) {
			ok, open, _ := scanLine(line, false)
			if !ok {
				return text
			}
			if out == nil {
				out = append([]byte(nil), text...)
			}
			for {
				for i := off; i < end; i++ {
					if out[i] != '\n' {
						out[i] = ' '
					}
				}
				if !open {
					break
				}
				// A comment the directive opened (-CC keeps those of
				// #define lines) goes on: so does the directive, to the
				// end of the line the comment closes on.
				if end >= len(text) {
					return text
				}
				off = end + 1
				if end = bytes.IndexByte(text[off:], '\n'); end < 0 {
					end = len(text)
				} else {
					end += off
				}
				if line = text[off:end]; len(line) > 0 && line[len(line)-1] == '\\' {
					return text
				}
				if ok, open, _ = scanLine(line, true); !ok {
					return text
				}
			}
		} else {
			ok, open, _ := scanLine(line, inComment)
			if !ok {
				return text
			}
			inComment = open
		}
		off = end + 1
	}
	if out == nil {
		return text
	}
	return out
}

// macroDirective reports whether line (a directive, as lineKind found it,
// with no comment before its #) is #define, #undef or an include.
func macroDirective(line []byte) bool {
	rest := bytes.TrimLeft(line, " \t")
	if len(rest) == 0 || rest[0] != '#' {
		return false
	}
	rest = bytes.TrimLeft(rest[1:], " \t")
	i := 0
	for i < len(rest) && (rest[i] >= 'a' && rest[i] <= 'z' || rest[i] == '_') {
		i++
	}
	switch string(rest[:i]) {
	case "define", "undef", "include", "include_next", "import":
		return true
	}
	return false
}
