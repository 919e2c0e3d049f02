// Package runtime assembles the weave C runtime from its parts and builds it for a compiler.
//
// The runtime is one C translation unit joined from parts (Source), one
// file per concern, in the order of parts.go: runtime/internal.h (the
// types, shared state and helpers every part uses), the pseudo-stack and
// calling-context tree of package pseudostack, then this package's C files,
// one per concern (parts.go says what each does).
//
// To add a part: a C file starting with #include "internal.h" (in this
// folder, or in a folder of its own with a Go package that embeds it, as
// pseudostack does), its shared declarations in internal.h, and one line
// in parts.go. Object builds the joined source per compiler and flags,
// cached under a hash of all of it.
package runtime
