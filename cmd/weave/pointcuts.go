package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weave-profiler/weave/driver"
	"github.com/weave-profiler/weave/weave"
)

// pointcuts sets cfg's pointcut options from, in order (later ones add to
// earlier ones; a later declaration of the same allocator wins): the config
// file (configPath), $WEAVE_FLAGS, and the command line, whose pointcut
// flags it takes out of args; it returns the other arguments.
func pointcuts(cfg *driver.Config, args []string) ([]string, error) {
	path, err := configPath()
	if err != nil {
		return nil, err
	}
	if path != "" {
		if err := readConfig(cfg, path); err != nil {
			return nil, err
		}
	}
	// Split as a shell would: WEAVE_FLAGS="--exclude 'luaH_*'" as on a command line.
	if env := driver.SplitWords(os.Getenv("WEAVE_FLAGS")); len(env) > 0 {
		rest, err := pointcutFlags(cfg, env)
		if err != nil {
			return nil, fmt.Errorf("WEAVE_FLAGS: %v", err)
		}
		if len(rest) > 0 {
			return nil, fmt.Errorf("WEAVE_FLAGS: unknown option %q (it takes weave's pointcut flags: --alloc, --calloc, --realloc, --free, --exclude, --include, --exclude-file, --frame)", rest[0])
		}
	}
	before := weave.Options{Allocators: cfg.Allocators, Select: cfg.Select}
	rest, err := pointcutFlags(cfg, args)
	cfg.Own = ownPatterns(before.Patterns(), weave.Options{Allocators: cfg.Allocators, Select: cfg.Select}.Patterns())
	return rest, err
}

// ownPatterns are the patterns of after that are not in before: the
// command line's.
func ownPatterns(before, after []string) []string {
	var own []string
	for _, p := range after {
		if !slices.Contains(before, p) {
			own = append(own, p)
		}
	}
	return own
}

// pointcutFlags takes weave's pointcut flags out of a command line and sets
// them in cfg: declared allocators (--alloc, --calloc, --realloc, --free;
// "--alloc=NAME:size=1" or "--alloc NAME:size=1") and the selection
// (--exclude, --include, --exclude-file, --frame GLOB). It returns the other
// arguments.
func pointcutFlags(cfg *driver.Config, args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || !isPointcut(flag) {
			rest = append(rest, a)
			continue
		}
		if !hasValue {
			if i+1 == len(args) {
				return nil, fmt.Errorf("--%s needs a value", flag)
			}
			value = args[i+1]
			i++
		}
		if err := setPointcut(cfg, flag, value); err != nil {
			return nil, err
		}
	}
	return rest, nil
}

func isPointcut(flag string) bool {
	_, isAlloc := weave.AllocKindOf(flag)
	return isAlloc || selectList(&driver.Config{}, flag) != nil
}

// selectList is the list of cfg's selection a flag adds to, or nil.
func selectList(cfg *driver.Config, flag string) *[]string {
	switch flag {
	case "exclude":
		return &cfg.Select.Exclude
	case "include":
		return &cfg.Select.Include
	case "exclude-file":
		return &cfg.Select.ExcludeFiles
	case "frame":
		return &cfg.Select.Frame
	}
	return nil
}

// setPointcut sets one pointcut option (flag without its dashes).
func setPointcut(cfg *driver.Config, flag, value string) error {
	if l := selectList(cfg, flag); l != nil {
		if err := weave.CheckGlob("--"+flag, value); err != nil {
			return err
		}
		*l = append(*l, value)
		return nil
	}
	kind, _ := weave.AllocKindOf(flag)
	alloc, err := weave.ParseAllocator(kind, value)
	if err != nil {
		return err
	}
	cfg.Allocators = append(cfg.Allocators, alloc)
	return nil
}

// configPath returns the config file: $WEAVE_CONFIG (which must exist),
// else weave.conf in the current directory or the nearest parent that has
// one, else "".
func configPath() (string, error) {
	if p := os.Getenv("WEAVE_CONFIG"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("WEAVE_CONFIG: %v", err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", nil
	}
	for {
		p := filepath.Join(dir, "weave.conf")
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// readConfig reads a config file into cfg. Each line is empty, a comment
// (#), or one option and its value: "realloc l_alloc:ptr=2,size=4",
// "--exclude-file third_party/**" (the command line's flags, the dashes
// optional, the value after a space or '='). An error names the file, line
// and column.
func readConfig(cfg *driver.Config, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		trimmed := strings.TrimLeft(text, " \t")
		col := len(text) - len(trimmed) + 1
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		at := func(c int, err error) error { return fmt.Errorf("%s:%d:%d: %v", path, line, c, err) }
		word, value, _ := strings.Cut(strings.TrimRight(trimmed, " \t\r"), " ")
		if w, v, ok := strings.Cut(word, "="); ok {
			word, value = w, v+" "+value
		}
		value = strings.TrimSpace(value)
		flag := strings.TrimPrefix(word, "--")
		if !isPointcut(flag) {
			return at(col, fmt.Errorf("unknown option %q (want alloc, calloc, realloc, free, exclude, include, exclude-file or frame)", word))
		}
		if value == "" || strings.ContainsAny(value, " \t") {
			return at(col, fmt.Errorf("%s takes one value", word))
		}
		if err := setPointcut(cfg, flag, strings.Trim(value, `'"`)); err != nil {
			return at(col+strings.Index(trimmed, value), err)
		}
	}
	if err := sc.Err(); err != nil {
		return errors.New(path + ": " + err.Error())
	}
	return nil
}
