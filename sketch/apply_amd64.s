//go:build !weakhash && !purego

#include "textflag.h"
#include "prefetch_amd64.h"

// Both kernels compute, for each of the n neighbour ids u at nb, the edge
// index idx = min(v,u)<<32 | max(v,u), its checksum g = mix64(idx + seed0)
// and its key k = mix64(idx + seedK), XOR (idx, g) into s[0], and XOR it
// into bucket 1 + c·R + d of every column c whose depth
// d = ctz(columnHash(k, seed_c)) is below R, where columnHash(k, s) is the
// product of the 32-bit halves of k XOR s with its halves swapped (see
// hash.go). They write the same buckets as updateIndex, bit for bit.
//
// The column hash is two shuffles, one XOR and one 32×32→64 multiply per
// lane (VPMULUDQ), one µop each on Intel and AMD; results/perf-notes.md
// counts the µops and ports per index.

// LOAD_ARGS loads the arguments that both kernels take first: s in DI, nb
// in SI, n in CX, v in R8, seed0 in R9 and lay in R10.
#define LOAD_ARGS \
	MOVQ s+0(FP), DI \
	MOVQ nb+8(FP), SI \
	MOVQ n+16(FP), CX \
	MOVQ v+24(FP), R8 \
	MOVQ seed0+32(FP), R9 \
	MOVQ lay+48(FP), R10

// COLD(line, reg) sets reg to the address in the frame, from 0(SP), whose
// offset modulo 4096 is line (see coldLines in apply_amd64.go): the frame
// spans 4096 bytes more than the memory placed there. Clobbers AX.
#define COLD(line, reg) \
	LEAQ 0(SP), AX \
	MOVQ line, reg \
	SUBQ AX, reg \
	ANDQ $4095, reg \
	ADDQ AX, reg

// MIX64 applies the splitmix64 finalizer to r in place. Clobbers t.
#define MIX64(r, t) \
	MOVQ r, t \
	SHRQ $30, t \
	XORQ t, r \
	MOVQ $0xbf58476d1ce4e5b9, t \
	IMULQ t, r \
	MOVQ r, t \
	SHRQ $27, t \
	XORQ t, r \
	MOVQ $0x94d049bb133111eb, t \
	IMULQ t, r \
	MOVQ r, t \
	SHRQ $31, t \
	XORQ t, r

// NEXT_INDEX reads the next neighbour id at SI (v in R8, seed0 in R9,
// seedK from the arguments) and leaves idx in R11, the key k in AX and
// X3 = (idx, g);
// it XORs X3 into the deterministic bucket s[0] at DI. Clobbers BX, DX,
// R12, X4.
#define NEXT_INDEX \
	MOVL (SI), AX \
	MOVQ AX, R11 \
	MOVQ R8, R12 \
	CMPQ AX, R8 \
	CMOVQHI R8, R11 \
	CMOVQHI AX, R12 \
	SHLQ $32, R11 \
	ORQ R12, R11 \
	LEAQ (R11)(R9*1), R12 \
	MOVQ seedK+40(FP), AX \
	ADDQ R11, AX \
	MIX64(R12, BX) \
	MIX64(AX, DX) \
	VMOVQ R11, X3 \
	VPINSRQ $1, R12, X3, X3 \
	VPXOR (DI), X3, X4 \
	VMOVDQU X4, (DI)

// func applyBatchAVX512(s *Bucket, nb *uint32, n int, v uint64, seed0, seedK uint64, lay *uint64, groups int, prefetch int, slot, scratch int)
//
// lay holds groups records of 24 words (see Params.laneLayout): 8 column
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
// Every path computes the per-index values (edge index, checksum, key:
// two splitmix64 finalizers) for eight ids at once in zmm lanes (BLOCK8,
// with VPMULLQ), then takes them one lane at a time, instead of about 36
// scalar instructions per index (NEXT_INDEX, still used for the last
// n mod 8 ids).
//
// Frame: 4096+192 bytes, in which R14 points to the 64 bytes that hold
// the bucket byte offsets of the current group, at offset slot modulo
// 4096, and the eight lanes' scratch buckets are 128 bytes at offset
// scratch modulo 4096: offsets that no hot bucket of s has (coldLines), so
// that their loads do not wait on a bucket store that matches them in the
// low 12 address bits (4K aliasing).

// XOR_LANE XORs X3 into the bucket whose byte offset from s is at off(R14).
#define XOR_LANE(off) \
	MOVQ off(R14), BX \
	VPXOR (DI)(BX*1), X3, X4 \
	VMOVDQU X4, (DI)(BX*1)

