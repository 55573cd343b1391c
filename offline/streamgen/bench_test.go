package streamgen

import (
	"context"
	"io"
	"testing"
)

// BenchmarkKron generates whole Kronecker streams (no cumulative file) into
// io.Discard with one worker; pairs/s is the scan rate.
//
//	go test -run='^$' -bench=Kron -count=10 ./offline/streamgen > old.txt
//	benchstat old.txt new.txt
func BenchmarkKron(b *testing.B) {
	for _, scale := range []int{10, 12} {
		b.Run("scale="+string(rune('0'+scale/10))+string(rune('0'+scale%10)), func(b *testing.B) {
			cfg := DefaultKronConfig(scale, 1)
			cfg.Workers = 1
			var s Summary
			for b.Loop() {
				var err error
				s, err = Kron(context.Background(), cfg, io.Discard, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(9 * s.Updates))
			v := float64(s.Vertices)
			b.ReportMetric(float64(b.N)*v*(v-1)/2/b.Elapsed().Seconds(), "pairs/s")
			b.ReportMetric(float64(b.N)*float64(s.Updates)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}

// BenchmarkErdosSparse generates a sparse Erdős–Rényi stream (the skip
// walk) into io.Discard; updates/s is the whole generator's rate. About
// 7 M updates in passes of 2^20, so that the walk repeats about eight
// times, as a 1 G-update stream on 2^20 vertices does with passes of 2^27.
func BenchmarkErdosSparse(b *testing.B) {
	for _, workers := range []int{1, 2} {
		b.Run("vertices=65536/density=0.002/workers="+string(rune('0'+workers)), func(b *testing.B) {
			cfg := DefaultErdosConfig(1<<16, 0.002, 1)
			cfg.Workers, cfg.PassUpdates = workers, 1<<20
			var s Summary
			for b.Loop() {
				var err error
				s, err = Erdos(context.Background(), cfg, io.Discard, nil)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(int64(9 * s.Updates))
			b.ReportMetric(float64(b.N)*float64(s.Updates)/b.Elapsed().Seconds(), "updates/s")
		})
	}
}
