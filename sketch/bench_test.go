package sketch

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"sketchcc/internal/cputime"
)

// Compare changes with benchstat:
//
//	go test -run='^$' -bench=. -count=10 ./sketch > old.txt
//	(change)
//	go test -run='^$' -bench=. -count=10 ./sketch > new.txt
//	benchstat old.txt new.txt

var sinkU64 uint64

func BenchmarkHash(b *testing.B) {
	b.ReportAllocs()
	x := uint64(0)
	for b.Loop() {
		x = hash(x, 0x1234567)
	}
	sinkU64 = x
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "hashes/s")
}

// BenchmarkUpdate XORs one edge index into one sketch at V = 2^17: a
// checksum, 24 column hashes and 25 bucket XORs.
func BenchmarkUpdate(b *testing.B) {
	p := mustParams(b, 1<<17, 1, 1)
	s := make([]Bucket, p.BucketsPerVertex())
	idx := uint64(12345)<<32 | 99999
	b.ReportAllocs()
	for b.Loop() {
		p.update(s, idx)
		idx += 0x100000001
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "index-updates/s")
}

// BenchmarkApplyBatch sketches one full batch (sketch bytes / 4 neighbour
// ids, the default gutter) into one vertex's sketch: the delta workers' hot
// loop, in the kernel $SKETCHCC_SKETCH_KERNEL selects (see TestMain). Each
// stream update costs two index updates (one per endpoint), so stream
// updates/s = index-updates/s / 2 per core.
//
// index-updates/cpu-s divides by the CPU time of the benchmark's thread
// instead of the wall time (Linux only): on a shared machine, time spent
// waiting for a core does not count.
func BenchmarkApplyBatch(b *testing.B) {
	for _, lg := range []int{13, 15, 17} {
		b.Run("vertices=2^"+itoa(lg), func(b *testing.B) {
			n := uint32(1) << lg
			p := mustParams(b, n, 1, 1)
			s := make([]Bucket, p.BucketsPerVertex())
			nb := randomNeighbors(rand.New(rand.NewPCG(1, 2)), n, 7, p.BytesPerVertex()/4)
			b.SetBytes(int64(len(nb)) * 9 / 2) // stream bytes per batch
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			cpu0 := cputime.ThreadSeconds()
			for b.Loop() {
				p.ApplyBatch(s, 7, nb)
			}
			updates := float64(b.N) * float64(len(nb))
			b.ReportMetric(updates/b.Elapsed().Seconds(), "index-updates/s")
			if cpu := cputime.ThreadSeconds() - cpu0; cpu > 0 {
				b.ReportMetric(updates/cpu, "index-updates/cpu-s")
			}
		})
	}
}

func BenchmarkMerge(b *testing.B) {
	p := mustParams(b, 1<<17, 1, 1)
	dst, src := make([]Bucket, p.BucketsPerVertex()), make([]Bucket, p.BucketsPerVertex())
	for i := range src {
		src[i] = Bucket{uint64(i), uint64(i) * 3}
	}
	b.SetBytes(int64(p.BytesPerVertex()))
	b.ReportAllocs()
	for b.Loop() {
		Merge(dst, src)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "deltas/s")
}

func BenchmarkSample(b *testing.B) {
	p := mustParams(b, 1<<17, 1, 1)
	s := make([]Bucket, p.BucketsPerVertex())
	p.ApplyBatch(s, 3, randomNeighbors(rand.New(rand.NewPCG(1, 2)), 1<<17, 3, 500))
	fails := 0
	c := 0
	b.ReportAllocs()
	for b.Loop() {
		if _, r, _ := p.Sample(s, c); r == Fail {
			fails++
		}
		c = (c + 1) % p.columns
	}
	b.ReportMetric(float64(fails)/float64(b.N), "fails/op")
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
