#include "textflag.h"

// func getg() uintptr
TEXT ·getg(SB),NOSPLIT,$0-8
	MOVQ (TLS), AX
	MOVQ AX, ret+0(FP)
	RET

// func stackBounds() (lo, hi uintptr): the calling goroutine's stack, the
// first field of the runtime's g (its offsets are the runtime's and cgo's
// assembly's too).
TEXT ·stackBounds(SB),NOSPLIT,$0-16
	MOVQ (TLS), AX
	MOVQ 0(AX), BX
	MOVQ BX, lo+0(FP)
	MOVQ 8(AX), BX
	MOVQ BX, hi+8(FP)
	RET
