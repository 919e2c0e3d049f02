// Package parse runs the user's C preprocessor and parses its output with cc/v4.
package parse

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/cc/v4"
)

// A Unit is one preprocessed, parsed translation unit.
type Unit struct {
	Name  string // the name used for the preprocessed text in positions
	Text  []byte // the preprocessed text (.i), linemarkers included
	AST   *cc.AST
	Lines *LineMap
	// Pruned: cc/v4 was given the text with the headers' declarations
	// the unit does not use blanked (prune.go), and only the builtin
	// declarations it can reach (builtin.go).
	Pruned bool

	// sources are the names of the cc/v4 sources that hold the text, with
	// their byte offsets in it, when cc/v4 parsed it with its lines joined
	// (joinLines), in one source or in several (a speculative parse):
	// positions in them come from byte offsets, not cc/v4's line numbers.
	sources map[string]int
	// pruner is the pruned parse's (nil if cc/v4 was given the text
	// whole): CompilerText asks it again.
	pruner *pruner
	// squeezed maps the offsets of the pruned text cc/v4 was given, its
	// blank lines emptied (squeeze), to the text's.
	squeezed offsetMap
	// c23 are the unit's C23 attributes and static assertions
	// (AttributesBefore), found once.
	c23     []c23Span
	c23Once sync.Once
}

// Preprocess runs compiler (argv, e.g. ["gcc"]) with -E and flags on file
// and returns the preprocessed text. The compiler's own diagnostics go to
// stderr unchanged. It starts parsing the text as it comes (spec.go), for
// Parse to take over when given the text and NewDialect(compiler, flags).
func Preprocess(compiler, flags []string, file string, stderr *bytes.Buffer) ([]byte, error) {
	return preprocess(compiler, flags, file, stderr, false)
}

// PreprocessRespaced is Preprocess with the text respaced (Respace with
// os.ReadFile) as it comes, so that the parse started on it is the
// respaced text's (Respace after Preprocess makes another text, and Parse
// parses it again: sqlite3.c's speculative parse, 0.9 s of CPU, was lost).
func PreprocessRespaced(compiler, flags []string, file string, stderr *bytes.Buffer) ([]byte, error) {
	return preprocess(compiler, flags, file, stderr, true)
}

// preprocess is Preprocess, the text respaced if respace.
func preprocess(compiler, flags []string, file string, stderr *bytes.Buffer, respace bool) ([]byte, error) {
	paceGC()
	args := append(append(append([]string{}, compiler[1:]...), flags...), "-E", "-x", "c", file)
	cmd := exec.Command(compiler[0], args...)
	var out bytes.Buffer
	var spec *speculation
	d := NewDialect(compiler, flags)
	if st, err := d.state(); err == nil {
		spec = startSpeculation(st)
		if respace {
			spec.rs = newLineRespacer(nil)
		}
		cmd.Stdout = spec
	} else {
		cmd.Stdout = &out
	}
	cmd.Stderr = stderr
	if file == "-" {
		cmd.Stdin = os.Stdin
	}
	err := cmd.Run()
	text := out.Bytes()
	if spec != nil {
		text = spec.finish()
	}
	if err != nil {
		if spec != nil {
			spec.abandon()
		}
		return nil, fmt.Errorf("%s -E %s: %v", strings.Join(compiler, " "), file, err)
	}
	if spec != nil {
		setPending(spec, text, d)
	} else if respace {
		text = Respace(text, nil)
	}
	return text, nil
}

// Parse parses preprocessed text in dialect d. name is used for positions
// in errors, which are reported at the original file:line:col. Given the
// text the last Preprocess returned, it takes over the parse Preprocess
// started. A parse that does not finish within DefaultTimeout is given up
// (a *TimeoutError; see watchdog.go).
func Parse(name string, text []byte, d Dialect) (*Unit, error) {
	return ParseWithin(name, text, d, 0)
}

// ParseWithin is Parse with a time limit (<= 0: DefaultTimeout). keep
// names names whose declarations in system headers the AST must have even
// if the unit does not mention them (declared allocators): cc/v4 is given
// only the headers' declarations the unit needs (prune.go).
func ParseWithin(name string, text []byte, d Dialect, limit time.Duration, keep ...string) (*Unit, error) {
	return watch(name, text, limit, func() (*Unit, error) { return parseUnit(name, text, d, true, keep) })
}

