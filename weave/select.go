package weave

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Selection is the functions to frame: --exclude and --include take
// function name globs (path.Match syntax), --exclude-file file globs where
// ** crosses directories. An excluded function keeps its allocation advice
// but gets no frame: its calls are not counted, its time and allocations
// go to the innermost framed caller.
type Selection struct {
	Exclude, Include, ExcludeFiles []string
}

// CheckGlob reports a malformed glob of a --exclude, --include or
// --exclude-file flag.
func CheckGlob(flag, glob string) error {
	if glob == "" || strings.ContainsAny(glob, "\n\x00") {
		return fmt.Errorf("%s %q: empty or multi-line pattern", flag, glob)
	}
	if _, err := path.Match(glob, ""); err != nil {
		return fmt.Errorf("%s %q: %v", flag, glob, err)
	}
	return nil
}

// excluded reports whether a function is left without a frame by the
// selection.
func (s *Selection) excluded(name, file string) bool {
	if len(s.Include) > 0 && !matchAny(s.Include, name) {
		return true
	}
	if matchAny(s.Exclude, name) {
		return true
	}
	for _, g := range s.ExcludeFiles {
		if fileMatch(g, file) {
			return true
		}
	}
	return false
}

func matchAny(globs []string, name string) bool {
	for _, g := range globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// fileMatch reports whether glob matches file or a tail of it that starts
// after a '/' (third_party/** matches /src/proj/third_party/z/x.c).
func fileMatch(glob, file string) bool {
	re := globRegexp(glob)
	for {
		if re.MatchString(file) {
			return true
		}
		i := strings.IndexByte(file, '/')
		if i < 0 {
			return false
		}
		file = file[i+1:]
	}
}

var globCache = map[string]*regexp.Regexp{}

// globRegexp compiles a file glob: ** any text, **/ any directories or
// none, * any text without '/',
// ? one character but '/', [...] as in path.Match.
func globRegexp(glob string) *regexp.Regexp {
	if re, ok := globCache[glob]; ok {
		return re
	}
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; {
		case strings.HasPrefix(glob[i:], "**/"): // any directories, or none
			b.WriteString("(?:.*/)?")
			i += 2
		case c == '*' && i+1 < len(glob) && glob[i+1] == '*':
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			j := strings.IndexByte(glob[i:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := glob[i+1 : i+j]
			if strings.HasPrefix(class, "!") || strings.HasPrefix(class, "^") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		re = regexp.MustCompile("^" + regexp.QuoteMeta(glob) + "$")
	}
	globCache[glob] = re
	return re
}

// Pointcut is the text of the options that select what is woven and
// what is an allocation, for the profile's M pointcut record: flags as
// the user would write them, "" for the defaults.
func (o *Options) Pointcut() string {
	var parts []string
	for _, a := range o.Allocators {
		parts = append(parts, a.String())
	}
	for _, f := range []struct {
		flag  string
		globs []string
	}{{"--exclude", o.Select.Exclude}, {"--include", o.Select.Include}, {"--exclude-file", o.Select.ExcludeFiles}} {
		for _, g := range f.globs {
			parts = append(parts, f.flag+" '"+g+"'")
		}
	}
	return strings.Join(parts, " ")
}
