// Package tracepoints holds the runtime's tracepoint part (trace.c), reads
// the trace files it writes, and talks to a running woven process over its
// control channel (weave trace, weave snapshot).
package tracepoints

import "embed"

// Files holds the C part, joined into the runtime by package runtime.
//
//go:embed trace.c
var Files embed.FS
