package gutters

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// TestPartsConcurrent: Parts inserting at once, with gutters that fill
// and a small queue, emit every pair exactly once, each batch within one
// vertex, and Flush after them empties every Part's gutters.
func TestPartsConcurrent(t *testing.T) {
	const vertices, per, updates = 1000, 7, 20_000
	for _, n := range []int{1, 2, 3, 8} {
		g := newGutters(t, Config{Vertices: vertices, BatchUpdates: per, QueueBatches: 3})
		parts, err := g.Parts(n)
		requireNoError(t, err)
		want := map[pair]int{}
		byPart := make([][][2]uint32, n)
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		for range updates {
			s, d := rng.Uint32N(vertices), rng.Uint32N(vertices)
			if s == d {
				continue
			}
			for _, p := range [][2]uint32{{s, d}, {d, s}} {
				want[pair{p[0], p[1]}]++
				i := PartOf(p[0], n)
				byPart[i] = append(byPart[i], p)
			}
		}
		done := make(chan collected)
		go func() { done <- consume(g, nil) }()
		var wg sync.WaitGroup
		for i, p := range parts {
			wg.Go(func() {
				for c := range len(byPart[i])/100 + 1 {
					p.Insert(byPart[i][min(c*100, len(byPart[i])):min(c*100+100, len(byPart[i]))])
				}
			})
		}
		wg.Wait()
		g.Flush()
		if b := g.buffered(); b != 0 {
			t.Errorf("parts=%d: %d ids buffered after Flush", n, b)
		}
		requireNoError(t, g.Close())
		got := <-done
		if len(got.pairs) != len(want) {
			t.Fatalf("parts=%d: %d distinct pairs out, want %d", n, len(got.pairs), len(want))
		}
		for p, k := range want {
			if got.pairs[p] != k {
				t.Fatalf("parts=%d: pair %v out %d times, want %d", n, p, got.pairs[p], k)
			}
		}
		for i, size := range got.batches {
			if size < 1 || size > per {
				t.Fatalf("parts=%d: batch %d holds %d ids, want [1, %d]", n, i, size, per)
			}
		}
		st := g.Stats()
		if int(st.Batches) != len(got.batches) {
			t.Errorf("parts=%d: Stats().Batches = %d, %d batches out", n, st.Batches, len(got.batches))
		}
	}
}

// TestPartOf: every vertex has one Part in range, and blocks of vertices
// spread evenly (within 25% of the mean) over 2 to 16 Parts.
func TestPartOf(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 8, 16} {
		count := make([]int, n)
		for v := range uint32(1 << 16) {
			i := PartOf(v, n)
			if i < 0 || i >= n {
				t.Fatalf("PartOf(%d, %d) = %d", v, n, i)
			}
			count[i]++
		}
		mean := (1 << 16) / n
		for i, c := range count {
			if c < mean*3/4 || c > mean*5/4 {
				t.Errorf("n=%d: part %d owns %d vertices, mean %d", n, i, c, mean)
			}
		}
	}
	if _, err := newGutters(t, Config{Vertices: 10}).Parts(0); err == nil {
		t.Error("Parts(0) did not fail")
	}
}
