package gutters

import (
	"math/rand/v2"
	"sync"
	"testing"

	"sketchcc/stream"
)

// BenchmarkInsert inserts random edges with a consumer that releases each
// batch at once, so it measures buffering, not sketching. BatchUpdates is
// 256 so that 1e6 vertices take 1 GiB of gutters; the pipeline sizes
// gutters from the sketch instead.
//
//	go test -run='^$' -bench=Insert -count=10 ./gutters > old.txt
//	(change) ... > new.txt; benchstat old.txt new.txt
func BenchmarkInsert(b *testing.B) {
	for _, bc := range []struct {
		name     string
		vertices uint32
	}{{"vertices=1e4", 1e4}, {"vertices=1e6", 1e6}} {
		b.Run(bc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			edges := make([]stream.Edge, 1<<20)
			for i := range edges {
				edges[i] = randomEdge(rng, bc.vertices)
			}
			g := newGutters(b, Config{Vertices: bc.vertices, BatchUpdates: 256, QueueBatches: 16})
			var wg sync.WaitGroup
			wg.Go(func() {
				for bt := range g.Batches() {
					g.Release(bt)
				}
			})
			b.SetBytes(stream.RecordBytes)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				g.insert(edges[i&(len(edges)-1)])
				i++
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
			b.StopTimer()
			g.Close()
			wg.Wait()
		})
	}
}
