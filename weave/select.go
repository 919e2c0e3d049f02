package weave

import (
	"fmt"
	"path"
	"strings"

	"github.com/weave-profiler/weave/internal/glob"
)

// Selection is the functions to frame: --exclude and --include take
// function name globs (path.Match syntax), --exclude-file file globs
// (glob.File). An excluded function keeps its allocation advice
// but gets no frame: its calls are not counted, its time and allocations
// go to the innermost framed caller. --frame (Frame) keeps a frame at
// the entry of the functions it matches that --frames auto or unit would
// leave without one (a leaf to trace or time); an excluded function
// stays excluded.
type Selection struct {
	Exclude, Include, ExcludeFiles, Frame []string
}

// CheckGlob reports a malformed glob of a --exclude, --include,
// --exclude-file or --frame flag.
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
		if glob.File(g, file) {
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

// unmatched returns the pointcut patterns that match nothing in a woven
// unit (by their Pointcut text): a function glob no function defined in
// the user's files matches, a file glob none of their files matches, a
// declared allocator the unit does not declare (declared: the functions
// it does).
func (o *Options) unmatched(res *Result, declared map[string]bool) []string {
	var out []string
	last := map[string]Allocator{} // a later declaration of a name wins
	var names []string
	for _, a := range o.Allocators {
		if _, ok := last[a.Name]; !ok {
			names = append(names, a.Name)
		}
		last[a.Name] = a
	}
	for _, n := range names {
		if !declared[n] {
			out = append(out, last[n].String())
		}
	}
	for _, f := range o.Select.flags() {
		for _, g := range f.globs {
			hit := false
			for _, fn := range res.Functions {
				if f.flag == "--exclude-file" && glob.File(g, fn.File) || f.flag != "--exclude-file" && matchAny([]string{g}, fn.Name) {
					hit = true
					break
				}
			}
			if !hit {
				out = append(out, f.flag+" '"+g+"'")
			}
		}
	}
	return out
}

type selectFlag struct {
	flag  string
	globs []string
}

func (s *Selection) flags() []selectFlag {
	return []selectFlag{{"--exclude", s.Exclude}, {"--include", s.Include}, {"--exclude-file", s.ExcludeFiles}, {"--frame", s.Frame}}
}

// Pointcut is the text of the options that select what is woven and
// what is an allocation, for the profile's M pointcut record: flags as
// the user would write them, "" for the defaults.
func (o Options) Pointcut() string {
	return strings.Join(o.Patterns(), " ")
}

// Patterns are the pointcut's flags, one a pattern, as Pointcut writes
// them.
func (o Options) Patterns() []string {
	var parts []string
	for _, a := range o.Allocators {
		parts = append(parts, a.String())
	}
	for _, f := range o.Select.flags() {
		for _, g := range f.globs {
			parts = append(parts, f.flag+" '"+g+"'")
		}
	}
	return parts
}
