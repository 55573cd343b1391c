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
// mask's bits set (depth >= R) XORs into a scratch bucket of its own
// instead. prefetch is the number of bytes of s to prefetch first.
//
// With 3 or 4 groups (18 to 32 columns: sketch factor 1 up to V = 2^23)
// the layout stays in registers for the whole batch (seeds in Z6-Z9, byte
// offsets in Z10-Z13, masks in Z14-Z17). Loading it from memory for every
// group let a load wait on an older bucket store whose address matched it
// in the low 12 bits (4K aliasing), which made some placements of the
// sketch 2.5 times slower. Other counts take a loop over the layout in
// memory.
//
// Frame: 0(SP) holds the 8 bucket byte offsets of the current group,
// 64(SP) to 192(SP) are the eight lanes' scratch buckets.

// NEXT_INDEX reads the next neighbour id at SI and leaves idx in R11 and
// in every lane of Z0, and X3 = (idx, g); it XORs X3 into the
// deterministic bucket s[0]. Clobbers AX, BX, R12, X4.
#define NEXT_INDEX \
	MOVL (SI), AX \
	MOVQ AX, R11 \
	MOVQ R8, R12 \
	CMPQ AX, R8 \
	CMOVQHI R8, R11 \
	CMOVQHI AX, R12 \
	SHLQ $32, R11 \
	ORQ R12, R11 \
	MOVQ R11, R12 \
	ADDQ R9, R12 \
	MOVQ R12, BX \
	SHRQ $30, BX \
	XORQ BX, R12 \
	MOVQ $0xbf58476d1ce4e5b9, BX \
	IMULQ BX, R12 \
	MOVQ R12, BX \
	SHRQ $27, BX \
	XORQ BX, R12 \
	MOVQ $0x94d049bb133111eb, BX \
	IMULQ BX, R12 \
	MOVQ R12, BX \
	SHRQ $31, BX \
	XORQ BX, R12 \
	VMOVQ R11, X3 \
	VPINSRQ $1, R12, X3, X3 \
	VPXOR (DI), X3, X4 \
	VMOVDQU X4, (DI) \
	VPBROADCASTQ R11, Z0

// XOR_LANE XORs X3 into the bucket whose byte offset from s is at off(SP).
#define XOR_LANE(off) \
	MOVQ off(SP), BX \
	VPXOR (DI)(BX*1), X3, X4 \
	VMOVDQU X4, (DI)(BX*1)

// GROUP hashes idx for eight columns with seeds seeds, keeps the lanes whose
// depth is below R (a bit of masks set in the hash), computes their bucket
// offsets from bases (16·(1 + c·R + 63) − 16·lzcnt(h & −h) =
// 16·(1 + c·R + ctz(h))) and XORs X3 into the eight buckets. Clobbers Z1,
// Z2, K1, BX, X4.
#define GROUP(seeds, masks, bases) \
	VPADDQ seeds, Z0, Z1 \
	VPSRLQ $30, Z1, Z2 \
	VPXORQ Z2, Z1, Z1 \
	VPMULLQ Z31, Z1, Z1 \
	VPSRLQ $27, Z1, Z2 \
	VPXORQ Z2, Z1, Z1 \
	VPMULLQ Z30, Z1, Z1 \
	VPSRLQ $31, Z1, Z2 \
	VPXORQ Z2, Z1, Z1 \
	VPTESTMQ masks, Z1, K1 \
	VPSUBQ Z1, Z29, Z2 \
	VPANDQ Z2, Z1, Z1 \
	VPLZCNTQ Z1, Z1 \
	VPSLLQ $4, Z1, Z1 \
	VMOVDQA64 Z27, Z2 \
	VPSUBQ Z1, bases, K1, Z2 \
	VMOVDQU64 Z2, 0(SP) \
	XOR_LANE(0) \
	XOR_LANE(8) \
	XOR_LANE(16) \
	XOR_LANE(24) \
	XOR_LANE(32) \
	XOR_LANE(40) \
	XOR_LANE(48) \
	XOR_LANE(56)

// LOAD_GROUP loads layout record k into the registers of register group k.
#define LOAD_GROUP(k, seeds, bases, masks) \
	VMOVDQU64 (k*192)(R10), seeds \
	VMOVDQU64 (k*192+64)(R10), bases \
	VMOVDQU64 (k*192+128)(R10), masks

// NEXT advances to the next neighbour id and loops to label while any is left.
#define NEXT(label) \
	ADDQ $4, SI \
	DECQ CX \
	JNZ label

TEXT ·applyBatchAVX512(SB), NOSPLIT, $192-64
	MOVQ s+0(FP), DI
	MOVQ nb+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ v+24(FP), R8
	MOVQ seed0+32(FP), R9
	MOVQ lay+40(FP), R10
	MOVQ groups+48(FP), R13
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
	VPBROADCASTQ AX, Z27
	VPADDQ scratchLanes<>(SB), Z27, Z27 // offsets of the scratch buckets from s

	// Sketches have at least 18 columns, so 3 or 4 groups (up to 32
	// columns) run from registers; any other count from memory.
	CMPQ R13, $3
	JEQ load3
	CMPQ R13, $4
	JNE memory
	LOAD_GROUP(3, Z9, Z13, Z17)

load3:
	LOAD_GROUP(2, Z8, Z12, Z16)
	LOAD_GROUP(1, Z7, Z11, Z15)
	LOAD_GROUP(0, Z6, Z10, Z14)
	CMPQ R13, $3
	JEQ index3

index4:
	NEXT_INDEX
	GROUP(Z6, Z14, Z10)
	GROUP(Z7, Z15, Z11)
	GROUP(Z8, Z16, Z12)
	GROUP(Z9, Z17, Z13)
	NEXT(index4)
	JMP done

index3:
	NEXT_INDEX
	GROUP(Z6, Z14, Z10)
	GROUP(Z7, Z15, Z11)
	GROUP(Z8, Z16, Z12)
	NEXT(index3)
	JMP done

	// Other group counts: the layout is read from memory, group by group.
memory:
	IMULQ $192, R13
	ADDQ R10, R13 // end of the layout

memindex:
	NEXT_INDEX
	MOVQ R10, DX

memgroup:
	VMOVDQU64 64(DX), Z5
	GROUP((DX), 128(DX), Z5)
	ADDQ $192, DX
	CMPQ DX, R13
	JLO memgroup
	NEXT(memindex)

done:
	VZEROUPPER
	RET

// scratchLanes holds the byte offset of each lane's scratch bucket from the
// first one.
DATA scratchLanes<>+0(SB)/8, $0
DATA scratchLanes<>+8(SB)/8, $16
DATA scratchLanes<>+16(SB)/8, $32
DATA scratchLanes<>+24(SB)/8, $48
DATA scratchLanes<>+32(SB)/8, $64
DATA scratchLanes<>+40(SB)/8, $80
DATA scratchLanes<>+48(SB)/8, $96
DATA scratchLanes<>+56(SB)/8, $112
GLOBL scratchLanes<>(SB), RODATA|NOPTR, $64
