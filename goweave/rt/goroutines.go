package rt

import "strings"

// running returns the context of each goroutine other than the caller's
// that is inside a framed woven function at exit: where it runs, under
// the chain of its spawner when a woven go statement started it. Go's
// leaks are such goroutines, blocked for ever, more than blocks. Without
// the race detector only: another goroutine's current node is read
// without synchronisation (a stale node is still one it was in).
func running() []*node {
	if raceEnabled {
		return nil
	}
	self := getg()
	var out []*node
	for i := range table {
		s := &table[i]
		if k := s.key.Load(); k == 0 || k == tombstone || k == self {
			continue
		}
		if g := s.g.Load(); g != nil && g.depth > 0 && g.cur != nil && g.cur != root {
			out = append(out, g.cur)
		}
	}
	overflow.Range(func(k, v any) bool {
		if g := v.(*G); k.(uintptr) != self && g.depth > 0 && g.cur != nil && g.cur != root {
			out = append(out, g.cur)
		}
		return true
	})
	return out
}

// chainOf is n's chain of functions, innermost first, as the report
// prints chains.
func chainOf(n *node) string {
	var names []string
	for ; n != nil && n != root; n = n.parent {
		if n.fn != nil {
			names = append(names, n.fn.Name)
		}
	}
	return strings.Join(names, " <- ")
}
