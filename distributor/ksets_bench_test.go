package distributor

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"sketchcc/sketch"
)

// BenchmarkKSetsDelta compares the two ways a worker can answer a batch
// for K = 2 sketch sets at the kron13 geometry (8,192 vertices, S = 19
// columns of R = 27 rows): one combined delta of 2·S columns
// (sketch.Params.WithSets, what main-node --k-connectivity 2 ships), or
// two deltas of S columns, one per set (two sketches of their own seeds,
// each with its deterministic bucket). The batch sent out is the same
// either way. Per batch of n neighbour ids it reports, at side=worker,
// the CPU of computing and encoding the delta(s) and their bytes on the
// wire (delta-bytes/batch), and at side=main the CPU of parsing them and
// XORing them into the sketches (as mergeDeltas does, with its
// prefetching), over 64 batches of random vertices:
//
//	go test -run='^$' -bench=KSetsDelta -count=5 ./distributor
func BenchmarkKSetsDelta(b *testing.B) {
	const vertices, batches = 8192, 64
	one, _ := sketch.NewParams(vertices, 1, 1)
	two, _ := one.WithSets(2)
	second, _ := sketch.NewParams(vertices, 1, 2)
	forms := []struct {
		name string
		sets []sketch.Params
	}{{"combined", []sketch.Params{two}}, {"separate", []sketch.Params{one, second}}}
	rng := rand.New(rand.NewPCG(3, 4))
	// 1,948 ids fill a kron13 gutter at K = 1; 3,892 at K = 2 (the
	// combined sketch is twice the bytes).
	for _, n := range []int{256, 1948, 3892} {
		vs := make([]uint32, batches)
		ids := make([][]uint32, batches)
		for i := range vs {
			vs[i] = rng.Uint32N(vertices)
			for len(ids[i]) < n {
				if u := rng.Uint32N(vertices); u != vs[i] {
					ids[i] = append(ids[i], u)
				}
			}
		}
		for _, f := range forms {
			dcs := make([]*deltaCodec, len(f.sets))
			deltas := make([][]sketch.Bucket, len(f.sets))
			tables := make([]*sketch.Table, len(f.sets))
			payloads := make([][]byte, len(f.sets))
			wire := 0
			for j, p := range f.sets {
				dcs[j], deltas[j], tables[j] = newDeltaCodec(p), make([]sketch.Bucket, p.BucketsPerVertex()), sketch.NewTable(p)
				for i := range batches {
					p.Delta(deltas[j], vs[i], ids[i])
					payloads[j] = dcs[j].append(payloads[j], vs[i], deltas[j])
				}
				wire += len(payloads[j])
			}
			perBatch := func(b *testing.B) {
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batches), "ns/batch")
				b.ReportMetric(0, "ns/op")
			}
			b.Run(fmt.Sprintf("form=%s/side=worker/updates=%d", f.name, n), func(b *testing.B) {
				bufs := make([][]byte, len(f.sets))
				for b.Loop() {
					for i := range batches {
						for j, p := range f.sets {
							p.Delta(deltas[j], vs[i], ids[i])
							bufs[j] = dcs[j].append(bufs[j][:0], vs[i], deltas[j])
						}
					}
				}
				perBatch(b)
				b.ReportMetric(float64(wire)/batches, "delta-bytes/batch")
			})
			b.Run(fmt.Sprintf("form=%s/side=main/updates=%d", f.name, n), func(b *testing.B) {
				for b.Loop() {
					for j, dc := range dcs {
						if w, ok := dc.nextRows(payloads[j]); ok {
							dc.prefetchRows(tables[j], w)
						}
						rest := payloads[j]
						for range batches {
							v, r, err := dc.parse(rest)
							if err != nil {
								b.Fatal(err)
							}
							if w, ok := dc.nextRows(r); ok {
								dc.prefetchRows(tables[j], w)
							}
							dc.xorInto(tables[j].Sketch(v))
							rest = r
						}
					}
				}
				perBatch(b)
			})
		}
	}
}
