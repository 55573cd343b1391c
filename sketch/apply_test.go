package sketch

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// applyBatchPortable is the loop ApplyBatch runs without an assembly
// kernel: the reference every kernel must match bit for bit.
func applyBatchPortable(p *Params, s []Bucket, v uint32, neighbors []uint32) {
	for _, u := range neighbors {
		updateIndex(p.seeds, p.rows, p.columns, s, EdgeIndex(v, u))
	}
}

// forEachKernel runs f under every kernel this CPU and build can run, and
// then restores the kernel that was selected.
func forEachKernel(t testing.TB, f func(kernel string)) {
	t.Helper()
	was := Kernel()
	defer func() {
		if err := SetKernel(was); err != nil {
			t.Fatal(err)
		}
	}()
	for _, k := range Kernels() {
		if err := SetKernel(k); err != nil {
			t.Fatal(err)
		}
		f(k)
	}
}

// TestApplyBatchMatchesPortable: ApplyBatch under every kernel this CPU has
// gives the same buckets as the portable loop, over geometries whose column
// count is and is not a multiple of 4 and 8, with 3, 4 (AVX-512 columns in
// registers) and more groups of 8 columns (in memory), and tiny vertex
// counts whose few rows make depths past the last row common (V = 2 has
// R = 1, so half of all column hashes fall off the sketch).
func TestApplyBatchMatchesPortable(t *testing.T) {
	t.Logf("kernels on this CPU and build: %v", Kernels())
	forEachKernel(t, func(kernel string) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, g := range []struct {
			v uint32
			f float64
		}{{2, 1}, {3, 1}, {5, 2}, {100, 1}, {1 << 13, 1}, {1 << 15, 1}, {1 << 17, 1},
			{1 << 17, 1.1}, {1 << 17, 1.3}, {1 << 17, 1.5}, {1 << 17, 2}, {1 << 20, 3.3}, {1<<32 - 1, 1}, {1<<32 - 1, 20}} {
			p := mustParams(t, g.v, g.f, rng.Uint64())
			per := p.BucketsPerVertex()
			for trial := range 20 {
				v := rng.Uint32N(g.v)
				var nb []uint32
				k := rng.IntN(400)
				if trial%5 == 4 { // past prefetchMinBatch: the kernel prefetches the sketch
					k = prefetchMinBatch + rng.IntN(4000)
				}
				switch {
				case uint64(g.v) <= 2*uint64(k):
					for range k {
						if u := rng.Uint32N(g.v); u != v {
							nb = append(nb, u)
						}
					}
				default:
					nb = randomNeighbors(rng, g.v, v, k)
				}
				if trial == 0 && g.v > 2 { // the extreme ids on both sides of v
					nb = append(nb[:0], 0, g.v-1)
					if v == 0 || v == g.v-1 {
						v = g.v / 2
					}
				}
				got, want := make([]Bucket, per), make([]Bucket, per)
				for i := range got { // start from a non-zero sketch
					got[i] = Bucket{rng.Uint64(), rng.Uint64()}
				}
				copy(want, got)
				p.ApplyBatch(got, v, nb)
				applyBatchPortable(&p, want, v, nb)
				if i := firstDiff(got, want); i >= 0 {
					t.Fatalf("kernel %s, V=%d f=%v (R=%d S=%d) v=%d, %d neighbours: bucket %d is %x, want %x",
						kernel, g.v, g.f, p.rows, p.columns, v, len(nb), i, got[i], want[i])
				}
			}
		}
	})
}

func firstDiff(a, b []Bucket) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}

// FuzzApplyBatch compares ApplyBatch under every kernel this CPU has with
// the portable loop on arbitrary vertex counts, factors, seeds and
// neighbour lists.
func FuzzApplyBatch(f *testing.F) {
	f.Add(uint32(2), uint8(10), uint64(1), uint32(0), []byte{1, 0, 0, 0})
	f.Add(uint32(1<<17), uint8(10), uint64(7), uint32(99), []byte{1, 2, 3, 4, 5, 6, 7, 8, 255, 255, 1, 0})
	f.Add(uint32(1<<32-1), uint8(40), uint64(0), uint32(1<<31), []byte{0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, vertices uint32, f10 uint8, seed uint64, v uint32, raw []byte) {
		p, err := NewParams(max(vertices, 2), float64(max(f10, 1))/10, seed)
		if err != nil {
			return
		}
		v %= p.vertices
		var nb []uint32
		for i := 0; i+4 <= len(raw); i += 4 {
			u := (uint32(raw[i]) | uint32(raw[i+1])<<8 | uint32(raw[i+2])<<16 | uint32(raw[i+3])<<24) % p.vertices
			if u != v {
				nb = append(nb, u)
			}
		}
		want := make([]Bucket, p.BucketsPerVertex())
		applyBatchPortable(&p, want, v, nb)
		forEachKernel(t, func(kernel string) {
			got := make([]Bucket, p.BucketsPerVertex())
			p.ApplyBatch(got, v, nb)
			if !slices.Equal(got, want) {
				t.Fatalf("kernel %s, V=%d S=%d R=%d v=%d neighbours %v: bucket %d differs",
					kernel, p.vertices, p.columns, p.rows, v, nb, firstDiff(got, want))
			}
		})
	})
}
