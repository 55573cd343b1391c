//go:build weakhash

package sketch

// hash and columnHash, under the weakhash build tag only, are deliberately
// weak: hash is one multiplication by the seed made odd, with no mixing,
// and columnHash drops its multiplication (the seed XORed into the key).
// Their low bits depend only on the low bits of the index, so column depths
// are skewed and correlated and the checksum is nearly linear. They exist to
// prove that the statistical tests catch a bad hash:
//
//	go test -tags weakhash -run Statistical ./sketch   # must FAIL
func hash(idx, seed uint64) uint64 { return idx * (seed | 1) }

func columnHash(k, s uint64) uint64 { return k ^ s }
