// Package parse runs the user's C preprocessor and parses its output with cc/v4.
package parse

import (
	"bytes"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"modernc.org/cc/v4"
)

// A Unit is one preprocessed, parsed translation unit.
type Unit struct {
	Name  string // the name used for the preprocessed text in positions
	Text  []byte // the preprocessed text (.i), linemarkers included
	AST   *cc.AST
	Lines *LineMap
}

// Preprocess runs compiler (argv, e.g. ["gcc"]) with -E and flags on file
// and returns the preprocessed text. The compiler's own diagnostics go to
// stderr unchanged.
func Preprocess(compiler, flags []string, file string, stderr *bytes.Buffer) ([]byte, error) {
	args := append(append(append([]string{}, compiler[1:]...), flags...), "-E", "-x", "c", file)
	cmd := exec.Command(compiler[0], args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%s -E %s: %v", strings.Join(compiler, " "), file, err)
	}
	return out.Bytes(), nil
}

var (
	configOnce sync.Once
	config     *cc.Config
	configErr  error
	predefined string
)

// reservedMacros keeps the predefined macros whose names are reserved
// (leading underscore), which cc.Builtin needs. The text is already
// preprocessed, so a macro such as `linux` or `unix` must not expand again
// (under -std=c99 gcc leaves identifiers of that name in the text).
func reservedMacros(defs string) string {
	var b strings.Builder
	for _, l := range strings.Split(defs, "\n") {
		if strings.HasPrefix(l, "#define _") {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// hostConfig returns the cc/v4 configuration, made once per process (it
// runs the host compiler). The preprocessed text needs only its builtins.
func hostConfig() (*cc.Config, error) {
	configOnce.Do(func() {
		config, configErr = cc.NewConfig("", "")
		if configErr == nil {
			predefined = reservedMacros(config.Predefined)
			config.UnsignedEnums = true
			config.IgnoreStaticAssert = true
			config.IgnoreNegativeShiftAmounts = true
		}
	})
	return config, configErr
}

// Parse parses preprocessed text. name is used for positions in errors,
// which are reported at the original file:line:col.
func Parse(name string, text []byte) (*Unit, error) {
	cfg, err := hostConfig()
	if err != nil {
		return nil, err
	}
	u := &Unit{Name: name, Text: text, Lines: NewLineMap(text)}
	ast, err := cc.Translate(cfg, []cc.Source{
		{Name: "<predefined>", Value: predefined},
		{Name: "<builtin>", Value: cc.Builtin},
		{Name: name, Value: parseable(text)},
	})
	if err != nil {
		return nil, u.remapError(err)
	}
	u.AST = ast
	return u, nil
}

var posPrefix = regexp.MustCompile(`^(.*?):(\d+):(\d+): ?`)

// remapError rewrites "name.i:LINE:COL: msg" lines of a cc/v4 error to the
// original file:line:col that the linemarkers name; it keeps the first line
// only, the one that matters (cc/v4 may go on with follow-on errors).
func (u *Unit) remapError(err error) error {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	var out []string
	for _, l := range lines {
		m := posPrefix.FindStringSubmatch(l)
		if m == nil || m[1] != u.Name {
			if m == nil {
				out = append(out, l)
			}
			continue
		}
		phys, _ := strconv.Atoi(m[2])
		loc := u.Lines.Lookup(phys)
		out = append(out, fmt.Sprintf("%s:%d:%s: error: %s", loc.File, loc.Line, m[3], l[len(m[0]):]))
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
	return u.Lines.Lookup(p.Line), p.Column
}

var (
	floatNNames = regexp.MustCompile(`\b_Float(32|64|32x|64x|128)\b`)
	float16     = regexp.MustCompile(`\b(_Float16|__bf16)\b`)
)

// parseable works around what cc/v4 cannot parse in compilers' headers,
// always with replacements of the same length, so every byte offset stays
// the same; the text is only parsed, never written, with them:
//   - _Float16 and __bf16 (gcc's x86 intrinsic headers) are not supported
//     on amd64: they become short, which is as good for weaving;
//   - where the _FloatN types are typedefs, as glibc declares them for
//     compilers that lack them (clang), cc/v4 still takes them for keywords:
//     they are renamed to identifiers.
func parseable(text []byte) []byte {
	if bytes.Contains(text, []byte("_Float16")) || bytes.Contains(text, []byte("__bf16")) {
		text = float16.ReplaceAllFunc(text, func(m []byte) []byte {
			return append([]byte("short"), bytes.Repeat([]byte(" "), len(m)-5)...)
		})
	}
	if !bytes.Contains(text, []byte("typedef float _Float32;")) {
		return text
	}
	return floatNNames.ReplaceAllFunc(text, func(m []byte) []byte {
		r := append([]byte("__wf"), m[6:]...) // "_Float" -> "__wf" + padding
		for len(r) < len(m) {
			r = append(r, '_')
		}
		return r
	})
}
