package parse

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"strings"
	"sync"

	"modernc.org/cc/v4"

	"github.com/weave-profiler/weave/internal/cachedir"
)

// A Dialect is the C a translation unit is written in: the compiler that
// preprocesses it and the options of its command line that change the
// language (LanguageFlags). cc/v4 parses the unit in that dialect: in ISO
// C mode `asm` and `typeof` are identifiers, under -funsigned-char plain
// char is unsigned, and so on.
type Dialect struct {
	Compiler []string // the compiler's argv prefix, without launchers
	Flags    []string // the language options, in command-line order
}

// NewDialect returns the dialect of compiler run with flags (a compiler
// command line's options; those that do not change the language are
// dropped).
func NewDialect(compiler, flags []string) Dialect {
	return Dialect{Compiler: compiler, Flags: LanguageFlags(flags)}
}

// languageFlags are the options that change the language gcc or clang
// accepts or the predefined macros cc/v4 needs (__STDC_VERSION__,
// __CHAR_UNSIGNED__, __WCHAR_TYPE__, ...), with their "-fno-" forms.
var languageFlags = map[string]bool{
	"-ansi": true, "--ansi": true, "-undef": true, "-m32": true, "-m64": true, "-mx32": true,
	"-fasm": true, "-fgnu89-inline": true, "-fms-extensions": true, "-fplan9-extensions": true,
	"-funsigned-char": true, "-fsigned-char": true, "-fshort-enums": true, "-fshort-wchar": true,
	"-fsigned-wchar": true, "-ffreestanding": true, "-fhosted": true, "-fbuiltin": true,
	"-fdollars-in-identifiers": true, "-fextended-identifiers": true, "-fgnu-keywords": true,
	"-funsigned-bitfields": true, "-fsigned-bitfields": true, "-fcond-mismatch": true,
	"-fpermissive": true, "-flax-vector-conversions": true, "-fopenmp": true, "-fopenacc": true,
	"-fpack-struct": true, "-fms-compatibility": true, "-fdeclspec": true, "-fblocks": true,
	"-fgnu-inline-asm": true, "-fdouble-square-bracket-attributes": true, "-fborland-extensions": true,
	"-fchar8_t": true, "-fpascal-strings": true, "-fzvector": true, "-fms-volatile": true,
	// __PIC__ and __PIE__: the weaver's guard for an executable's code
	// (weave.guardVariant).
	"-fpic": true, "-fPIC": true, "-fpie": true, "-fPIE": true,
}

// languageFlagPrefixes are the options with a value (-std=c99) that
// change the language.
var languageFlagPrefixes = []string{
	"-std=", "--std=", "-fno-builtin-", "-fpack-struct=", "-fms-compatibility-version=",
	"-fgnuc-version=", "-fwchar-type=",
}

// LanguageFlags returns the options among flags (a compiler command line's
// options, without inputs) that change the language or the predefined
// macros cc/v4 needs.
func LanguageFlags(flags []string) []string {
	var r []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		switch {
		case f == "--std" && i+1 < len(flags): // --std c99
			r = append(r, "-std="+flags[i+1])
			i++
		case languageFlags[f] || strings.HasPrefix(f, "-fno-") && languageFlags["-f"+f[5:]]:
			r = append(r, f)
		default:
			for _, p := range languageFlagPrefixes {
				if strings.HasPrefix(f, p) {
					r = append(r, f)
					break
				}
			}
		}
	}
	return r
}

// A dialectState is what parsing in one dialect needs, made once per
// process.
type dialectState struct {
	once       sync.Once
	predefined string     // the compiler's reserved predefined macros in the dialect
	keywords   *cc.Config // cc.NewConfig's, for its keyword set; nil: the default one
	goarch     string     // for cc.NewABI
	signedChar bool
	err        error
	macros     predefinedMacros // for macrosFor
}

var dialects sync.Map // Dialect.key() -> *dialectState

func (d Dialect) key() string {
	return strings.Join(d.Compiler, "\x00") + "\x01" + strings.Join(d.Flags, "\x00")
}

// Prepare makes what parsing in the dialect needs (the compiler's
// predefined macros, from their cache or the compiler), as the first
// parse would: for a caller with a CPU to spare before it (weave cc,
// while the -E step runs).
func (d Dialect) Prepare() {
	d.state()
}

// state returns the dialect's state, made on first use.
func (d Dialect) state() (*dialectState, error) {
	v, _ := dialects.LoadOrStore(d.key(), &dialectState{})
	s := v.(*dialectState)
	s.once.Do(func() { s.make(d) })
	return s, s.err
}

