//go:build !amd64 && !arm64

package rt

import (
	"runtime"
	"unsafe"
)

// getg returns the calling goroutine's id, parsed from its stack trace
// header ("goroutine 18 [running]:"): slow (about a microsecond), for the
// architectures without getg_$GOARCH.s.
func getg() uintptr {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	var id uintptr
	for _, c := range b[len("goroutine "):] {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uintptr(c-'0')
	}
	return id + 2 // 0 and 1 (tombstone) are not keys
}

// stackKnown: onStack only guesses by size.
const stackKnown = false

// onStack reports whether a non-escaping make or append growth of size
// bytes at p is in a stack buffer: here, without the stack's bounds, when
// it fits the compiler's buffer of stackBuf bytes.
func onStack(p unsafe.Pointer, size uint64) bool { return size <= stackBuf }
