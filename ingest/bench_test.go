package ingest

import (
	"bytes"
	"context"
	"math"
	"strconv"
	"sync"
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
				if _, err := e.IngestN(context.Background(), r, math.MaxUint64); err != nil {
					b.Fatal(err)
				}
				e.Flush(context.Background())
				e.Close()
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}

// BenchmarkSorter measures a reader's cost of decoding records and
// sorting their pairs by gutters.Part (parallel readers): ns per update,
// the chunks drained by goroutines that hand them straight back.
func BenchmarkSorter(b *testing.B) {
	const lg = 15
	data := testgraph.RandomStream(b, 1<<lg, readChunk)
	recs := data[stream.HeaderBytes:]
	for _, parts := range []int{2, 8} {
		b.Run("parts="+strconv.Itoa(parts), func(b *testing.B) {
			pool := make(chan []pair, parts*(inserterQueue+2))
			chunk := chunkPairs(1<<lg, parts, cap(pool))
			for range cap(pool) {
				pool <- make([]pair, 0, chunk)
			}
			queues := make([]chan []pair, parts)
			var wg sync.WaitGroup
			for i := range queues {
				queues[i] = make(chan []pair, inserterQueue)
				wg.Go(func() {
					for c := range queues[i] {
						pool <- c[:0]
					}
				})
			}
			so := newSorter(parts, chunk, queues, pool)
			for b.Loop() {
				if k := so.add(recs, 1<<lg); k != readChunk {
					b.Fatalf("%d records of %d taken", k, readChunk)
				}
			}
			so.close()
			for _, q := range queues {
				close(q)
			}
			wg.Wait()
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*readChunk), "ns/update")
		})
	}
}
