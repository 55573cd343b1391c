package sketch

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkApplySmallBatches applies small batches to vertices of a table
// larger than the caches, in random vertex order: the shape of a query's
// flush, where every batch first has to bring its sketch into cache.
func BenchmarkApplySmallBatches(b *testing.B) {
	const n = 1 << 15
	p := mustParams(b, n, 1, 1)
	full := p.BytesPerVertex() / 4 // a full batch at batch factor 1
	for _, size := range []int{32, 214, 1000, full} {
		b.Run("batch="+itoa(size), func(b *testing.B) {
			tab := NewTable(p)
			for v := range uint32(n) { // fault every page in
				tab.Sketch(v)[0].Alpha = 1
			}
			rng := rand.New(rand.NewPCG(1, 2))
			nb := randomNeighbors(rng, n, 0, size)
			order := rng.Perm(n)
			i := 0
			b.ReportAllocs()
			for b.Loop() {
				v := uint32(order[i%n])
				if v == 0 {
					v = 1
				}
				tab.ApplyBatch(v, nb)
				i++
			}
			b.ReportMetric(float64(b.N)*float64(size)/b.Elapsed().Seconds(), "index-updates/s")
		})
	}
}
