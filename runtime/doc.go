// Package runtime assembles the weave C runtime from its parts and builds it for a compiler.
//
// The runtime is one C translation unit joined from parts (Source), one
// file per concern, in the order of parts.go: runtime/internal.h (the
// types, shared state and helpers every part uses), the pseudo-stack and
// calling-context tree of package pseudostack, then this package's C files:
//
//	init.c       environment, one-time set-up, never-freed memory, constructor
//	side.c       the side table: live blocks by address
//	advice.c     the allocation advice (__weave_malloc & co.) and recording
//	interpose.c  the interposed malloc family (hidden allocations)
//	out.c        buffered output and scratch memory for the exit writers
//	profile.c    the profile writer
//	save.c       the profile's file: name, temporary file, rename
//	summary.c    totals, top leaks, the heap summary
//	leakscan.c   leak kinds at exit: a conservative mark from the roots
//	leakreport.c the scan's results: suppressions, merged leaks, exit status
//	exit.c       the ways out: exit, _exit, exec, crash signals, fork
//	timing.c     function time, exact and sampled
//
// To add a part: a C file starting with #include "internal.h" (in this
// folder, or in a folder of its own with a Go package that embeds it, as
// pseudostack does), its shared declarations in internal.h, and one line
// in parts.go. Object builds the joined source per compiler and flags,
// cached under a hash of all of it.
package runtime
