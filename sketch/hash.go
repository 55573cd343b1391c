//go:build !weakhash

package sketch

// hash is the seeded 64-bit hash of an edge index used for checksums and
// column depths: the splitmix64 finalizer of idx plus a seed. Distinct
// seeds give hash functions whose outputs are independent for all practical
// purposes; the statistical tests check the depth distribution, pairwise
// column independence and checksum collisions.
func hash(idx, seed uint64) uint64 { return mix64(idx + seed) }
