//go:build !purego

#include "textflag.h"
#include "prefetch_amd64.h"

// func prefetch(p *Bucket, n int)
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), AX
	PREFETCH(loop, check)
	RET
