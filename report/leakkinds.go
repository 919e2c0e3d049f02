package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/weave-profiler/weave/profile"
)

// KindCount is a number of blocks and their bytes of one leak kind.
type KindCount struct {
	Blocks uint64 `json:"blocks"`
	Bytes  uint64 `json:"bytes"`
}

// ParseLeakKinds parses valgrind's --show-leak-kinds list: kind names
// separated by commas, or "all".
func ParseLeakKinds(s string) ([]profile.LeakKind, error) {
	if s == "all" {
		return []profile.LeakKind{profile.Definite, profile.Indirect, profile.Possible, profile.Reachable}, nil
	}
	var out []profile.LeakKind
	for _, name := range strings.Split(s, ",") {
		k, err := profile.ParseLeakKind(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}

// LeakTotals are the blocks in use at exit by leak kind.
type LeakTotals struct {
	Definite  KindCount `json:"definite"`
	Indirect  KindCount `json:"indirect"`
	Possible  KindCount `json:"possible"`
	Reachable KindCount `json:"reachable"`
	// Unclassified: blocks in use at exit the scan gave no kind (one of
	// two blocks of one size at one address, which the scan takes for a
	// stale entry), so that the kinds and it sum to the blocks in use.
	Unclassified KindCount `json:"unclassified,omitzero"`
}

// classify sets t.Unclassified to what the kinds leave out of the blocks
// in use (blocks, bytes).
func (t *LeakTotals) classify(blocks, bytes uint64) {
	var b, n uint64
	for k := range profile.NumLeakKinds {
		b += t.Kind(k).Blocks
		n += t.Kind(k).Bytes
	}
	if b < blocks || n < bytes {
		t.Unclassified = KindCount{profile.Remaining(blocks, b), profile.Remaining(bytes, n)}
	}
}

// Kind returns the count of kind k.
func (t *LeakTotals) Kind(k profile.LeakKind) *KindCount {
	return [...]*KindCount{&t.Definite, &t.Indirect, &t.Possible, &t.Reachable}[k]
}

// leakKinds sums the leaves' K records into the totals' per-kind counts
// (nil when the profile has no leak scan).
func (b *builder) leakKinds(p *profile.Profile) *LeakTotals {
	if !p.Scanned() {
		return nil
	}
	t := &LeakTotals{}
	for _, l := range b.leaves {
		if l.Leaks == nil {
			continue
		}
		for k, c := range l.Leaks {
			kc := t.Kind(profile.LeakKind(k))
			kc.Blocks += c.Blocks
			kc.Bytes += c.Bytes
		}
	}
	return t
}

// kindRows splits a leak table row by kind (kinds: the selected ones, in
// order), or returns it whole when the profile has no scan.
func kindRows(row Leak, kinds *profile.LeakKinds, want []profile.LeakKind, scanned bool) []Leak {
	if !scanned {
		return []Leak{row}
	}
	var rows []Leak
	for _, k := range want {
		if kinds == nil || kinds[k].Blocks == 0 {
			continue
		}
		r := row
		r.Kind = profile.LeakKindNames[k]
		r.BlocksKept, r.BytesKept = kinds[k].Blocks, kinds[k].Bytes
		rows = append(rows, r)
	}
	return rows
}

// kindOrder orders rows definite, indirect, possible, reachable, then
// rows without a kind.
func kindOrder(kind string) int {
	for k, n := range profile.LeakKindNames {
		if n == kind {
			return k
		}
	}
	return int(profile.NumLeakKinds)
}

// checkLeakKinds checks Options.LeakKinds against the profile.
func checkLeakKinds(p *profile.Profile, kinds []profile.LeakKind) ([]profile.LeakKind, error) {
	if kinds == nil {
		return []profile.LeakKind{profile.Definite, profile.Indirect, profile.Possible, profile.Reachable}, nil
	}
	if !p.Scanned() {
		return nil, fmt.Errorf("leak kinds: the profile has no leak scan: %s", p.NoScanReason())
	}
	return kinds, nil
}
