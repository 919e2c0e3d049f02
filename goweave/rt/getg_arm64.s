#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVD g, R0
	MOVD R0, ret+0(FP)
	RET

// func stackBounds() (lo, hi uintptr): the calling goroutine's stack, the
// first field of the runtime's g (its offsets are the runtime's and cgo's
// assembly's too).
TEXT ·stackBounds(SB),NOSPLIT,$0-16
	MOVD 0(g), R0
	MOVD R0, lo+0(FP)
	MOVD 8(g), R0
	MOVD R0, hi+8(FP)
	RET
