//go:build weakhash

package sketch

// hash, under the weakhash build tag only, is a deliberately weak hash: one
// multiplication by the seed made odd, with no mixing. Its low bits depend
// only on the low bits of the index, so column depths are skewed and
// correlated and the checksum is nearly linear. It exists to prove that the
// statistical tests catch a bad hash:
//
//	go test -tags weakhash -run Statistical ./sketch   # must FAIL
func hash(idx, seed uint64) uint64 { return idx * (seed | 1) }
