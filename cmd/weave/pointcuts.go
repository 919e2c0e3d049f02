package main

import (
	"strings"

	"weave/driver"
	"weave/weave"
)

// pointcutFlags takes weave's pointcut flags out of a command line and sets
// them in cfg: declared allocators (--alloc, --calloc, --realloc, --free;
// "--alloc=NAME:size=1" or "--alloc NAME:size=1") and the selection
// (--exclude, --include, --exclude-file GLOB). It returns the other
// arguments.
func pointcutFlags(cfg *driver.Config, args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		kind, isAlloc := weave.AllocKindOf(flag)
		globs := map[string]*[]string{"exclude": &cfg.Select.Exclude, "include": &cfg.Select.Include,
			"exclude-file": &cfg.Select.ExcludeFiles}[flag]
		if !strings.HasPrefix(a, "--") || !isAlloc && globs == nil {
			rest = append(rest, a)
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
			i++
		}
		if globs != nil {
			if err := weave.CheckGlob("--"+flag, value); err != nil {
				return nil, err
			}
			*globs = append(*globs, value)
			continue
		}
		alloc, err := weave.ParseAllocator(kind, value)
		if err != nil {
			return nil, err
		}
		cfg.Allocators = append(cfg.Allocators, alloc)
	}
	return rest, nil
}
