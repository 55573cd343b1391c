package checkpoint

import (
	"fmt"
	"testing"

	"sketchcc/sketch"
)

// BenchmarkWriteRead writes (temporary file, fsync, rename, directory
// fsync) and reads back the checkpoint of a table of 2^scale vertices
// whose every sketch is touched, and reports seconds per GB of file.
func BenchmarkWriteRead(b *testing.B) {
	for _, scale := range []int{13, 15} {
		p, err := sketch.NewParams(1<<scale, 1, 1)
		if err != nil {
			b.Fatal(err)
		}
		t := sketch.NewTable(p)
		for v := range p.Vertices() {
			t.ApplyBatch(v, []uint32{(v + 1) % p.Vertices()})
		}
		m := Meta{Stream: StreamID{Vertices: p.Vertices(), Updates: 1}, Updates: 1, BatchFactor: 1}
		dir := b.TempDir()
		b.Run(fmt.Sprintf("op=write/vertices=2^%d", scale), func(b *testing.B) {
			var n int64
			for b.Loop() {
				if n, err = Write(dir, m, t); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(n)
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/(float64(n)/1e9), "s/GB")
		})
		b.Run(fmt.Sprintf("op=read/vertices=2^%d", scale), func(b *testing.B) {
			n := p.TableBytes()
			for b.Loop() {
				if _, _, err := Read(dir); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(n)
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)/(float64(n)/1e9), "s/GB")
		})
	}
}
