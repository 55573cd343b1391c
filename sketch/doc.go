// Package sketch implements the per-vertex linear sketches of sketchcc: one
// CameoSketch-style ℓ0 sampler per vertex over its incidence vector, kept for
// all vertices in one contiguous slab. Boruvka's algorithm over them is
// package cc's.
//
// The sketch is the AGM sketch (Ahn, Guha, McGregor, "Analyzing graph
// structure via linear measurements", SODA 2012) in the column layout of
// GraphZeppelin (Tench et al., SIGMOD 2022): XORing the sketches of a vertex
// set S cancels every edge inside S and leaves exactly the edges crossing
// the cut of S, which is what Boruvka samples.
//
// # Geometry (for V vertices, sketch factor f)
//
//	Rows     R = ceil(log2(V·(V−1)/2)) + 1      buckets per column
//	Columns  S = max(18, ceil(f·log2(V)/0.737)) one ℓ0 sampler per Boruvka round
//	Buckets  S·R + 1 per vertex: one deterministic bucket, then column-major
//	Bytes    16 per bucket (Alpha, Gamma uint64)
//
// For V = 2^17: R = 34, S = 24, 817 buckets, 13,072 bytes per vertex.
//
// A vertex's sketch is the slice s of BucketsPerVertex buckets: s[0] is the
// deterministic bucket, which receives every index, and s[1+c·R+d] is bucket
// d of column c. An index idx goes into bucket d = ctz(hcol_c(idx)) of
// column c when d < R. Every bucket XORs in (idx, hc(idx)); a bucket is good
// (holds exactly one index, with probability 1 − 2^−64 per check) when
// Gamma == hc(Alpha) and Alpha != 0.
//
// The checksum is hc(idx) = mix64(idx + seed_0), the splitmix64 finalizer.
// The column hashes start from a key k = mix64(idx + seed_k) with a seed of
// its own, and hcol_c(idx) is the product of the two 32-bit halves of
// k XOR seed_c, halves swapped (columnHash): one 32×32→64 multiply per
// column, cheap in scalar code and in AVX2 and AVX-512 lanes alike. All
// seeds are independent, derived from Params.Seed(). All sketches that
// are merged must share Params.
//
// The package is single-threaded and starts no goroutine. Sketches are
// deterministic given Params and not safe for concurrent use; the caller
// serialises access to one vertex's buckets (package store does).
package sketch
