package ingest

import (
	"bytes"
	"context"
	"testing"

	"sketchcc/stream"
)

// memStream encodes n random updates over vertices as a binary stream.
func memStream(tb testing.TB, vertices uint32, n int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	writeRandomUpdates(tb, &buf, vertices, n, 1, false)
	return buf.Bytes()
}

// BenchmarkIngest runs the whole in-process pipeline on an in-memory
// stream: decode, gutters, delta workers, final flush. It reports stream
// updates/s end to end.
func BenchmarkIngest(b *testing.B) {
	for _, lg := range []int{10, 13} {
		b.Run("vertices=2^"+string(rune('0'+lg/10))+string(rune('0'+lg%10)), func(b *testing.B) {
			const n = 2_000_000
			data := memStream(b, 1<<lg, n)
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

// BenchmarkQuery measures a connected-components query (flush of a nearly
// empty pipeline plus Boruvka) after a random stream.
func BenchmarkQuery(b *testing.B) {
	const lg, n = 13, 400_000
	data := memStream(b, 1<<lg, n)
	// NoGreedy: every query flushes and runs Boruvka; with the greedy
	// shortcut the repeated queries would be answered from the DSU.
	e, err := New(Config{Vertices: 1 << lg, NoGreedy: true})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	r, _ := stream.NewReader(bytes.NewReader(data))
	if _, err := e.Ingest(context.Background(), r); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Query(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
