package gutters

import (
	"math/rand/v2"
	"sync"
	"testing"

	"sketchcc/stream"
)

// TestStagedInsertKeepsEveryPair drives InsertBatch past the staging
// threshold (V >= stageMinVertices) with more than one staging buffer of
// updates and flushes in the middle of a buffer: every vertex must receive
// exactly its neighbours (checked by count, sum and a hash sum per vertex).
func TestStagedInsertKeepsEveryPair(t *testing.T) {
	const n = stageMinVertices
	g, err := New(Config{Vertices: n, BatchUpdates: 64, QueueBatches: 8})
	if err != nil {
		t.Fatal(err)
	}
	if g.stage == nil {
		t.Fatal("staging is off at the threshold")
	}
	type digest struct{ count, sum, mix uint64 }
	in := make([]digest, n)
	out := make([]digest, n)
	note := func(d []digest, v, u uint32) {
		d[v].count++
		d[v].sum += uint64(u)
		d[v].mix += (uint64(u) + 1) * 0x9e3779b97f4a7c15
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range g.Batches() {
			mu.Lock()
			for _, u := range b.IDs(new([]uint32)) {
				note(out, b.Vertex, u)
			}
			mu.Unlock()
			g.Release(b)
		}
	})
	rng := rand.New(rand.NewPCG(8, 8))
	chunk := make([]stream.Update, 10_000)
	total := 0
	for round := range 3 {
		for range 130 { // 1.3 M updates per round: more than one staging buffer
			for i := range chunk {
				e := randomEdge(rng, n)
				chunk[i] = stream.Update{Edge: e}
				note(in, e.Src, e.Dst)
				note(in, e.Dst, e.Src)
			}
			g.InsertBatch(chunk)
			total += len(chunk)
		}
		if round == 1 {
			if got := g.buffered(); got == 0 {
				t.Fatal("Buffered is 0 with staged updates")
			}
		}
		g.Flush() // must take in the partly filled staging buffer
		if g.buffered() != 0 || len(g.stage.updates) != 0 {
			t.Fatalf("round %d: %d ids buffered, %d updates staged after Flush", round, g.buffered(), len(g.stage.updates))
		}
	}
	g.Close()
	wg.Wait()
	for v := range in {
		if in[v] != out[v] {
			t.Fatalf("vertex %d: in %+v, out %+v", v, in[v], out[v])
		}
	}
	if g.Stats().Updates != uint64(total) {
		t.Errorf("Stats().Updates = %d, want %d", g.Stats().Updates, total)
	}
}