// ParseAll is Parse but with every declaration of the system headers
// parsed (no pruning), for tests that compare the two.
func ParseAll(name string, text []byte, d Dialect) (*Unit, error) {
	return watch(name, text, 0, func() (*Unit, error) { return parseUnit(name, text, d, false, nil) })
}

// parseUnit is Parse's work; pruned: cc/v4 may be given the text pruned.
func parseUnit(name string, text []byte, d Dialect, pruned bool, keep []string) (*Unit, error) {
	st, err := d.state()
	if err != nil {
		return nil, err
	}
	u := &Unit{Name: name, Text: text}
	lines := make(chan *LineMap, 1)
	go func() { lines <- NewLineMap(text) }() // not needed before cc/v4 is done
	if spec := takePending(text, d); spec != nil {
		if u.AST, u.sources = spec.wait(text); u.AST != nil {
			u.Lines = <-lines
			return u, nil
		}
	}
	src := parseable(text)
	var ast *cc.AST
	if pruned {
		// On an error (or a panic), the text is parsed whole, for the
		// error a full parse gives.
		if p, pr := prune(src, keep); p != nil {
			sq, m := squeeze(p)
			if sq == nil {
				sq = p
			}
			if joined := joinLines(sq); joined != nil {
				ast = translateJoined(st, name, joined, builtinFor(pr.names))
				if u.Pruned = ast != nil; u.Pruned {
					u.pruner, u.squeezed = pr, m
				}
			}
		}
	}
	if ast == nil {
		if joined := joinLines(src); joined != nil {
			// On an error (or a panic), the text is parsed as it is, for
			// the message with the original lines (and in case joining
			// changed anything).
			ast = translateJoined(st, name, joined, cc.Builtin)
		}
	}
	if ast != nil {
		u.sources = map[string]int{name: 0}
	} else {
		ast, err = translate(st, name, src)
	}
	u.Lines = <-lines
	if err != nil {
		return nil, u.remapError(err)
	}
	u.AST = ast
	return u, nil
}

// translateJoined runs cc/v4 on text joined by joinLines with builtin
// for cc.Builtin; nil if it failed.
func translateJoined(st *dialectState, name string, joined []byte, builtin string) (ast *cc.AST) {
	defer func() {
		if recover() != nil {
			ast = nil
		}
	}()
	ast, err := translateWith(st, name, joined, builtin)
	if err != nil {
		return nil
	}
	return ast
}

// translate runs cc/v4 on the preprocessed text src.
func translate(st *dialectState, name string, src []byte) (*cc.AST, error) {
	return translateWith(st, name, src, cc.Builtin)
}

// translateWith is translate with builtin for cc.Builtin: if it is
// pruned (builtinFor), with the predefined macros it needs (macrosFor).
func translateWith(st *dialectState, name string, src []byte, builtin string) (*cc.AST, error) {
	cfg, err := st.config()
	if err != nil {
		return nil, err
	}
	predefined := st.predefined
	if builtin != cc.Builtin {
		predefined = st.macrosFor(builtin)
	}
	return cc.Translate(cfg, []cc.Source{
		{Name: "<predefined>", Value: predefined},
		{Name: "<builtin>", Value: builtin},
		{Name: name, Value: src},
	})
}

