//go:build !purego

#include "textflag.h"

// func prefetchLines(slab *uint32, at *int, n int)
TEXT ·prefetchLines(SB), NOSPLIT|NOFRAME, $0-24
	MOVQ slab+0(FP), AX
	MOVQ at+8(FP), SI
	MOVQ n+16(FP), CX
	TESTQ CX, CX
	JLE done

loop:
	MOVQ (SI), DX
	LEAQ (AX)(DX*4), DX
	// PREFETCHW (DX), which the Go assembler does not know: fetch the
	// line in the exclusive state, ready to be written.
	BYTE $0x0f; BYTE $0x0d; BYTE $0x0a
	ADDQ $8, SI
	DECQ CX
	JNZ loop

done:
	RET
