//go:build !weakhash && !purego

package sketch

import (
	"math/bits"
	"unsafe"

	"golang.org/x/sys/cpu"
)

// haveAVX512 reports whether the CPU can run applyBatchAVX512: it needs
// AVX-512 F (64-bit lanes), DQ, CD (VPLZCNTQ) and VL, with the operating
// system saving the wide registers (x/sys/cpu checks XCR0).
var haveAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ &&
	cpu.X86.HasAVX512CD && cpu.X86.HasAVX512VL

// haveAVX2 reports whether the CPU can run applyBatchAVX2: AVX2 with the
// ymm registers saved by the OS, and BMI1 (TZCNT).
var haveAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasBMI1

// kernelMissing returns "" if this CPU can run kernel k, or what it lacks.
func kernelMissing(k int) string {
	switch {
	case k == kernelAVX512 && !haveAVX512:
		return "needs AVX-512 F, DQ, CD and VL, which this CPU (or its OS) lacks"
	case k == kernelAVX2 && !haveAVX2:
		return "needs AVX2 and BMI1, which this CPU (or its OS) lacks"
	}
	return ""
}

// applyBatchAVX512 hashes eight columns per instruction: the same buckets as
// updateIndex, bit for bit, for the n neighbour ids at nb of vertex v. lay
// and groups describe the columns (see Params.lanes). Implemented in
// apply_amd64.s.
//
//go:noescape
func applyBatchAVX512(s *Bucket, nb *uint32, n int, v uint64, seed0, seedK uint64, lay *uint64, groups int, prefetch int, slot, scratch int)

// applyBatchAVX2 hashes four columns per instruction and finds the depths
// with scalar TZCNT: the same buckets as updateIndex, bit for bit. It reads
// the column seeds from lay (see Params.lanes); rowBytes is 16·R.
// Implemented in apply_amd64.s.
//
//go:noescape
func applyBatchAVX2(s *Bucket, nb *uint32, n int, v uint64, seed0, seedK uint64, lay *uint64, columns int, rowBytes int, prefetch int, slot int)

// applyBatchFast runs the selected assembly kernel, if any, and reports
// whether it did.
func (p Params) applyBatchFast(s []Bucket, v uint32, neighbors []uint32) bool {
	k := kernel.Load()
	l := p.lanes
	if k == kernelPortable || len(neighbors) == 0 {
		return false
	}
	pf := 0
	if len(neighbors) >= prefetchMinBatch {
		pf = len(s) * BucketBytes
	}
	slot, scratch := coldLines(s, p.rows, p.columns)
	if k == kernelAVX512 {
		applyBatchAVX512(&s[0], &neighbors[0], len(neighbors), uint64(v), p.seeds[0], p.seeds[keySeed],
			&l.words[0], len(l.words)/laneRecord, pf, slot, scratch)
	} else {
		applyBatchAVX2(&s[0], &neighbors[0], len(neighbors), uint64(v), p.seeds[0], p.seeds[keySeed],
			&l.words[0], p.columns, BucketBytes*p.rows, pf, slot)
	}
	return true
}

// hotRows is the number of rows at the top of each column that coldLines
// treats as hot: an index lands in rows 0 to 3 of a column with probability
// 15/16.
const hotRows = 4

// coldLines returns two offsets modulo 4096, multiples of 64, for the
// kernels' scratch memory in their stack frames: slot, a 64-byte line, and
// scratch, two adjacent lines, such that no hot bucket of sketch s (the
// deterministic bucket and rows 0 to 3 of every column) lies at the same
// offset modulo 4096. A load whose address matches an older, pending store
// in its low 12 bits can wait for it (4K aliasing); with the kernel's stack
// memory on a hot bucket's offset, BenchmarkApplyBatch ran at 34 M index
// updates/s instead of 55-65 on the AMD development machine, depending only
// on where the stack and the sketch lay (results/perf-notes.md). Where every
// line is hot (more than about 40 columns), it returns lines as good as any.
func coldLines(s []Bucket, rows, columns int) (slot, scratch int) {
	base := uintptr(unsafe.Pointer(&s[0]))
	var hot uint64 // bit i: line i modulo 4096 holds a hot bucket
	mark := func(off, n int) {
		first := (base + uintptr(off)) % 4096 / 64
		last := (base + uintptr(off+n-1)) % 4096 / 64
		hot |= 1<<first | 1<<last
	}
	mark(0, BucketBytes)
	n := BucketBytes * min(rows, hotRows)
	for c := range columns {
		mark(BucketBytes*(1+c*rows), n)
	}
	free := ^hot
	if free == 0 {
		return 0, 64
	}
	line := bits.TrailingZeros64(free)
	free &^= 1 << line
	pairs := free & bits.RotateLeft64(free, -1) // bit i: lines i and i+1 free
	if pairs == 0 {
		return 64 * line, 64 * ((line + 1) % 64)
	}
	return 64 * line, 64 * bits.TrailingZeros64(pairs)
}
