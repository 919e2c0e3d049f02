//go:build amd64 || arm64

package rt

// getg returns the address of the calling goroutine's runtime g
// (getg_$GOARCH.s): two instructions and a call.
func getg() uintptr
