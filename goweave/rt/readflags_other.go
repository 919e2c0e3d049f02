//go:build !linux

package rt

// readFlags: see readflags_linux.go.
const readFlags = 0
