//go:build !linux

package rt

import "os"

// readFlags: see stream_linux.go.
const readFlags = 0

// streamOut: see stream_linux.go; elsewhere every WEAVE_OUT names a file.
func streamOut(string) (*os.File, bool, error) { return nil, false, nil }

// writeStderr: see stream_linux.go.
func writeStderr(s string) { os.Stderr.WriteString(s) }
