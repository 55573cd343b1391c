package gutters

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"sketchcc/stream"
)

// model is the reference gutters: per vertex, the ids since its last
// batch, and the batches each vertex emitted, in order.
type model struct {
	per     int
	pending [][]uint32
	emitted [][][]uint32
}

func newModel(vertices, per int) *model {
	return &model{per: per, pending: make([][]uint32, vertices), emitted: make([][][]uint32, vertices)}
}

func (m *model) add(v, u uint32) {
	m.pending[v] = append(m.pending[v], u)
	if len(m.pending[v]) == m.per {
		m.emitted[v] = append(m.emitted[v], m.pending[v])
		m.pending[v] = nil
	}
}

// TestTailsKeepOrder checks the tail lines and their spill queue against
// the reference model, id for id and in order: batch sizes below, at and
// around a line (16 ids wide, 32 narrow) and over many lines, so that the
// queue wraps and gutters fill while lines of theirs are queued; inserts
// through InsertBatch and through a Part; narrow and wide tail lines;
// Held after Settle at random points, and Flush at the end.
func TestTailsKeepOrder(t *testing.T) {
	const vertices = 40
	for _, wide := range []bool{false, true} {
		k := narrowTailIDs
		if wide {
			k = wideTailIDs
		}
		for _, per := range []int{1, 2, k - 1, k, k + 1, 3*k + 5, 40 * k} {
			for _, viaPart := range []bool{false, true} {
				t.Run(fmt.Sprintf("wide=%v/per=%d/part=%v", wide, per, viaPart), func(t *testing.T) {
					testTailsKeepOrder(t, Config{Vertices: vertices, BatchUpdates: per, QueueBatches: 4, wideTails: wide}, viaPart)
				})
			}
		}
	}
	// The most vertices narrow lines take, where InsertBatch also stages.
	for _, viaPart := range []bool{false, true} {
		t.Run(fmt.Sprintf("vertices=2^16/part=%v", viaPart), func(t *testing.T) {
			testTailsKeepOrder(t, Config{Vertices: NarrowMaxVertices, BatchUpdates: 3*narrowTailIDs + 5, QueueBatches: 4}, viaPart)
		})
	}
}

func testTailsKeepOrder(t *testing.T, cfg Config, viaPart bool) {
	vertices, per := int(cfg.Vertices), cfg.BatchUpdates
	g := newGutters(t, cfg)
	if g.Config().narrow() == cfg.wideTails {
		t.Fatalf("narrow tail lines = %v with wideTails = %v", g.Config().narrow(), cfg.wideTails)
	}
	var part *Part
	if viaPart {
		parts, err := g.Parts(1)
		requireNoError(t, err)
		part = parts[0]
	}
	m := newModel(vertices, per)
	got := make([][][]uint32, vertices)
	var mu sync.Mutex
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range g.Batches() {
			mu.Lock()
			got[b.Vertex] = append(got[b.Vertex], slices.Clone(b.IDs(new([]uint32))))
			mu.Unlock()
			g.Release(b)
		}
	})
	rng := rand.New(rand.NewPCG(uint64(per), 3))
	for round := range 40 {
		n := 1 + rng.IntN(3000)
		us := make([]stream.Update, 0, n)
		var pairs [][2]uint32
		for range n {
			// Skewed: low vertices take most updates, so
			// their gutters fill while their lines queue.
			s := uint32(rng.IntN(1+rng.IntN(vertices)) % vertices)
			d := rng.Uint32N(uint32(vertices) - 1)
			if d >= s {
				d++
			}
			us = append(us, stream.Update{Edge: edge(s, d)})
			pairs = append(pairs, [2]uint32{s, d}, [2]uint32{d, s})
			m.add(s, d)
			m.add(d, s)
		}
		if viaPart {
			part.Insert(pairs)
		} else {
			g.InsertBatch(us)
		}
		if round%3 != 2 {
			continue
		}
		view := g.Settle()
		for v := range uint32(vertices) {
			if h, err := view.Held(v, new([]uint32)); err != nil || !slices.Equal(h, m.pending[v]) {
				t.Fatalf("round %d: Held(%d) = %v, %v; want %v", round, v, h, err, m.pending[v])
			}
		}
	}
	g.Flush()
	requireNoError(t, g.Close())
	wg.Wait()
	for v := range vertices {
		want := m.emitted[v]
		if len(m.pending[v]) > 0 {
			want = append(want, m.pending[v])
		}
		if !slices.EqualFunc(got[v], want, slices.Equal) {
			t.Fatalf("vertex %d: batches\n%v\nwant\n%v", v, got[v], want)
		}
	}
}
