//go:build !weakhash && !purego

package sketch

import "golang.org/x/sys/cpu"

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
func applyBatchAVX512(s *Bucket, nb *uint32, n int, v uint64, seed0, seedK uint64, lay *uint64, groups int, prefetch int)

// applyBatchAVX2 hashes four columns per instruction and finds the depths
// with scalar TZCNT: the same buckets as updateIndex, bit for bit. It reads
// the column seeds from lay (see Params.lanes); rowBytes is 16·R.
// Implemented in apply_amd64.s.
//
//go:noescape
func applyBatchAVX2(s *Bucket, nb *uint32, n int, v uint64, seed0, seedK uint64, lay *uint64, columns int, rowBytes int, prefetch int)

// applyBatchFast runs the selected assembly kernel, if any, and reports
// whether it did.
func (p *Params) applyBatchFast(s []Bucket, v uint32, neighbors []uint32) bool {
	k := kernel.Load()
	l := p.lanes
	if k == kernelPortable || len(neighbors) == 0 || l == nil || p.Rows != l.rows || p.Columns != l.columns {
		return false
	}
	pf := 0
	if len(neighbors) >= prefetchMinBatch {
		pf = len(s) * BucketBytes
	}
	if k == kernelAVX512 {
		applyBatchAVX512(&s[0], &neighbors[0], len(neighbors), uint64(v), p.seeds[0], p.seeds[keySeed],
			&l.words[0], len(l.words)/laneRecord, pf)
	} else {
		applyBatchAVX2(&s[0], &neighbors[0], len(neighbors), uint64(v), p.seeds[0], p.seeds[keySeed],
			&l.words[0], p.Columns, BucketBytes*p.Rows, pf)
	}
	return true
}
