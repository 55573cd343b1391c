package cc

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"sketchcc/dsu"
	"sketchcc/internal/cputime"
	"sketchcc/offline/streamgen"
	"sketchcc/stream"
)

// BenchmarkGreedyFollow feeds a Kronecker stream (the field's benchmark
// shape: dense, forest edges deleted all along) to the greedy DSU from the
// empty graph, as the goroutine beside the pipeline does: "read" decodes
// the records from the file and applies them, "apply" applies records
// decoded once. It reports ns/update.
func BenchmarkGreedyFollow(b *testing.B) {
	for _, scale := range []int{11, 13} {
		path := filepath.Join(b.TempDir(), "kron.bin")
		out, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := streamgen.Kron(context.Background(), streamgen.DefaultKronConfig(scale, 1), out, nil); err != nil {
			b.Fatal(err)
		}
		out.Close()
		f, err := stream.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		h := f.Header()
		us := make([]stream.Update, h.Updates)
		if k, err := f.Reader(0, h.Updates).Read(us); uint64(k) != h.Updates {
			b.Fatalf("read %d of %d: %v", k, h.Updates, err)
		}
		b.Run("scale="+strconv.Itoa(scale)+"/read", func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := cputime.ThreadSeconds()
			var r Room
			var stop atomic.Uint64
			for b.Loop() {
				r.greedy.reset(dsu.New(h.Vertices), nil)
				stop.Store(h.Updates)
				if n := r.follow(context.Background(), f, 0, &stop); n != h.Updates {
					b.Fatalf("followed %d of %d", n, h.Updates)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(h.Updates), "ns/update")
			if cpu := cputime.ThreadSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(cpu*1e9/float64(b.N)/float64(h.Updates), "cpu-ns/update")
			}
		})
		b.Run("scale="+strconv.Itoa(scale)+"/apply", func(b *testing.B) {
			// The thread's CPU time, which a shared machine's other jobs
			// disturb less than the wall clock.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := cputime.ThreadSeconds()
			var g greedyCC
			for b.Loop() {
				g.reset(dsu.New(h.Vertices), nil)
				for i := 0; i < len(us); i += followChunk {
					g.apply(us[i:min(len(us), i+followChunk)])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(h.Updates), "ns/update")
			if cpu := cputime.ThreadSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(cpu*1e9/float64(b.N)/float64(h.Updates), "cpu-ns/update")
			}
		})
		f.Close()
	}
}
