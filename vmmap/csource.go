package vmmap

import "embed"

// Files holds the runtime part of the package, vmmap.c (the copies of
// /proc/self/maps and statm, the heap timeline and the peak snapshots),
// vmpack.c (those copies of the maps, packed),
// vmthreads.c (the heap in use with several threads) and vmwrite.c (their
// profile records), which package runtime joins into the runtime.
//
//go:embed vmmap.c vmpack.c vmthreads.c vmwrite.c
var Files embed.FS
