package stream

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"
)

// BenchmarkPackedReader decodes 2^20 random updates packed for 2^13,
// 2^17 and 2^21 vertices, from memory: digest=on is Read (it hashes the
// canonical 9-byte records, as the binary Reader does), digest=off only
// unpacks and checks them, as a Cursor's Read over a packed file does.
// bytes/update is the packed size.
//
//	go test -run='^$' -bench=PackedReader -count=6 ./stream
func BenchmarkPackedReader(b *testing.B) {
	const n = 1 << 20
	for _, v := range []uint32{1 << 13, 1 << 17, 1 << 21} {
		data := pack(b, v, packedBlockRecords, randomUpdates(rand.New(rand.NewPCG(1, 1)), v, n)...)
		buf := make([]Update, 12<<10) // ingest's read chunk
		for _, digest := range []bool{true, false} {
			b.Run(fmt.Sprintf("vertices=%d/digest=%v", v, map[bool]string{true: "on", false: "off"}[digest]), func(b *testing.B) {
				b.SetBytes(RecordBytes * n)
				b.ReportAllocs()
				for b.Loop() {
					r, err := NewReader(bytes.NewReader(data))
					if err != nil {
						b.Fatal(err)
					}
					total := 0
					for {
						var k int
						if digest {
							k, err = r.Read(buf)
						} else {
							k, err = r.pk.decode(buf, nil)
						}
						total += k
						if err != nil {
							break
						}
					}
					if total != n || err != io.EOF {
						b.Fatalf("%d updates, %v", total, err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
				b.ReportMetric(float64(len(data))/n, "bytes/update")
			})
		}
	}
}

// BenchmarkPackedWriter packs 2^20 random updates for 2^17 vertices.
func BenchmarkPackedWriter(b *testing.B) {
	const n = 1 << 20
	us := randomUpdates(rand.New(rand.NewPCG(1, 1)), 1<<17, n)
	b.SetBytes(RecordBytes * n)
	b.ReportAllocs()
	for b.Loop() {
		w, err := NewPackedWriter(io.Discard, Header{Vertices: 1 << 17, Updates: n})
		if err != nil {
			b.Fatal(err)
		}
		for _, u := range us {
			if err := w.Write(u); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}
