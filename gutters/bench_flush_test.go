package gutters

import (
	"math/rand/v2"
	"testing"

	"sketchcc/stream"
)

// BenchmarkFlush measures the walk over the non-empty gutters that a
// query's flush and settle make, on gutters sized as BenchmarkInsertBatch
// sizes them: before each timed op, untimed, 64 Ki random updates fill
// most gutters part way. FlushLocal hands QueueBatches gutters over and
// sketches the rest in place (with an apply that does nothing), and
// Settle copies every non-empty gutter's tail line to its buffer.
// ns/gutter is per non-empty gutter:
//
//	go test -run='^$' -bench=Flush -count=6 ./gutters | benchstat -
func BenchmarkFlush(b *testing.B) {
	for _, bc := range pipelineGeometries[:2] {
		rng := rand.New(rand.NewPCG(3, 4))
		us := make([]stream.Update, 64<<10)
		for i := range us {
			us[i] = stream.Update{Edge: randomEdge(rng, bc.vertices)}
		}
		for _, op := range []string{"local", "settle"} {
			b.Run(bc.name+"/"+op, func(b *testing.B) {
				g := newGutters(b, Config{Vertices: bc.vertices, BatchUpdates: bc.batch, QueueBatches: 16})
				faultIn(g)
				apply := func(uint32, []uint32) {}
				walked := 0
				for b.Loop() {
					b.StopTimer()
					g.InsertBatch(us)
					walked += len(g.own().nonEmpt)
					b.StartTimer()
					if op == "local" {
						g.FlushLocal(apply, nil)
					} else {
						g.Settle()
					}
					b.StopTimer()
					if op == "settle" {
						g.FlushLocal(apply, nil)
					}
					for range len(g.queue) {
						g.Release(<-g.queue)
					}
					b.StartTimer()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(walked), "ns/gutter")
			})
		}
	}
}
