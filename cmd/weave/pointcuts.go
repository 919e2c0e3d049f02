package main

import (
	"strings"

	"weave/driver"
	"weave/weave"
)

// pointcutFlags takes weave's declared allocators (--alloc, --calloc,
// --realloc, --free; "--alloc=NAME:size=1" or "--alloc NAME:size=1") out of
// a command line and sets them in cfg; it returns the other arguments.
func pointcutFlags(cfg *driver.Config, args []string) ([]string, error) {
	var rest []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		flag, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		kind, ok := weave.AllocKindOf(flag)
		if !strings.HasPrefix(a, "--") || !ok {
			rest = append(rest, a)
			continue
		}
		if !hasValue && i+1 < len(args) {
			value = args[i+1]
			i++
		}
		alloc, err := weave.ParseAllocator(kind, value)
		if err != nil {
			return nil, err
		}
		cfg.Allocators = append(cfg.Allocators, alloc)
	}
	return rest, nil
}