// GROUP hashes the key in Z0 for eight columns with seeds seeds, keeps the
// lanes whose depth is below R (a bit of masks set in the hash), computes
// their bucket offsets from bases (16·(1 + c·R + 63) − 16·lzcnt(h & −h) =
// 16·(1 + c·R + ctz(h))) and XORs X3 into the eight buckets. The offsets
// go to the frame as two 32-byte stores, not one 64-byte store: AMD Zen 4
// does not forward a 64-byte store to the 8-byte loads that read it back,
// which then wait for the store to retire (33 M index updates/s on the
// AMD EPYC family 25 model 17 of results/kernels-2026-12-06.md against 55 M
// with 32-byte stores); other CPUs forward both. Clobbers Z1, Z2, K1, BX,
// X4.
#define GROUP(seeds, masks, bases) \
	VPXORQ seeds, Z0, Z1 \
	VPSHUFD $0xb1, Z1, Z2 \
	VPMULUDQ Z2, Z1, Z1 \
	VPSHUFD $0xb1, Z1, Z1 \
	VPTESTMQ masks, Z1, K1 \
	VPSUBQ Z1, Z29, Z2 \
	VPANDQ Z2, Z1, Z1 \
	VPLZCNTQ Z1, Z1 \
	VPSLLQ $4, Z1, Z1 \
	VMOVDQA64 Z27, Z2 \
	VPSUBQ Z1, bases, K1, Z2 \
	VMOVDQU Y2, 0(R14) \
	VEXTRACTI64X4 $1, Z2, Y1 \
	VMOVDQU Y1, 32(R14) \
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

// MIX64V applies the splitmix64 finalizer to the eight lanes of r in
// place, with its multipliers broadcast in Z24 and Z25. Clobbers t.
#define MIX64V(r, t) \
	VPSRLQ $30, r, t \
	VPXORQ t, r, r \
	VPMULLQ Z24, r, r \
	VPSRLQ $27, r, t \
	VPXORQ t, r, r \
	VPMULLQ Z25, r, r \
	VPSRLQ $31, r, t \
	VPXORQ t, r, r

// BLOCK8 computes NEXT_INDEX's values for the eight neighbour ids at SI at
// once, lane i for id i: the edge indices in Z19, their checksums in Z20
// and their keys in Z18 (v, seed0 and seedK broadcast in Z21-Z23).
// Clobbers Z1, Z2.
#define BLOCK8 \
	VPMOVZXDQ (SI), Z19 \
	VPMINUQ Z19, Z21, Z1 \
	VPMAXUQ Z19, Z21, Z2 \
	VPSLLQ $32, Z1, Z1 \
	VPORQ Z2, Z1, Z19 \
	VPADDQ Z19, Z22, Z20 \
	MIX64V(Z20, Z1) \
	VPADDQ Z19, Z23, Z18 \
	MIX64V(Z18, Z2)

// BLOCK_SETUP broadcasts what BLOCK8 needs: v (R8) in Z21, seed0 (R9) in
// Z22, seedK in Z23 and the finalizer's multipliers in Z24 and Z25.
// Clobbers AX.
#define BLOCK_SETUP \
	VPBROADCASTQ R8, Z21 \
	VPBROADCASTQ R9, Z22 \
	MOVQ seedK+40(FP), AX \
	VPBROADCASTQ AX, Z23 \
	MOVQ $0xbf58476d1ce4e5b9, AX \
	VPBROADCASTQ AX, Z24 \
	MOVQ $0x94d049bb133111eb, AX \
	VPBROADCASTQ AX, Z25

// LANE_INDEX takes lane 0 of a block: the key broadcast in Z0 and X3 =
// (idx, g), XORed into the deterministic bucket s[0] at DI; then it
// rotates the block's registers by one lane. Clobbers X4.
#define LANE_INDEX \
	VPBROADCASTQ X18, Z0 \
	VPUNPCKLQDQ X20, X19, X3 \
	VPXOR (DI), X3, X4 \
	VMOVDQU X4, (DI) \
	VALIGNQ $1, Z18, Z18, Z18 \
	VALIGNQ $1, Z19, Z19, Z19 \
	VALIGNQ $1, Z20, Z20, Z20

// GROUPS3 and GROUPS4 apply GROUP to the 3 or 4 groups of columns whose
// layout is in registers.
#define GROUPS3 \
	GROUP(Z6, Z14, Z10) \
	GROUP(Z7, Z15, Z11) \
	GROUP(Z8, Z16, Z12)

#define GROUPS4 \
	GROUPS3 \
	GROUP(Z9, Z17, Z13)

// MEM_GROUPS applies GROUP to every group of the layout in memory, from
// R10 to R13. Clobbers DX, Z5.
#define MEM_GROUPS(loop) \
	MOVQ R10, DX \
loop: \
	VMOVDQU64 64(DX), Z5 \
	GROUP((DX), 128(DX), Z5) \
	ADDQ $192, DX \
	CMPQ DX, R13 \
	JLO loop

// BLOCK_START jumps to tail, the one-id-at-a-time loop, when fewer than
// eight ids are left, and otherwise computes the next block (BLOCK8) and
// sets R12 to its eight lanes.
#define BLOCK_START(tail) \
	CMPQ CX, $8 \
	JLO tail \
	BLOCK8 \
	MOVQ $8, R12

