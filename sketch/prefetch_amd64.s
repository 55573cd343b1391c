//go:build !purego

#include "textflag.h"

// func prefetch(p *Bucket, n int)
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	XORQ BX, BX
	JMP check
loop:
	PREFETCHT0 (DI)(BX*1)
	ADDQ $64, BX
check:
	CMPQ BX, CX
	JLO loop
	RET
