// Package glob matches source file paths against shell-style patterns in
// which ** crosses directories.
package glob

import (
	"regexp"
	"strings"
	"sync"
)

// File reports whether pattern matches file or a tail of it that starts
// after a '/' (third_party/** matches /src/proj/third_party/z/x.c).
func File(pattern, file string) bool {
	re := fileRegexp(pattern)
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

var (
	cacheMu   sync.Mutex
	globCache = map[string]*regexp.Regexp{}
)

// fileRegexp compiles a file glob: ** any text, **/ any directories or
// none, * any text without '/',
// ? one character but '/', [...] as in path.Match.
func fileRegexp(glob string) *regexp.Regexp {
	cacheMu.Lock()
	defer cacheMu.Unlock()
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
