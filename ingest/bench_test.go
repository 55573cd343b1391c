package ingest

import (
	"bytes"
	"context"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// BenchmarkIngest runs the whole in-process pipeline on an in-memory
// stream: decode, gutters, delta workers, final flush. It reports stream
// updates/s end to end.
func BenchmarkIngest(b *testing.B) {
	for _, lg := range []int{10, 13} {
		b.Run("vertices=2^"+string(rune('0'+lg/10))+string(rune('0'+lg%10)), func(b *testing.B) {
			const n = 2_000_000
			data := testgraph.RandomStream(b, 1<<lg, n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				e, err := New(Config{Vertices: 1 << lg})
				if err != nil {
					b.Fatal(err)
				}
				r, err := stream.NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := e.Ingest(context.Background(), r); err != nil {
					b.Fatal(err)
				}
				e.Flush(context.Background())
				e.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}
