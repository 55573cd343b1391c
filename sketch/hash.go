//go:build !weakhash

package sketch

import "math/bits"

// hash is the seeded 64-bit hash of an edge index used for checksums and
// for the keys of the column hashes: the splitmix64 finalizer of idx plus a
// seed. Distinct seeds give hash functions whose outputs are independent
// for all practical purposes; the statistical tests check the depth
// distribution, pairwise column independence and checksum collisions.
func hash(idx, seed uint64) uint64 { return mix64(idx + seed) }

// columnHash returns the hash of an edge index for the column with seed s,
// given the index's key k = hash(idx, seeds[keySeed]): the 64-bit product
// of the two 32-bit halves of k XOR s, with its halves swapped.
//
// The key carries the mixing: hash is a bijection of the index whose bits
// all depend on every index bit, so the structure of nearby indices (a
// vertex's consecutive neighbours) is gone before any column sees it. The
// column step only has to make columns independent of one another: the
// product of two key-dependent halves is not linear in the key, and the
// swap puts its middle bits 32 to 63, which depend on every bit of both
// halves, where depth reads first (the trailing zeros). The low half of a
// product has the trailing zeros of both factors and is read only when
// the high half is zero (probability about 2^−32).
//
// A 32×32→64 multiply is one instruction on every amd64 CPU, scalar
// (IMUL) and in SIMD lanes (VPMULUDQ, AVX2 and AVX-512), where a 64-bit
// lane multiply is three µops on Intel or does not exist (AVX2); see
// results/perf-notes.md. The kernels in apply_amd64.s compute the same
// value.
func columnHash(k, s uint64) uint64 {
	x := k ^ s
	return bits.RotateLeft64((x&0xffffffff)*(x>>32), 32)
}
