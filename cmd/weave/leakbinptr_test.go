package main

import "testing"

// TestLeakBinPointer: a lost block whose only pointer is a link glibc's
// allocator left in a live block's unwritten bytes (testdata/leaks/binptr.c:
// a free chunk's link to the next free chunk's header, 48 bytes into the
// lost block of 50 bytes before that chunk) is definitely lost, as memcheck
// says of the plain build, whichever way the scan marks. The graph of every
// block's edges (a heap of few blocks) was listed before the scan knew the
// blocks were glibc's, so its edges kept such links: possibly lost. Found
// on a program calling aligned_alloc, getpwnam, scandir & co., whose
// -O0 build said 50 bytes possibly lost where memcheck said indirectly.
func TestLeakBinPointer(t *testing.T) {
	leaksLikeMemcheck(t, "binptr.c", 1, nil, "graph", "small")
}
