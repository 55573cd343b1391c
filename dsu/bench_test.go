package dsu

import (
	"math/rand/v2"
	"testing"
)

const benchVertices = 1_000_000

// BenchmarkUnion unions random pairs of 1e6 ids; every 1e6 unions it
// starts again from singletons (Reset is not timed separately: it is one
// pass over the arrays per 1e6 operations).
func BenchmarkUnion(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	pairs := make([]uint32, 2*benchVertices)
	for i := range pairs {
		pairs[i] = rng.Uint32N(benchVertices)
	}
	d := New(benchVertices)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(pairs) {
			d.Reset()
			i = 0
		}
		d.Union(pairs[i], pairs[i+1])
		i += 2
	}
}

// BenchmarkFind finds random ids in a DSU of 1e6 ids joined by 1e6 random
// unions (a few large trees, as after a Boruvka round).
func BenchmarkFind(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	d := New(benchVertices)
	for range benchVertices {
		d.Union(rng.Uint32N(benchVertices), rng.Uint32N(benchVertices))
	}
	ids := make([]uint32, 1<<20)
	for i := range ids {
		ids[i] = rng.Uint32N(benchVertices)
	}
	var sink uint32
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		sink += d.Find(ids[i&(len(ids)-1)])
		i++
	}
	_ = sink
}