var posPrefix = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(.*?):(\d+):(\d+): ?`) })

// remapError rewrites "name.i:LINE:COL: msg" lines of a cc/v4 error to the
// original file:line:col that the linemarkers name; it keeps the first line
// only, the one that matters (cc/v4 may go on with follow-on errors).
func (u *Unit) remapError(err error) error {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	var out []string
	for _, l := range lines {
		m := posPrefix().FindStringSubmatch(l)
		if m == nil || m[1] != u.Name {
			if m == nil {
				out = append(out, l)
			}
			continue
		}
		phys, _ := strconv.Atoi(m[2])
		loc := u.Lines.Lookup(phys)
		out = append(out, fmt.Sprintf("%s:%d:%s: error: %s", loc.File, loc.Line, m[3], DisplayName(l[len(m[0]):])))
	}
	if len(out) == 0 {
		out = lines
	}
	if len(out) > 3 {
		out = out[:3]
	}
	return &Error{Msg: strings.Join(out, "\n")}
}

// Error is a parse error positioned in the original sources.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Location returns the original location of a token or node position in
// the preprocessed text, with the column of the preprocessed text (which
// gcc keeps aligned with the source for unexpanded lines).
func (u *Unit) Location(n cc.Node) (loc Location, col int) {
	p := n.Position()
	line, col := p.Line, p.Column
	if start, ok := u.sources[p.Filename]; ok {
		line, col = u.Lines.LineCol(start + u.squeezed.orig(p.Offset))
	}
	return u.Lines.Lookup(line), col
}

// Offset returns the byte offset in Text of a token or node position (for
// one outside the text, in cc/v4's builtin definitions, the offset cc/v4
// gives).
func (u *Unit) Offset(n cc.Node) int {
	p := n.Position()
	if start, ok := u.sources[p.Filename]; ok {
		return start + u.squeezed.orig(p.Offset)
	}
	return p.Offset
}

// parseable works around what cc/v4 cannot parse in compilers' headers,
// always with replacements of the same length, so every byte offset stays
// the same; the text is only parsed, never written, with them:
//   - _Float16 and __bf16 (gcc's x86 intrinsic headers) are not supported
//     on amd64: they become short, which is as good for weaving;
//   - where the _FloatN types are typedefs, as glibc declares them for
//     compilers that lack them (clang), cc/v4 still takes them for keywords:
//     they are renamed to identifiers;
//   - universal character names in identifiers become $uXXXX
//     (ucnIdentifiers);
//   - C23's attributes and message-less static assertions become blanks
//     (c23Syntax);
//   - #define, #undef and #include lines (-g3's and -dD's macros, -dI's
//     includes) become blanks (blankMacroLines);
//   - complex integer types cc/v4 does not know (_Complex unsigned char)
//     become ones of the same size it knows (complexIntegers).
func parseable(text []byte) []byte {
	text = complexIntegers(c23Syntax(ucnIdentifiers(blankMacroLines(text))))
	text = replaceWords(text, "_Float16", nil, func(w []byte) []byte {
		return append([]byte("short"), bytes.Repeat([]byte(" "), len(w)-5)...)
	})
	text = replaceWords(text, "__bf16", nil, func(w []byte) []byte {
		return append([]byte("short"), bytes.Repeat([]byte(" "), len(w)-5)...)
	})
	if !bytes.Contains(text, []byte("typedef float _Float32;")) {
		return text
	}
	floatN := map[string]bool{"32": true, "64": true, "32x": true, "64x": true, "128": true}
	return replaceWords(text, "_Float", floatN, func(w []byte) []byte {
		r := append([]byte("__wf"), w[6:]...) // "_Float" -> "__wf" + padding
		for len(r) < len(w) {
			r = append(r, '_')
		}
		return r
	})
}

// replaceWords returns text with every identifier that is prefix (if
// suffixes is nil) or prefix followed by one of suffixes replaced by
// repl(identifier), which has its length; text itself if there is none.
// (A regexp's ReplaceAllFunc, \bprefix(suffix|...)\b, took a tenth of
// weave's time on headers that mention the words in comments.)
func replaceWords(text []byte, prefix string, suffixes map[string]bool, repl func([]byte) []byte) []byte {
	out, copied := text, false
	for off := 0; ; {
		i := bytes.Index(text[off:], []byte(prefix))
		if i < 0 {
			return out
		}
		start := off + i
		end := start + len(prefix)
		for end < len(text) && isWordByte(text[end]) {
			end++
		}
		off = end
		if start > 0 && isWordByte(text[start-1]) {
			continue
		}
		if suffixes == nil && end != start+len(prefix) || suffixes != nil && !suffixes[string(text[start+len(prefix):end])] {
			continue
		}
		if !copied {
			out, copied = bytes.Clone(text), true
		}
		copy(out[start:end], repl(text[start:end]))
	}
}

// isWordByte reports whether c is a word byte of a regexp's \b: [0-9A-Za-z_].
func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}
