package sketch

import (
	"math/rand/v2"
	"testing"
)

// isZero reports whether every bucket of s is zero.
func isZero(s []Bucket) bool {
	for _, b := range s {
		if b != (Bucket{}) {
			return false
		}
	}
	return true
}

func mustParams(t testing.TB, v uint32, f float64, seed uint64) Params {
	t.Helper()
	p, err := NewParams(v, f, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// randomNeighbors returns k distinct vertices of [0, n) other than v.
func randomNeighbors(rng *rand.Rand, n, v uint32, k int) []uint32 {
	seen := make(map[uint32]bool, k)
	out := make([]uint32, 0, k)
	for len(out) < k {
		u := rng.Uint32N(n)
		if u == v || seen[u] {
			continue
		}
		seen[u] = true
		out = append(out, u)
	}
	return out
}

// compatible reports whether sketches built with p and q can be merged:
// the same vertices, geometry and seed.
func compatible(p, q Params) bool {
	return p.vertices == q.vertices && p.rows == q.rows && p.columns == q.columns && p.seed == q.seed
}
