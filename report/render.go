package report

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// A Renderer lays out a report in one output format.
type Renderer interface {
	Render(w io.Writer, r *Report) error
}

// renderers maps a format name to its renderer. Each format registers
// itself from its own file, so adding one is adding a file.
var renderers = map[string]Renderer{}

// Register makes a renderer available under a format name. It panics if
// the name is taken.
func Register(format string, r Renderer) {
	if _, dup := renderers[format]; dup {
		panic("report: format " + format + " registered twice")
	}
	renderers[format] = r
}

// Formats returns the names of the registered formats, sorted.
func Formats() []string {
	var names []string
	for name := range renderers {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Lookup returns the renderer of a format.
func Lookup(format string) (Renderer, error) {
	r, ok := renderers[format]
	if !ok {
		return nil, fmt.Errorf("unknown format %q (want %s)", format, strings.Join(Formats(), " or "))
	}
	return r, nil
}
