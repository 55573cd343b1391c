package gutters

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestFlushLocalKeepsEveryPair: with a slow consumer, FlushLocal applies
// some gutters itself; every (vertex, neighbour) pair must come out exactly
// once, through the queue or through apply, and the gutters end empty, also
// when a first flush of each round is stopped part way.
func TestFlushLocalKeepsEveryPair(t *testing.T) {
	const n = 300
	g, err := New(Config{Vertices: n, BatchUpdates: 16, QueueBatches: 2})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	got := map[[2]uint32]int{}
	record := func(v uint32, nb []uint32) {
		mu.Lock()
		for _, u := range nb {
			got[[2]uint32{v, u}]++
		}
		mu.Unlock()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range g.Batches() {
			record(b.Vertex, b.IDs(new([]uint32)))
			g.Release(b)
		}
	})
	want := map[[2]uint32]int{}
	rng := rand.New(rand.NewPCG(4, 4))
	local := 0
	for round := range 5 {
		for range 2000 {
			e := randomEdge(rng, n)
			a, b := e.Src, e.Dst
			g.insert(e)
			want[[2]uint32{a, b}]++
			want[[2]uint32{b, a}]++
		}
		apply := func(v uint32, nb []uint32) { local++; record(v, nb) }
		// A flush stopped after a few gutters leaves the rest for the
		// next one.
		calls := 0
		if g.FlushLocal(apply, func() bool { calls++; return calls > 5 }) || g.buffered() == 0 {
			t.Fatalf("round %d: a flush stopped at its sixth gutter took them all", round)
		}
		if !g.FlushLocal(apply, nil) {
			t.Fatalf("round %d: FlushLocal without stop returned false", round)
		}
		if g.buffered() != 0 {
			t.Fatalf("round %d: %d ids still buffered after FlushLocal", round, g.buffered())
		}
	}
	g.Close()
	wg.Wait()
	if len(got) != len(want) {
		t.Fatalf("%d distinct pairs out, %d in", len(got), len(want))
	}
	for k, c := range want {
		if got[k] != c {
			t.Fatalf("pair %v: out %d times, in %d", k, got[k], c)
		}
	}
	if st := g.Stats(); st.LocalBatches != uint64(local) {
		t.Errorf("Stats().LocalBatches = %d, apply called %d times", st.LocalBatches, local)
	}
	t.Logf("%d gutters applied locally", local)
}
