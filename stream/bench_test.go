package stream

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkReader decodes a stream of 2^20 updates held in memory and in a
// file (page cache). MB/s compares with disk bandwidth.
//
//	go test -run='^$' -bench=Reader -count=10 ./stream > old.txt
//	(change) ... > new.txt; benchstat old.txt new.txt
func BenchmarkReader(b *testing.B) {
	const n = 1 << 20
	data := encode(b, 1<<17, randomUpdates(rand.New(rand.NewPCG(1, 1)), 1<<17, n)...)
	buf := make([]Update, 12<<10) // ingest's read chunk
	drain := func(b *testing.B, src Source) {
		total := 0
		for {
			k, err := src.Read(buf)
			total += k
			if err != nil {
				if total != n || err != io.EOF {
					b.Fatalf("%d updates, %v", total, err)
				}
				return
			}
		}
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
	}
	b.Run("source=memory", func(b *testing.B) {
		b.SetBytes(RecordBytes * n)
		b.ReportAllocs()
		for b.Loop() {
			r, err := NewReader(bytes.NewReader(data))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, r)
		}
		report(b)
	})
	b.Run("source=file", func(b *testing.B) {
		path := writeFile(b, data)
		b.SetBytes(RecordBytes * n)
		b.ReportAllocs()
		for b.Loop() {
			f, err := Open(path)
			if err != nil {
				b.Fatal(err)
			}
			drain(b, f.Reader(0, n))
			f.Close()
		}
		report(b)
	})
}
