package report

import (
	"fmt"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// picture is the heap picture of the page (KBDB's): the blocks live at
// exit, in address order, each with its allocation context. Addr holds
// each block's address as the difference from the previous one's (the
// first's from 0), which keeps the page small.
type picture struct {
	Addr []uint64     `json:"addr"`
	Size []uint64     `json:"size"`
	Ctx  []int        `json:"ctx"`  // index into Ctxs
	Ctxs []pictureCtx `json:"ctxs"` // the contexts with live blocks
	// Skipped is the number of live blocks when the runtime wrote none,
	// having too many (M picture_skipped), or when the page leaves them out.
	Skipped uint64 `json:"skipped,omitempty"`
}

type pictureCtx struct {
	Type  string `json:"type"`  // sizeof(T) at the site, or ""
	Site  string `json:"site"`  // "file:line op", or "op (hidden)"
	Chain string `json:"chain"` // innermost function first
	// Leak is the leak kind of the context's blocks in use at exit
	// ("definitely lost", ...; "mixed" when they are of several kinds),
	// when the runtime classified them; else "".
	Leak string `json:"leak,omitempty"`
}

// maxPictureBlocks bounds the blocks the page draws.
const maxPictureBlocks = 200000

func (r *Report) picture() *picture {
	p := r.prof
	pic := &picture{}
	if s, ok := p.MetaValue("picture_skipped"); ok {
		fmt.Sscan(s, &pic.Skipped)
		return pic
	}
	if len(p.Blocks) == 0 {
		return nil
	}
	if len(p.Blocks) > maxPictureBlocks {
		pic.Skipped = uint64(len(p.Blocks))
		return pic
	}
	ctxOf := map[*profile.Node]int{}
	var prev uint64
	for _, b := range p.Blocks {
		c, ok := ctxOf[b.Node]
		if !ok {
			c = len(pic.Ctxs)
			ctxOf[b.Node] = c
			pic.Ctxs = append(pic.Ctxs, r.pictureCtx(b.Node))
		}
		pic.Addr = append(pic.Addr, b.Addr-prev)
		pic.Size = append(pic.Size, b.Size)
		pic.Ctx = append(pic.Ctx, c)
		prev = b.Addr
	}
	return pic
}

// pictureCtx describes an allocation leaf: its type, site and whole chain.
func (r *Report) pictureCtx(n *profile.Node) pictureCtx {
	s := n.Site
	c := pictureCtx{Type: s.Type, Site: fmt.Sprintf("%s:%d %s", s.File, s.Line, s.Op)}
	var chain []string
	up := n.Parent
	switch {
	case s.Hidden:
		c.Site = s.Op + " (hidden)"
	case s.Func == nil: // charged to the caller (a region's own, --exclude)
	case up == nil || up.Kind != profile.KindFunc || up.Func.Name != s.Func.Name || up.Func.File != s.Func.File:
		chain = append(chain, r.Label(Func{s.Func.Name, s.Func.File})) // the depth cap dropped its node
	}
	r.folded.Path(n, func(f *profile.Func) bool {
		chain = append(chain, r.Label(Func{f.Name, f.File}))
		return true
	})
	c.Chain = strings.Join(chain, " <- ")
	if n.Leaks != nil {
		for k, lc := range n.Leaks {
			switch {
			case lc.Blocks == 0:
			case c.Leak == "":
				c.Leak = profile.LeakKindTitles[k]
			default:
				c.Leak = "mixed"
			}
		}
	}
	return c
}
