package streamgen

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRadixSort(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 100, 5000} {
		for _, gen := range []func() uint64{
			r.Uint64,
			func() uint64 { return r.Uint64N(16) }, // few digits vary
			func() uint64 { return 0xabc<<52 | r.Uint64N(1<<40) }, // constant top digits
			func() uint64 { return 7 },                            // all equal
		} {
			a := make([]uint64, n)
			for i := range a {
				a[i] = gen()
			}
			want := slices.Sorted(slices.Values(a))
			radixSort(a, make([]uint64, n))
			if !slices.Equal(a, want) {
				t.Fatalf("n=%d: not sorted", n)
			}
		}
	}
}

// BenchmarkSort compares radixSort with slices.Sort on one time slice of
// 2^21 records whose top 8 bits are equal.
func BenchmarkSort(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	src := make([]uint64, sliceUpdates)
	for i := range src {
		src[i] = 0x5a<<56 | r.Uint64N(1<<56)
	}
	a := make([]uint64, len(src))
	scratch := make([]uint64, len(src))
	b.Run("sort=radix", func(b *testing.B) {
		b.SetBytes(int64(8 * len(src)))
		for b.Loop() {
			copy(a, src)
			radixSort(a, scratch)
		}
	})
	b.Run("sort=pdq", func(b *testing.B) {
		b.SetBytes(int64(8 * len(src)))
		for b.Loop() {
			copy(a, src)
			slices.Sort(a)
		}
	})
}
