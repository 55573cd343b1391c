//go:build !weakhash && !purego

#include "textflag.h"

// func applyBatchAVX512(s *Bucket, nb *uint32, n int, v uint64, seed0 uint64, lay *uint64, groups int, prefetch int)
//
// For each of the n neighbour ids u at nb, with idx = min(v,u)<<32 | max(v,u)
// and g = mix64(idx + seed0), XOR (idx, g) into s[0] and into bucket
// 1 + c·R + ctz(mix64(idx + seed_c)) of every column c whose depth is below
// R. lay holds groups records of 24 words (see Params.laneLayout): 8 column
// seeds, 8 byte offsets 16·(1 + c·R + 63), and 8 row masks 2^R − 1 (0 for
// the padding lanes of the last group). A lane whose hash has none of its
// mask's bits set (depth >= R) XORs into a scratch bucket instead.
//
// Frame: 0(SP) holds the 8 bucket byte offsets of the current group
// relative to s, 64(SP) is the scratch bucket.
TEXT ·applyBatchAVX512(SB), NOSPLIT, $80-64
	MOVQ s+0(FP), DI
	MOVQ nb+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ v+24(FP), R8
	MOVQ seed0+32(FP), R9
	MOVQ lay+40(FP), R10
	MOVQ groups+48(FP), R13
	IMULQ $192, R13
	ADDQ R10, R13 // end of the layout
	TESTQ CX, CX
	JZ done

	// Prefetch the first prefetch bytes of the sketch, a line at a time:
	// a cold sketch then arrives with all its misses in flight at once.
	MOVQ prefetch+56(FP), AX
	XORQ BX, BX
	JMP pfcheck
pfloop:
	PREFETCHT0 (DI)(BX*1)
	ADDQ $64, BX
pfcheck:
	CMPQ BX, AX
	JLO pfloop

	MOVQ $0xbf58476d1ce4e5b9, AX
	VPBROADCASTQ AX, Z31
	MOVQ $0x94d049bb133111eb, AX
	VPBROADCASTQ AX, Z30
	VPXORQ Z29, Z29, Z29
	LEAQ 64(SP), AX
	SUBQ DI, AX
	VPBROADCASTQ AX, Z27 // offset of the scratch bucket from s[0]

index:
	// idx = min(v,u)<<32 | max(v,u) in R11.
	MOVL (SI), AX
	MOVQ AX, R11
	MOVQ R8, R12
	CMPQ AX, R8
	CMOVQHI R8, R11
	CMOVQHI AX, R12
	SHLQ $32, R11
	ORQ R12, R11

	// Checksum g = mix64(idx + seed0) in R12.
	MOVQ R11, R12
	ADDQ R9, R12
	MOVQ R12, BX
	SHRQ $30, BX
	XORQ BX, R12
	MOVQ $0xbf58476d1ce4e5b9, BX
	IMULQ BX, R12
	MOVQ R12, BX
	SHRQ $27, BX
	XORQ BX, R12
	MOVQ $0x94d049bb133111eb, BX
	IMULQ BX, R12
	MOVQ R12, BX
	SHRQ $31, BX
	XORQ BX, R12

	// X3 = (idx, g); the deterministic bucket takes every index.
	VMOVQ R11, X3
	VPINSRQ $1, R12, X3, X3
	VPXOR (DI), X3, X4
	VMOVDQU X4, (DI)

	VPBROADCASTQ R11, Z0
	MOVQ R10, AX

group:
	// Eight column hashes h = mix64(idx + seed_c).
	VPADDQ (AX), Z0, Z1
	VPSRLQ $30, Z1, Z2
	VPXORQ Z2, Z1, Z1
	VPMULLQ Z31, Z1, Z1
	VPSRLQ $27, Z1, Z2
	VPXORQ Z2, Z1, Z1
	VPMULLQ Z30, Z1, Z1
	VPSRLQ $31, Z1, Z2
	VPXORQ Z2, Z1, Z1

	// depth = ctz(h) < R exactly when one of the low R bits of h is set
	// (the lane's mask); then the bucket's byte offset is
	// 16·(1 + c·R + 63 − lzcnt(h & −h)). Other lanes take the scratch offset.
	VPTESTMQ 128(AX), Z1, K1
	VPSUBQ Z1, Z29, Z2
	VPANDQ Z2, Z1, Z1
	VPLZCNTQ Z1, Z1
	VPSLLQ $4, Z1, Z1
	VMOVDQU64 64(AX), Z5
	VMOVDQA64 Z27, Z2
	VPSUBQ Z1, Z5, K1, Z2
	VMOVDQU64 Z2, 0(SP)

	MOVQ 0(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)
	MOVQ 8(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)
	MOVQ 16(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)
	MOVQ 24(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)
	MOVQ 32(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)
	MOVQ 40(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)
	MOVQ 48(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)
	MOVQ 56(SP), BX
	VPXOR (DI)(BX*1), X3, X4
	VMOVDQU X4, (DI)(BX*1)

	ADDQ $192, AX
	CMPQ AX, R13
	JLO group

	ADDQ $4, SI
	DECQ CX
	JNZ index

done:
	VZEROUPPER
	RET
