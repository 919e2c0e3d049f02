//go:build amd64 || arm64

package rt

import "unsafe"

// getg returns the address of the calling goroutine's runtime g
// (getg_$GOARCH.s): two instructions and a call.
func getg() uintptr

func stackBounds() (lo, hi uintptr)

// stackKnown: onStack knows the goroutine's stack bounds.
const stackKnown = true

// onStack reports whether p is in the calling goroutine's stack: a
// non-escaping make or append growth the compiler backed with a stack
// buffer, not an allocation.
func onStack(p unsafe.Pointer, size uint64) bool {
	lo, hi := stackBounds()
	return lo <= uintptr(p) && uintptr(p) < hi
}
