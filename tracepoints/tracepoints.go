// Package tracepoints holds the runtime's tracepoint and control-channel
// parts (trace.c, control.c), reads the trace files the runtime writes, and
// talks to a running woven process over its control socket (weave trace,
// weave snapshot, weave mark).
package tracepoints

import "embed"

// Files holds the C parts, joined into the runtime by package runtime.
//
//go:embed trace.c control.c unframed.c
var Files embed.FS