func (s *dialectState) make(d Dialect) {
	if s.predefined, s.err = d.predefined(); s.err != nil {
		return
	}
	s.goarch = goruntime.GOARCH
	s.signedChar = !strings.Contains(s.predefined, "#define __CHAR_UNSIGNED__ ")
	std, noAsm, other := "", false, false
	clang := strings.Contains(s.predefined, "#define __clang__ ")
	gnuKeywords := 0 // clang's -f[no-]gnu-keywords: 1 on, -1 off (gcc ignores them in C)
	for _, f := range d.Flags {
		switch {
		case clang && (f == "-fgnu-keywords" || f == "-fno-gnu-keywords"):
			gnuKeywords = map[bool]int{true: 1, false: -1}[f == "-fgnu-keywords"]
		case f == "-ansi" || f == "--ansi":
			std = "c90"
		case strings.HasPrefix(f, "-std="), strings.HasPrefix(f, "--std="):
			std = f[strings.IndexByte(f, '=')+1:]
		case f == "-fno-asm" || f == "-fasm":
			noAsm = f == "-fno-asm"
		case f == "-ffreestanding" || f == "-fno-builtin":
			other = true
		case f == "-m32" || f == "-m64":
			if s.goarch == "amd64" || s.goarch == "386" {
				s.goarch = map[string]string{"-m32": "386", "-m64": "amd64"}[f]
			}
		}
	}
	switch gnuKeywords {
	case 1: // asm and typeof whatever the standard (in C89 too: an approximation)
		std, noAsm = "", false
	case -1:
		noAsm = true
	}
	// cc.NewConfig knows which keywords each dialect drops (gcc's
	// Alternate Keywords) or adds (C23), and keeps them in a field of
	// its Config that only it can set. It runs the host compiler twice,
	// so it is asked only when the keywords differ from the default ones.
	isoStd := std != "" && !strings.HasPrefix(std, "gnu")
	if !isoStd && !noAsm && !other && stdcVersion(s.predefined) < 202000 {
		return
	}
	var opts []string
	if std != "" {
		opts = append(opts, "-std="+std)
	}
	if noAsm {
		opts = append(opts, "-fno-asm")
	}
	for _, f := range d.Flags {
		if f == "-ffreestanding" || f == "-fno-builtin" {
			opts = append(opts, f)
		}
	}
	if cfg, err := cc.NewConfig(goruntime.GOOS, goruntime.GOARCH, opts...); err == nil {
		s.keywords = cfg
	}
}

// config returns a new cc/v4 configuration for parsing preprocessed text
// in the dialect: a fresh one per unit, as Translate may write to it and
// units are parsed concurrently.
func (s *dialectState) config() (*cc.Config, error) {
	abi, err := cc.NewABI(goruntime.GOOS, s.goarch)
	if err != nil {
		return nil, err
	}
	abi.SignedChar = s.signedChar
	cfg := &cc.Config{}
	if s.keywords != nil {
		*cfg = *s.keywords // the unexported keyword set and -ffreestanding come along
		cfg.CC, cfg.Predefined = "", ""
		cfg.IncludePaths, cfg.SysIncludePaths, cfg.HostIncludePaths, cfg.HostSysIncludePaths = nil, nil, nil, nil
	}
	cfg.ABI = abi
	cfg.UnsignedEnums = true
	cfg.IgnoreStaticAssert = true
	cfg.IgnoreNegativeShiftAmounts = true
	return cfg, nil
}

// stdcVersion returns the value of __STDC_VERSION__ in predefined, or 0.
func stdcVersion(predefined string) int64 {
	const prefix = "#define __STDC_VERSION__ "
	for _, l := range strings.Split(predefined, "\n") {
		if strings.HasPrefix(l, prefix) {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(l[len(prefix):]), "L"), 10, 64)
			return n
		}
	}
	return 0
}

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

// predefined returns the compiler's reserved predefined macros in the
// dialect, which cc.Builtin needs. Running the compiler for them costs
// more than parsing a small file, so they are cached on disk per compiler
// binary (path, size and modification time), command and language
// options; a stale or missing cache is remade.
func (d Dialect) predefined() (string, error) {
	compiler := d.Compiler
	if len(compiler) == 0 {
		compiler = []string{"cc"}
	}
	path, err := exec.LookPath(compiler[0])
	if err != nil {
		return "", fmt.Errorf("looking for the C compiler: %v", err)
	}
	var cache string
	if st, err := os.Stat(path); err == nil {
		if dir, err := cachedir.Dir(); err == nil {
			key := fmt.Sprintf("%s\x00%d\x00%d\x00%s", path, st.Size(), st.ModTime().UnixNano(), d.key())
			sum := sha256.Sum256([]byte(key))
			cache = filepath.Join(dir, "predefined-"+hex.EncodeToString(sum[:8])+".h")
			if b, err := os.ReadFile(cache); err == nil && cachedir.Trusted(cache) {
				return string(b), nil
			}
		}
	}
	args := append(append(append([]string{}, compiler[1:]...), d.Flags...), "-dM", "-E", "-")
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader("")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v", compiler[0], strings.Join(args, " "), err)
	}
	predefined := reservedMacros(string(out))
	if cache != "" {
		if f, err := os.CreateTemp(filepath.Dir(cache), ".predefined*"); err == nil {
			_, werr := f.WriteString(predefined)
			if cerr := f.Close(); werr != nil || cerr != nil || os.Rename(f.Name(), cache) != nil {
				os.Remove(f.Name())
			}
		}
	}
	return predefined, nil
}