// BLOCK_END loops to lane for the block's next lane, then to block for
// the next block, and jumps to done after the last id.
#define BLOCK_END(lane, block) \
	DECQ R12 \
	JNZ lane \
	ADDQ $32, SI \
	SUBQ $8, CX \
	JNZ block \
	JMP done

TEXT ·applyBatchAVX512(SB), 0, $4288-88
	LOAD_ARGS
	MOVQ groups+56(FP), R13
	TESTQ CX, CX
	JZ done

	MOVQ prefetch+64(FP), AX
	PREFETCH(pfloop, pfcheck)

	COLD(slot+72(FP), R14)
	COLD(scratch+80(FP), BX)
	SUBQ DI, BX
	VPXORQ Z29, Z29, Z29
	VPBROADCASTQ BX, Z27
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
	// Every path takes the ids eight at a time (BLOCK8), then the last
	// few one at a time.
	BLOCK_SETUP
	CMPQ R13, $3
	JEQ block3

block4:
	BLOCK_START(index4)

lane4:
	LANE_INDEX
	GROUPS4
	BLOCK_END(lane4, block4)

block3:
	BLOCK_START(index3)

lane3:
	LANE_INDEX
	GROUPS3
	BLOCK_END(lane3, block3)

index4:
	NEXT_INDEX
	VPBROADCASTQ AX, Z0
	GROUPS4
	NEXT(index4)
	JMP done

index3:
	NEXT_INDEX
	VPBROADCASTQ AX, Z0
	GROUPS3
	NEXT(index3)
	JMP done

	// Other group counts: the layout is read from memory, group by group.
memory:
	IMULQ $192, R13
	ADDQ R10, R13 // end of the layout
	BLOCK_SETUP

memblock:
	BLOCK_START(memindex)

memlane:
	LANE_INDEX
	MEM_GROUPS(memlanegroup)
	BLOCK_END(memlane, memblock)

memindex:
	NEXT_INDEX
	VPBROADCASTQ AX, Z0
	MEM_GROUPS(memgroup)
	NEXT(memindex)

done:
	VZEROUPPER
	RET

// func applyBatchAVX2(s *Bucket, nb *uint32, n int, v uint64, seed0, seedK uint64, lay *uint64, columns int, rowBytes int, prefetch int, slot int)
//
// lay is the same layout as for applyBatchAVX512, of which this kernel
// reads only the column seeds (words 24k to 24k+7 for columns 8k to
// 8k+7). rowBytes is 16·R, the bytes of one column. AVX2 has no lane
// count of trailing zeros and no mask registers, so the four hashes of a
// ymm go through the stack to TZCNT, and a depth of R or more (probability
// 2^−R per column, predicted well) skips its bucket with a branch.
//
// Frame: 4096+64 bytes, in which R14 points to the 32 bytes that hold the
// 4 hashes of the current group of columns, at offset slot modulo 4096,
// which no hot bucket of s has (see applyBatchAVX512).

// LANE XORs X3 into the bucket of the hash at off(R14), for the column
// whose row 0 is at BX, and moves BX to the next column; it jumps to last
// after the last column (R11 counts the columns left). Clobbers AX, X4.
#define LANE(off, skip, last) \
	MOVQ off(R14), AX \
	TZCNTQ AX, AX \
	SHLQ $4, AX \
	CMPQ AX, R13 \
	JAE skip \
	VPXOR (BX)(AX*1), X3, X4 \
	VMOVDQU X4, (BX)(AX*1) \
skip: \
	ADDQ R13, BX \
	DECQ R11 \
	JZ last

// HASH4 hashes the key in Y0 for the four columns whose seeds are at
// seeds and leaves the hashes at 0(R14). Clobbers Y1, Y2.
#define HASH4(seeds) \
	VPXOR seeds, Y0, Y1 \
	VPSHUFD $0xb1, Y1, Y2 \
	VPMULUDQ Y2, Y1, Y1 \
	VPSHUFD $0xb1, Y1, Y1 \
	VMOVDQU Y1, 0(R14)

TEXT ·applyBatchAVX2(SB), 0, $4160-88
	LOAD_ARGS
	MOVQ rowBytes+64(FP), R13
	TESTQ CX, CX
	JZ done2

	MOVQ prefetch+72(FP), AX
	PREFETCH(pfloop2, pfcheck2)
	COLD(slot+80(FP), R14)

index2:
	NEXT_INDEX
	VMOVQ AX, X0
	VPBROADCASTQ X0, Y0
	MOVQ R10, DX         // layout record of columns 8k to 8k+7
	LEAQ 16(DI), BX      // row 0 of column 0
	MOVQ columns+56(FP), R11

group2:
	HASH4((DX))
	LANE(0, l0, last2)
	LANE(8, l1, last2)
	LANE(16, l2, last2)
	LANE(24, l3, last2)
	HASH4(32(DX))
	LANE(0, l4, last2)
	LANE(8, l5, last2)
	LANE(16, l6, last2)
	LANE(24, l7, last2)
	ADDQ $192, DX
	JMP group2

last2:
	NEXT(index2)

done2:
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
