package report

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/internal/glob"
	"github.com/weave-profiler/weave/profile"
)

// Group renames every function of p to the group it belongs to, so that
// the report's tables aggregate by group (the thesis's per-module view):
// "file" (its source file), "dir" (its directory), "dir:N" (the first N
// levels of its directory) or "module:FILE" (the first of FILE's lines
// "name: glob..." whose glob matches its file; "(other)" when none does).
func Group(p *profile.Profile, by string) error {
	key, err := groupKey(by)
	if err != nil {
		return err
	}
	for _, f := range p.Funcs {
		f.Name, f.File = key(f.File), ""
	}
	return nil
}

func groupKey(by string) (func(file string) string, error) {
	kind, arg, _ := strings.Cut(by, ":")
	switch {
	case by == "file":
		return func(f string) string { return f }, nil
	case by == "dir":
		return filepath.Dir, nil
	case kind == "dir":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--group %s: want dir:N with N ≥ 1", by)
		}
		return func(f string) string { return dirLevels(filepath.Dir(f), n) }, nil
	case kind == "module" && arg != "":
		mods, err := readModules(arg)
		if err != nil {
			return nil, err
		}
		return func(f string) string {
			for _, m := range mods {
				for _, g := range m.globs {
					if glob.File(g, f) {
						return m.name
					}
				}
			}
			return "(other)"
		}, nil
	}
	return nil, fmt.Errorf("--group %q: want file, dir, dir:N or module:FILE", by)
}

// dirLevels keeps the first n levels of a directory path.
func dirLevels(dir string, n int) string {
	parts := strings.Split(dir, "/")
	keep := n
	if parts[0] == "" { // absolute
		keep++
	}
	if keep < len(parts) {
		parts = parts[:keep]
	}
	return strings.Join(parts, "/")
}

type module struct {
	name  string
	globs []string
}

// readModules reads a module file: "name: glob glob..." lines, blank
// lines and # comments. An error names the file, line and column.
func readModules(path string) ([]module, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--group module:%s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("--group module:%s: is a directory", path)
	}
	var mods []module
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' {
			continue
		}
		name, globs, ok := strings.Cut(text, ":")
		if !ok || strings.TrimSpace(name) == "" || len(strings.Fields(globs)) == 0 {
			col := strings.Index(sc.Text(), text) + 1
			return nil, fmt.Errorf("%s:%d:%d: want \"module-name: glob...\"", path, line, col)
		}
		mods = append(mods, module{strings.TrimSpace(name), strings.Fields(globs)})
	}
	return mods, sc.Err()
}
