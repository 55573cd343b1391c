package gutters

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"sketchcc/hugepage"
	"sketchcc/internal/cputime"
	"sketchcc/stream"
)

// pipelineGeometries are the vertex counts of kron13, kron15 and kron17
// with the batch size main-node gives their gutters.
var pipelineGeometries = []struct {
	name     string
	vertices uint32
	batch    int
}{{"vertices=2^13", 1 << 13, 1876}, {"vertices=2^15", 1 << 15, 2524}, {"vertices=2^17", 1 << 17, 3268}}

// BenchmarkInsertBatch inserts 12 Ki-update chunks, as the ingestion
// pipeline does, into gutters sized as main-node sizes them (sketch bytes
// per vertex / 4 ids), with huge pages advised and the slab faulted in
// first, as in the pipeline: at V = 2^17 the slab is 1.7 GB and nearly
// every append misses the caches.
func BenchmarkInsertBatch(b *testing.B) {
	for _, bc := range pipelineGeometries {
		b.Run(bc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			us := make([]stream.Update, 1<<22)
			for i := range us {
				us[i] = stream.Update{Edge: randomEdge(rng, bc.vertices)}
			}
			g := newGutters(b, Config{Vertices: bc.vertices, BatchUpdates: bc.batch, QueueBatches: 16})
			g.AdviseHugePages()
			faultIn(g)
			var wg sync.WaitGroup
			wg.Go(func() {
				for bt := range g.Batches() {
					g.Release(bt)
				}
			})
			const chunk = 12 << 10
			for lo := 0; lo+chunk <= len(us); lo += chunk {
				g.InsertBatch(us[lo : lo+chunk])
			}
			b.SetBytes(chunk * stream.RecordBytes)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				lo := (i % (len(us) / chunk)) * chunk
				g.InsertBatch(us[lo : lo+chunk])
				i++
			}
			b.ReportMetric(float64(b.N)*chunk/b.Elapsed().Seconds(), "updates/s")
			b.StopTimer()
			g.Close()
			wg.Wait()
		})
	}
}

// BenchmarkPartInsert is one Part of a single-Part split inserting 8 Ki
// pair chunks, as an inserter of the parallel pipeline does, with the
// gutters sized as BenchmarkInsertBatch sizes them. ns/pair is the cost of
// one append (two per edge update):
//
//	go test -run='^$' -bench=PartInsert -count=6 ./gutters | benchstat -
func BenchmarkPartInsert(b *testing.B) {
	for _, bc := range pipelineGeometries {
		b.Run(bc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			pairs := make([][2]uint32, 1<<22)
			for i := range pairs {
				e := randomEdge(rng, bc.vertices)
				pairs[i] = [2]uint32{e.Src, e.Dst}
			}
			g := newGutters(b, Config{Vertices: bc.vertices, BatchUpdates: bc.batch, QueueBatches: 16})
			g.AdviseHugePages() // as the pipeline does
			faultIn(g)
			parts, err := g.Parts(1)
			requireNoError(b, err)
			var wg sync.WaitGroup
			wg.Go(func() {
				for bt := range g.Batches() {
					g.Release(bt)
				}
			})
			const chunk = 8 << 10
			// Warm the caches: a pipeline inserts for minutes.
			for lo := 0; lo < len(pairs); lo += chunk {
				parts[0].Insert(pairs[lo : lo+chunk])
			}
			b.ReportAllocs()
			// CPU time of this thread, besides wall time: on a shared
			// machine it leaves out the time others ran.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := cputime.ThreadSeconds()
			i := 0
			for b.Loop() {
				lo := (i % (len(pairs) / chunk)) * chunk
				parts[0].Insert(pairs[lo : lo+chunk])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/(float64(b.N)*chunk), "ns/pair")
			b.ReportMetric((cputime.ThreadSeconds()-cpu0)*1e9/(float64(b.N)*chunk), "cpu-ns/pair")
			b.StopTimer()
			g.Close()
			wg.Wait()
		})
	}
}

// faultIn writes a zero to every 4 KiB page of g's memory, as a pipeline
// that has run for a while has: otherwise the timed loop would first touch
// fresh pages, and measure the kernel's page faults.
func faultIn(g *Gutters) {
	touchPages(g.raw)
	touchPages(g.lines)
	touchPages(g.lines16)
}

// touchPages writes a zero to every 4 KiB page of s.
func touchPages[T lineID](s []T) {
	step := 4096 / int(unsafe.Sizeof(T(0)))
	for i := 0; i < len(s); i += step {
		s[i] = 0
	}
}

// BenchmarkScatteredStores is the measurement behind the tail lines: 4-byte
// stores to random vertices of 2^15, one line per vertex, with the lines
// packed 64 bytes apart (as the tail lines are) or spread one buffer apart
// (as the slab's gutters are, 2,528 ids at kron15), huge pages advised
// and every page touched first. The cache lines stored to are as many in
// both; only the pages they lie in differ. ns/op is per store.
//
//	go test -run='^$' -bench=ScatteredStores -count=6 ./gutters | benchstat -
func BenchmarkScatteredStores(b *testing.B) {
	const vertices = 1 << 15
	for _, bc := range []struct {
		name   string
		stride int // ids from one vertex's line to the next
	}{{"lines=packed", wideTailIDs}, {"lines=spread", 2528}} {
		b.Run(bc.name, func(b *testing.B) {
			slab := alignedIDs(vertices * bc.stride)
			hugepage.Advise(slab)
			touchPages(slab)
			rng := rand.New(rand.NewPCG(1, 2))
			vs := make([]uint32, 1<<20)
			for i := range vs {
				vs[i] = rng.Uint32N(vertices)
			}
			fill := make([]uint32, vertices)
			i := 0
			for b.Loop() {
				v := vs[i%len(vs)]
				f := fill[v]
				slab[int(v)*bc.stride+int(f)] = v
				fill[v] = (f + 1) % wideTailIDs
				i++
			}
		})
	}
}
