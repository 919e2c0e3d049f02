package main

import "testing"

// TestLeakAltstack: exit or _exit from a signal handler on an alternate
// signal stack (testdata/leaks/altstack.c), as gnulib's c-stack exits on a
// stack overflow, gives memcheck's leak summary of the plain build. The
// mapping that held the exit's stack pointer was read from there up as a
// thread's stack: an alternate stack in the program's data hid the
// globals below it (grep 3.8's stack-overflow test: grep -E -f with
// 30,000 '(' said its 120-byte patloc array, a static's, definitely
// lost, memcheck still reachable), and one in main's frame the frames
// the signal interrupted (their signal frame was looked for only in
// another mapping).
func TestLeakAltstack(t *testing.T) {
	leaksLikeMemcheck(t, "altstack.c", 16, nil, "data", "local", "mmap")
}
