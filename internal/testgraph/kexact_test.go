package testgraph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"sketchcc/kconn"
	"sketchcc/stream"
)

// randomKGraph returns a random multigraph on n vertices: a few dense
// blocks of random sizes joined by 0 to 4 random edges each, plus sparse
// noise, with some edges doubled.
func randomKGraph(rng *rand.Rand, n uint32) []stream.Edge {
	var edges []stream.Edge
	add := func(a, b uint32) {
		if a != b {
			edges = append(edges, stream.Edge{Src: a, Dst: b})
		}
	}
	p := rng.Float64()
	for lo := uint32(0); lo < n; {
		hi := min(n, lo+1+rng.Uint32N(12))
		for u := lo; u < hi; u++ {
			for v := u + 1; v < hi; v++ {
				if rng.Float64() < p {
					add(v, u)
				}
			}
		}
		if lo > 0 {
			for range rng.IntN(5) {
				add(lo+rng.Uint32N(hi-lo), rng.Uint32N(lo))
			}
		}
		lo = hi
	}
	for range rng.IntN(int(n)) {
		add(rng.Uint32N(n), rng.Uint32N(n))
	}
	for range rng.IntN(3) {
		if len(edges) > 0 {
			edges = append(edges, edges[rng.IntN(len(edges))])
		}
	}
	return edges
}

// TestKExactAgreesWithKconn: KExact's flows and covering forest give the
// answers of kconn.Analyze's Stoer–Wagner and Tarjan (which kconn's own
// tests check against trying every cut), on random multigraphs.
func TestKExactAgreesWithKconn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 2000 {
		n := uint32(2 + rng.IntN(60))
		edges := randomKGraph(rng, n)
		k := 1 + rng.IntN(5)
		want, err := kconn.Analyze(n, edges, k)
		if err != nil {
			t.Fatal(err)
		}
		got := KExact(n, edges, k)
		name := fmt.Sprintf("graph %d (n %d, k %d, edges %v)", i, n, k, edges)
		if got.Lambda != want.Lambda || got.Components != want.Components || !slices.Equal(got.Labels, want.Labels) ||
			!slices.Equal(got.ComponentLambda, want.ComponentLambda) || !slices.Equal(got.Bridges, want.Bridges) {
			t.Fatalf("%s: KExact λ %d per component %v bridges %v; kconn λ %d per component %v bridges %v",
				name, got.Lambda, got.ComponentLambda, got.Bridges, want.Lambda, want.ComponentLambda, want.Bridges)
		}
	}
}

// TestKExactCliquesJoined: two 8-cliques joined by c parallel-free edges
// have λ = c (capped), and one edge is a bridge.
func TestKExactCliquesJoined(t *testing.T) {
	for c := 1; c <= 6; c++ {
		var edges []stream.Edge
		for s := range uint32(2) {
			for u := range uint32(8) {
				for v := u + 1; v < 8; v++ {
					edges = append(edges, stream.Edge{Src: 8*s + u, Dst: 8*s + v})
				}
			}
		}
		for i := range uint32(c) {
			edges = append(edges, stream.Edge{Src: i, Dst: 8 + (i*3)%8})
		}
		for k := 1; k <= 8; k++ {
			tr := KExact(16, edges, k)
			if want := min(k, c); tr.Lambda != want {
				t.Fatalf("c=%d k=%d: λ %d, want %d", c, k, tr.Lambda, want)
			}
			if (c == 1) != (len(tr.Bridges) == 1) || len(tr.Bridges) > 1 {
				t.Fatalf("c=%d: bridges %v", c, tr.Bridges)
			}
		}
	}
}
