package profile

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// The quantities a report ranks, exports and compares by (--sort,
// --quantity, diff rules), in the order they are shown.
const (
	QuantityBytes  = "bytes_allocated"
	QuantityAllocs = "allocs"
	QuantityInUse  = "bytes_in_use" // at exit
	QuantityCalls  = "calls"
	QuantityTime   = "time"
)

// Quantities lists the quantities in the order reports show them.
var Quantities = []string{QuantityBytes, QuantityAllocs, QuantityInUse, QuantityCalls, QuantityTime}

// AtCallsLegend explains the "*" that ends the call count of a function
// framed at its calls (--frames auto), which counts only those calls, in
// every table that prints such a count (report, diff, budgets).
const AtCallsLegend = "  *: a function framed at its calls (weave --frames auto): its count is of those calls, which\n" +
	"     may allocate (or of its runs that made one), not of all its calls; weave -v lists them"

// ParseQuantity checks a quantity name.
func ParseQuantity(s string) (string, error) {
	for _, q := range Quantities {
		if s == q {
			return q, nil
		}
	}
	return "", fmt.Errorf("unknown quantity %q (want %s)", s, strings.Join(Quantities, ", "))
}

// Counts are the quantities of a calling context, function, site or row.
// Signed, so that a difference of two is Counts too. Time is measured, not
// counted: it differs between runs of the same input; the rest are exact.
type Counts struct {
	Allocs      int64 `json:"allocs"`
	Bytes       int64 `json:"bytes_allocated"`
	InUseBlocks int64 `json:"blocks_in_use"` // at exit
	InUse       int64 `json:"bytes_in_use"`  // at exit
	Calls       int64 `json:"calls"`
	TimeNS      int64 `json:"time_ns"`
}

// Get returns a quantity (one of Quantities).
func (c *Counts) Get(q string) int64 {
	switch q {
	case QuantityAllocs:
		return c.Allocs
	case QuantityBytes:
		return c.Bytes
	case QuantityInUse:
		return c.InUse
	case QuantityCalls:
		return c.Calls
	case QuantityTime:
		return c.TimeNS
	}
	return 0
}

// Add adds o to c.
func (c *Counts) Add(o *Counts) {
	c.Allocs += o.Allocs
	c.Bytes += o.Bytes
	c.InUseBlocks += o.InUseBlocks
	c.InUse += o.InUse
	c.Calls += o.Calls
	c.TimeNS += o.TimeNS
}

// Sub returns c - o.
func (c Counts) Sub(o Counts) Counts {
	return Counts{c.Allocs - o.Allocs, c.Bytes - o.Bytes, c.InUseBlocks - o.InUseBlocks, c.InUse - o.InUse,
		c.Calls - o.Calls, c.TimeNS - o.TimeNS}
}

// IsZero reports whether every count is 0.
func (c *Counts) IsZero() bool { return *c == Counts{} }

// HeapCounts returns an allocation leaf's counts: allocations, bytes, and
// what was not freed.
func HeapCounts(h *Heap) Counts {
	a, f := h.TotalAllocs(), h.TotalFrees()
	b, fb := h.TotalBytes(), h.TotalFreedBytes()
	return Counts{Allocs: int64(a), Bytes: int64(b), InUseBlocks: int64(Remaining(a, f)), InUse: int64(Remaining(b, fb))}
}

// Remaining returns a-b, or 0 if b > a: what is left of a count after its
// frees (a profile that freed more than it allocated is inconsistent;
// kept memory is never negative).
func Remaining(a, b uint64) uint64 {
	if b > a {
		return 0
	}
	return a - b
}

// FuncKey identifies a function across profiles and builds: its name and
// the base name of its file (a build in another directory is the same
// program).
type FuncKey struct{ Name, File string }

// Key returns f's FuncKey.
func (f *Func) Key() FuncKey { return FuncKey{f.Name, filepath.Base(f.File)} }

// MetaUint returns the metadata value of key as a number, and whether
// there is one.
func (p *Profile) MetaUint(key string) (uint64, bool) {
	s, ok := p.MetaValue(key)
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}
