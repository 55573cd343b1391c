package kconn

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// bruteLambda returns λ of the connected vertex set vs in edges by trying
// every cut, or 0 for a single vertex.
func bruteLambda(vs []uint32, edges []stream.Edge) int {
	if len(vs) == 1 {
		return 0
	}
	in := map[uint32]int{}
	for i, v := range vs {
		in[v] = i
	}
	best := len(edges) + 1
	for mask := 1; mask < 1<<(len(vs)-1); mask++ { // vs[last] is never in the side
		c := 0
		for _, e := range edges {
			i, ok := in[e.Src]
			if !ok {
				continue
			}
			if (mask>>i)&1 != (mask>>in[e.Dst])&1 {
				c++
			}
		}
		best = min(best, c)
	}
	return best
}

// bruteBridges returns the edges whose removal raises the number of
// components.
func bruteBridges(n uint32, edges []stream.Edge) []stream.Edge {
	sets := func(skip int) int {
		d := dsu.New(n)
		for i, e := range edges {
			if i != skip {
				d.Union(e.Src, e.Dst)
			}
		}
		return d.Sets()
	}
	all := sets(-1)
	var out []stream.Edge
	for i, e := range edges {
		if sets(i) > all {
			out = append(out, stream.Edge{Src: min(e.Src, e.Dst), Dst: max(e.Src, e.Dst)})
		}
	}
	slices.SortFunc(out, func(x, y stream.Edge) int {
		if x.Src != y.Src {
			return int(x.Src) - int(y.Src)
		}
		return int(x.Dst) - int(y.Dst)
	})
	return out
}

func crossing(side []uint32, edges []stream.Edge) int {
	in := map[uint32]bool{}
	for _, v := range side {
		in[v] = true
	}
	c := 0
	for _, e := range edges {
		if in[e.Src] != in[e.Dst] {
			c++
		}
	}
	return c
}

// check compares Analyze with brute force on one graph.
func check(t *testing.T, n uint32, edges []stream.Edge, k int) {
	t.Helper()
	a, err := Analyze(n, edges, k)
	if err != nil {
		t.Fatal(err)
	}
	comps := groupBy(a.Labels, a.Components)
	for c, vs := range comps {
		if want := min(k, bruteLambda(vs, edges)); a.ComponentLambda[c] != want {
			t.Fatalf("k=%d component %d %v: λ %d, want %d (edges %v)", k, c, vs, a.ComponentLambda[c], want, edges)
		}
	}
	wantAll := 0
	if a.Components == 1 {
		wantAll = min(k, bruteLambda(comps[0], edges))
	}
	if a.Lambda != wantAll {
		t.Fatalf("k=%d: λ %d, want %d", k, a.Lambda, wantAll)
	}
	if want := bruteBridges(n, edges); !slices.Equal(a.Bridges, want) {
		t.Fatalf("bridges %v, want %v (edges %v)", a.Bridges, want, edges)
	}
	switch {
	case a.Lambda < k && a.MinCut == nil:
		t.Fatalf("λ %d < k %d and no min cut", a.Lambda, k)
	case a.Lambda >= k && a.MinCut != nil:
		t.Fatalf("λ %d = k and a min cut %v", a.Lambda, a.MinCut)
	case a.MinCut != nil:
		s := a.MinCut.Side
		if len(s) == 0 || len(s) >= int(n) || a.MinCut.Size != a.Lambda || crossing(s, edges) != a.Lambda {
			t.Fatalf("min cut %v of size %d crosses %d edges; λ %d", s, a.MinCut.Size, crossing(s, edges), a.Lambda)
		}
	}
}

func TestAnalyzeRandomSmall(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		n := uint32(2 + rng.IntN(8))
		p := rng.Float64()
		var edges []stream.Edge
		for u := range n {
			for v := u + 1; v < n; v++ {
				for range 1 + rng.IntN(2)*rng.IntN(2) { // some parallel edges
					if rng.Float64() < p {
						edges = append(edges, stream.Edge{Src: v, Dst: u})
					}
				}
			}
		}
		check(t, n, edges, 1+rng.IntN(5))
	}
}

// plantedCut is two cliques of h vertices joined by c edges.
func plantedCut(h uint32, c int) []stream.Edge {
	var e []stream.Edge
	for s := range uint32(2) {
		for u := range h {
			for v := u + 1; v < h; v++ {
				e = append(e, stream.Edge{Src: s*h + u, Dst: s*h + v})
			}
		}
	}
	for i := range uint32(c) {
		e = append(e, stream.Edge{Src: i % h, Dst: h + (i*7)%h})
	}
	return e
}

func TestAnalyzePlanted(t *testing.T) {
	const h = 30
	for k := 2; k <= 4; k++ {
		for c := 1; c <= k+1; c++ {
			edges := plantedCut(h, c)
			a, err := Analyze(2*h, edges, k)
			if err != nil {
				t.Fatal(err)
			}
			if want := min(k, c); a.Lambda != want {
				t.Fatalf("k=%d c=%d: λ %d, want %d", k, c, a.Lambda, want)
			}
			if a.MinCut != nil && (crossing(a.MinCut.Side, edges) != c || len(a.MinCut.Side) != h) {
				t.Fatalf("k=%d c=%d: cut side of %d vertices crosses %d", k, c, len(a.MinCut.Side), crossing(a.MinCut.Side, edges))
			}
			if want := bruteBridges(2*h, edges); !slices.Equal(a.Bridges, want) {
				t.Fatalf("bridges %v, want %v", a.Bridges, want)
			}
		}
	}
}

func TestAnalyzeCycle(t *testing.T) {
	const n = 2000
	var edges []stream.Edge
	for v := range uint32(n) {
		edges = append(edges, stream.Edge{Src: v, Dst: (v + 1) % n})
	}
	a, err := Analyze(n, edges, 4)
	if err != nil {
		t.Fatal(err)
	}
	if a.Lambda != 2 || len(a.Bridges) != 0 || crossing(a.MinCut.Side, edges) != 2 {
		t.Fatalf("cycle: λ %d, %d bridges, cut %d", a.Lambda, len(a.Bridges), crossing(a.MinCut.Side, edges))
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	f := func(n uint32, edges []stream.Edge, k int) {
		t.Helper()
		if _, err := Analyze(n, edges, k); !errors.Is(err, ErrInput) {
			t.Fatalf("Analyze(%d, %v, %d) = %v, want ErrInput", n, edges, k, err)
		}
	}
	f(4, []stream.Edge{{Src: 1, Dst: 4}}, 2)
	f(4, []stream.Edge{{Src: 2, Dst: 2}}, 2)
	f(4, nil, 0)
	f(1, nil, 2)
}
