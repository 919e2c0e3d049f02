package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// Between is the view of weave report --between A B, KBDB's two-breakpoint
// leak view: the blocks allocated after mark A and still live at mark B.
type Between struct {
	From   MarkRef `json:"from"`
	To     MarkRef `json:"to"`
	Blocks uint64  `json:"blocks"`
	Bytes  uint64  `json:"bytes"`
}

// MarkRef names a mark in a report.
type MarkRef struct {
	Label string `json:"label"`
	Gen   int    `json:"gen"` // its generation: marks count 1, 2, ... in time order
	NS    uint64 `json:"ns"`  // since the start
}

func (m MarkRef) String() string {
	return fmt.Sprintf("%q (mark %d, %.3f s)", m.Label, m.Gen, float64(m.NS)/1e9)
}

// FindMark returns the mark spec names: "label", the last mark with that
// label; "label#N", its Nth (from 1, when a label repeats, as a mark in a
// loop does); "#G", the mark that started generation G.
func FindMark(p *profile.Profile, spec string) (*profile.Mark, error) {
	if len(p.Marks) == 0 {
		return nil, fmt.Errorf("mark %q: the profile has no marks (WEAVE_MARK in weave_api.h, or weave mark PID LABEL)", spec)
	}
	label, nth := spec, 0
	if i := strings.LastIndexByte(spec, '#'); i >= 0 {
		if n, err := strconv.Atoi(spec[i+1:]); err == nil && n > 0 {
			label, nth = spec[:i], n
		}
	}
	if label == "" && nth > 0 {
		if m := p.MarkByGen(nth); m != nil {
			return m, nil
		}
		return nil, fmt.Errorf("mark %q: no mark %d (the profile has %d)", spec, nth, len(p.Marks))
	}
	var found []*profile.Mark
	for _, m := range p.Marks {
		if m.Label == label {
			found = append(found, m)
		}
	}
	switch {
	case len(found) == 0 && nth > 0 && label != spec:
		// A label that itself ends in #N.
		return FindMark(p, spec+"#1")
	case len(found) == 0:
		var labels []string
		for _, m := range p.Marks {
			if len(labels) == 10 {
				labels = append(labels, "...")
				break
			}
			labels = append(labels, strconv.Quote(m.Label))
		}
		return nil, fmt.Errorf("mark %q: no mark has that label (the marks: %s)", spec, strings.Join(labels, ", "))
	case nth > len(found):
		return nil, fmt.Errorf("mark %q: label %q marks %d points, not %d", spec, label, len(found), nth)
	case nth > 0:
		return found[nth-1], nil
	}
	return found[len(found)-1], nil
}

// ApplyBetween turns p into the view of the blocks allocated after mark
// from and live at mark to: each allocation leaf's heap becomes those
// blocks (as allocations never freed), everything else that counts
// blocks (bins, leak kinds, the heap picture, the peak) is dropped, so
// that the leak table lists them by chain. It fails when a mark is
// unknown, from is not before to, or the runtime kept no live blocks at
// to.
func ApplyBetween(p *profile.Profile, from, to string) (*Between, error) {
	a, err := FindMark(p, from)
	if err != nil {
		return nil, err
	}
	b, err := FindMark(p, to)
	if err != nil {
		return nil, err
	}
	if a.Gen >= b.Gen {
		return nil, fmt.Errorf("--between %s %s: mark %q (%d) is not before mark %q (%d)", from, to, a.Label, a.Gen, b.Label, b.Gen)
	}
	if !b.LiveKnown {
		return nil, fmt.Errorf("mark %q (%d): the runtime kept no live blocks at it (its table of live blocks was full)", b.Label, b.Gen)
	}
	bw := &Between{From: MarkRef{a.Label, a.Gen, a.NS}, To: MarkRef{b.Label, b.Gen, b.NS}}
	for _, n := range p.Nodes {
		n.Heap, n.Leaks = profile.Heap{}, nil
	}
	for _, l := range b.Live {
		if l.Gen < a.Gen || l.Blocks == 0 {
			continue
		}
		c := profile.SizeClass(l.Bytes / l.Blocks)
		l.Node.Heap.Allocs[c] += l.Blocks
		l.Node.Heap.Bytes[c] += l.Bytes
		bw.Blocks += l.Blocks
		bw.Bytes += l.Bytes
	}
	p.Bins, p.Blocks, p.PeakHeap = nil, nil, nil
	p.Meta = slices.DeleteFunc(p.Meta, func(m profile.Meta) bool { return m.Key == "leak_scan" })
	return bw, nil
}
