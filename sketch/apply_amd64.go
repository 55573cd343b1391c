//go:build !weakhash && !purego

package sketch

import "golang.org/x/sys/cpu"

// haveAVX512 reports whether ApplyBatch may use applyBatchAVX512: it needs
// AVX-512 F (64-bit lanes), DQ (VPMULLQ), CD (VPLZCNTQ) and VL, with the
// operating system saving the wide registers (x/sys/cpu checks XCR0).
var haveAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ &&
	cpu.X86.HasAVX512CD && cpu.X86.HasAVX512VL

// applyBatchAVX512 computes eight column hashes per instruction: the same
// splitmix64 hashes and buckets as updateIndex, bit for bit, for the n
// neighbour ids at nb of vertex v. lay and groups describe the columns (see
// Params.lanes). Implemented in apply_amd64.s.
//
//go:noescape
func applyBatchAVX512(s *Bucket, nb *uint32, n int, v uint64, seed0 uint64, lay *uint64, groups int, prefetch int)

// applyBatchFast runs the AVX-512 kernel when the CPU has it and reports
// whether it did.
func (p Params) applyBatchFast(s []Bucket, v uint32, neighbors []uint32) bool {
	l := p.lanes
	if !haveAVX512 || len(neighbors) == 0 {
		return false
	}
	pf := 0
	if len(neighbors) >= prefetchMinBatch {
		pf = len(s) * BucketBytes
	}
	applyBatchAVX512(&s[0], &neighbors[0], len(neighbors), uint64(v), p.seeds[0], &l.words[0], len(l.words)/laneRecord, pf)
	return true
}

// Kernel names the code that ApplyBatch runs on this machine: "avx512" for
// the assembly kernel, "portable" for the Go loop.
func Kernel() string {
	if haveAVX512 {
		return "avx512"
	}
	return "portable"
}
