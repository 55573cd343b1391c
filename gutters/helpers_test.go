package gutters

import (
	"math/rand/v2"
	"testing"

	"sketchcc/stream"
)

func requireNoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func newGutters(t testing.TB, cfg Config) *Gutters {
	t.Helper()
	g, err := New(cfg)
	requireNoError(t, err)
	return g
}

// pair is one neighbour id in one vertex's gutter.
type pair struct{ vertex, neighbor uint32 }

// collected is what a consumer saw.
type collected struct {
	pairs   map[pair]int
	batches []int // batch sizes in order
}

// consume receives batches until the queue is closed, counting every
// (vertex, neighbour) pair and releasing each batch. It returns once the
// queue is closed.
func consume(g *Gutters, check func(Batch)) collected {
	c := collected{pairs: map[pair]int{}}
	for b := range g.Batches() {
		if check != nil {
			check(b)
		}
		for _, u := range b.IDs(new([]uint32)) {
			c.pairs[pair{b.Vertex, u}]++
		}
		c.batches = append(c.batches, b.Len())
		g.Release(b)
	}
	return c
}

func edge(s, d uint32) stream.Edge { return stream.Edge{Src: s, Dst: d} }

// randomEdge returns an edge of two distinct random vertices in
// [0, vertices), drawing Src first.
func randomEdge(rng *rand.Rand, vertices uint32) stream.Edge {
	s, d := rng.Uint32N(vertices), rng.Uint32N(vertices-1)
	if d >= s {
		d++
	}
	return edge(s, d)
}
