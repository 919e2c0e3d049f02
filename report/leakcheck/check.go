package leakcheck

import (
	"cmp"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// Leak is the blocks of one kind allocated under one whole chain, merged
// across threads.
type Leak struct {
	Kind       profile.LeakKind
	Blocks     uint64
	Bytes      uint64
	Site       string  // file:line, or "(hidden op)"
	Chain      []Frame // innermost first
	Suppressed *Suppression
}

// Result is the check of one profile.
type Result struct {
	Leaks      []*Leak // the failing kinds' leaks, biggest first, suppressed ones included
	Failed     int     // leaks not suppressed
	Blocks     uint64  // their blocks and bytes
	Bytes      uint64
	Suppressed uint64 // blocks suppressed
	Exec       bool   // the image ended by exec: nothing to check
}

// ErrNoScan is returned, wrapped with the reason, for a profile whose
// blocks were not classified.
var ErrNoScan = errors.New("the profile has no leak scan")

// Check finds the blocks of the failing kinds (LeakSanitizer fails on
// definitely and indirectly lost ones) and applies the suppressions. A
// profile of an image that ended by exec is clean (Exec).
func Check(p *profile.Profile, kinds []profile.LeakKind, supp Suppressions) (*Result, error) {
	if !p.Scanned() && p.EndedByExec() {
		return &Result{Exec: true}, nil
	}
	if !p.Scanned() {
		return nil, fmt.Errorf("%w: %s", ErrNoScan, p.NoScanReason())
	}
	modules := map[*profile.Func]string{}
	for _, f := range p.Funcs {
		modules[f] = f.Module
	}
	type key struct {
		kind  profile.LeakKind
		chain string
	}
	groups := map[key]*Leak{}
	var order []key
	folded := p.Fold()
	for _, n := range p.Nodes {
		if n.Kind != profile.KindAlloc || n.Leaks == nil {
			continue
		}
		chain, site := chainOf(p, folded, n)
		ck := site + "\x00" + chainKey(chain)
		for _, k := range kinds {
			c := n.Leaks[k]
			if c.Blocks == 0 {
				continue
			}
			kk := key{k, ck}
			g := groups[kk]
			if g == nil {
				g = &Leak{Kind: k, Site: site, Chain: chain, Suppressed: supp.Match(chain)}
				groups[kk] = g
				order = append(order, kk)
			}
			g.Blocks += c.Blocks
			g.Bytes += c.Bytes
		}
	}
	r := &Result{}
	for _, k := range order {
		g := groups[k]
		r.Leaks = append(r.Leaks, g)
		if g.Suppressed != nil {
			g.Suppressed.Used += g.Blocks
			r.Suppressed += g.Blocks
			continue
		}
		r.Failed++
		r.Blocks += g.Blocks
		r.Bytes += g.Bytes
	}
	slices.SortStableFunc(r.Leaks, func(a, b *Leak) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Blocks, a.Blocks))
	})
	return r, nil
}

// chainOf returns a leaf's frames (its function nodes up to the root,
// deep recursion folded) and its site. A hidden site's chain starts with a frame of only the object
// its allocator was called from (a library that was not woven, the C
// library), when the profile knows it: suppressions match its name.
func chainOf(p *profile.Profile, folded *profile.Folded, n *profile.Node) ([]Frame, string) {
	var chain []Frame
	s := n.Site
	obj := ""
	if s.Hidden {
		if obj = p.HiddenObject(s); obj != "" {
			chain = append(chain, Frame{Module: obj})
		}
	}
	folded.Path(n, func(f *profile.Func) bool {
		chain = append(chain, Frame{Name: f.Name, File: f.File, Module: f.Module})
		return true
	})
	if s.Hidden {
		if obj != "" {
			return chain, "(hidden " + s.Op + " in " + filepath.Base(obj) + ")"
		}
		return chain, "(hidden " + s.Op + ")"
	}
	if len(chain) == 0 && s.Func != nil {
		chain = append(chain, Frame{Name: s.Func.Name, File: s.Func.File, Module: s.Func.Module})
	}
	return chain, fmt.Sprintf("%s:%d", s.File, s.Line)
}

func chainKey(chain []Frame) string {
	var b strings.Builder
	for _, f := range chain {
		b.WriteString(f.Name + "\x00" + f.File + "\x00" + f.Module + "\x01")
	}
	return b.String()
}

// String formats a leak as the runtime's summary does: "64 bytes in 2
// blocks definitely lost at kinds.c:37 lose_cycle <- main".
func (l *Leak) String() string {
	var names []string
	for _, f := range l.Chain {
		if f.Name != "" {
			names = append(names, f.Name)
		}
	}
	s := fmt.Sprintf("%s bytes in %s blocks %s at %s", Commas(l.Bytes), Commas(l.Blocks),
		profile.LeakKindTitles[l.Kind], l.Site)
	if len(names) > 0 {
		s += " " + strings.Join(names, " <- ")
	}
	if l.Suppressed != nil {
		s += fmt.Sprintf(" (suppressed: %s:%d)", filepath.Base(l.Suppressed.File), l.Suppressed.Line)
	}
	return s
}

// Commas formats n with thousands separators, as the runtime's summary does.
func Commas(n uint64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
