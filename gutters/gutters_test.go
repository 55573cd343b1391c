package gutters

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"sketchcc/stream"
)

// TestInsert_Success checks which batches n inserts make before and after
// Flush, and what Buffered and Stats say, in f-test style.
func TestInsert_Success(t *testing.T) {
	// f inserts edges into gutters of batch size b over 4 vertices, with
	// room for every batch, and checks the batches insert emits, then
	// Buffered, then the batches Flush emits.
	f := func(b int, edges []stream.Edge, wantFull []Batch, wantBuffered uint64, wantFlushed []Batch) {
		t.Helper()
		g := newGutters(t, Config{Vertices: 4, BatchUpdates: b, QueueBatches: 64})
		for _, e := range edges {
			g.insert(e)
		}
		take := func() []Batch {
			var out []Batch
			for len(g.Batches()) > 0 {
				bt := <-g.Batches()
				out = append(out, Batch{Vertex: bt.Vertex, Neighbors: bt.IDs(new([]uint32))})
				g.Release(bt)
			}
			return out
		}
		equal := func(a, b []Batch) bool {
			return slices.EqualFunc(a, b, func(x, y Batch) bool {
				return x.Vertex == y.Vertex && slices.Equal(x.Neighbors, y.Neighbors)
			})
		}
		if got := take(); !equal(got, wantFull) {
			t.Fatalf("insert emitted %v, want %v", got, wantFull)
		}
		if got := g.buffered(); got != wantBuffered {
			t.Fatalf("Buffered = %d, want %d", got, wantBuffered)
		}
		g.Flush()
		got := take()
		// Flush's order is not part of its contract.
		slices.SortFunc(got, func(x, y Batch) int { return int(x.Vertex) - int(y.Vertex) })
		if !equal(got, wantFlushed) {
			t.Fatalf("Flush emitted %v, want %v", got, wantFlushed)
		}
		if g.buffered() != 0 {
			t.Fatalf("Buffered = %d after Flush", g.buffered())
		}
		st := g.Stats()
		if want := (Stats{Updates: uint64(len(edges)), Batches: uint64(len(wantFull) + len(wantFlushed)),
			FlushedBatches: uint64(len(wantFlushed))}); st != want {
			t.Fatalf("Stats = %+v, want %+v", st, want)
		}
		g.Flush() // nothing left: emits nothing
		if len(g.Batches()) != 0 {
			t.Fatalf("a second Flush emitted batches")
		}
		requireNoError(t, g.Close())
	}
	bt := func(v uint32, ns ...uint32) Batch { return Batch{Vertex: v, Neighbors: ns} }

	// Nothing inserted, nothing emitted.
	f(3, nil, nil, 0, nil)
	// One update: two ids buffered, two one-id batches on Flush.
	f(3, []stream.Edge{edge(0, 1)}, nil, 2, []Batch{bt(0, 1), bt(1, 0)})
	// Batch size 1: every update emits both directions at once.
	f(1, []stream.Edge{edge(0, 1), edge(2, 1)}, []Batch{bt(0, 1), bt(1, 0), bt(2, 1), bt(1, 2)}, 0, nil)
	// Vertex 0 fills after 3 updates; the others keep theirs.
	f(3, []stream.Edge{edge(0, 1), edge(0, 2), edge(3, 0), edge(1, 2)},
		[]Batch{bt(0, 1, 2, 3)}, 5, []Batch{bt(1, 0, 2), bt(2, 0, 1), bt(3, 0)})
	// The same edge again and again: both ends fill on the same update,
	// Dst's gutter after Src's.
	f(2, []stream.Edge{edge(2, 3), edge(3, 2), edge(2, 3)},
		[]Batch{bt(3, 2, 2), bt(2, 3, 3)}, 2, []Batch{bt(2, 3), bt(3, 2)})
}

// TestInsertBatch checks that InsertBatch buffers as insert (one update at a time) does.
func TestInsertBatch(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	us := make([]stream.Update, 5000)
	for i := range us {
		s, d := rng.Uint32N(50), rng.Uint32N(49)
		if d >= s {
			d++
		}
		us[i] = stream.Update{Type: stream.UpdateType(i % 2), Edge: edge(s, d)}
	}
	run := func(insert func(g *Gutters)) collected {
		g := newGutters(t, Config{Vertices: 50, BatchUpdates: 7, QueueBatches: 3})
		var c collected
		var wg sync.WaitGroup
		wg.Go(func() { c = consume(g, nil) })
		insert(g)
		if g.Stats().Updates != uint64(len(us)) {
			t.Errorf("Stats.Updates = %d", g.Stats().Updates)
		}
		g.Flush()
		requireNoError(t, g.Close())
		wg.Wait()
		return c
	}
	one := run(func(g *Gutters) {
		for _, u := range us {
			g.insert(u.Edge)
		}
	})
	batch := run(func(g *Gutters) {
		for i := 0; i < len(us); i += 333 {
			g.InsertBatch(us[i:min(i+333, len(us))])
		}
	})
	if !maps.Equal(one.pairs, batch.pairs) || !slices.Equal(one.batches, batch.batches) {
		t.Errorf("InsertBatch emitted other batches than insert")
	}
}

// TestPairsOut is the property test: whatever the batch size and queue
// length, the (vertex, neighbour) pairs that come out of the batches are
// exactly the inserted updates, each once in each direction.
func TestPairsOut(t *testing.T) {
	for _, cfg := range []struct{ vertices, batch, queue, updates int }{
		{2, 1, 1, 100},
		{5, 1, 1, 1000},
		{10, 3, 1, 5000},
		{100, 16, 4, 20000},
		{1000, 64, 2, 50000},
		{1000, 1024, 16, 50000}, // gutters never fill: all from Flush
		{64, 5, 100, 30000},     // more spares than will ever be out
	} {
		t.Run(fmt.Sprintf("vertices=%d/batch=%d/queue=%d", cfg.vertices, cfg.batch, cfg.queue), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(cfg.vertices), uint64(cfg.batch)))
			g := newGutters(t, Config{Vertices: uint32(cfg.vertices), BatchUpdates: cfg.batch, QueueBatches: cfg.queue})
			want := map[pair]int{}
			var got collected
			var wg sync.WaitGroup
			wg.Go(func() {
				got = consume(g, func(b Batch) {
					if b.Len() < 1 || b.Len() > cfg.batch {
						t.Errorf("batch of %d ids for vertex %d", b.Len(), b.Vertex)
					}
					for _, u := range b.IDs(new([]uint32)) {
						if u == b.Vertex || u >= uint32(cfg.vertices) {
							t.Errorf("vertex %d got neighbour %d", b.Vertex, u)
						}
					}
				})
			})
			for i := range cfg.updates {
				s := rng.Uint32N(uint32(cfg.vertices))
				d := rng.Uint32N(uint32(cfg.vertices - 1))
				if d >= s {
					d++
				}
				g.insert(edge(s, d))
				want[pair{s, d}]++
				want[pair{d, s}]++
				if i == cfg.updates/2 {
					g.Flush() // a query in the middle of the stream
				}
			}
			buffered := g.buffered()
			flushedBefore := g.Stats().FlushedBatches
			full := g.Stats().Batches - flushedBefore
			g.Flush()
			requireNoError(t, g.Close())
			wg.Wait()
			if !maps.Equal(got.pairs, want) {
				t.Fatalf("pairs out differ from 2 × pairs in (%d distinct out, %d in)", len(got.pairs), len(want))
			}
			total := 0
			for _, n := range got.batches {
				total += n
			}
			if total != 2*cfg.updates {
				t.Errorf("%d ids out, want %d", total, 2*cfg.updates)
			}
			if uint64(len(got.batches)) != g.Stats().Batches {
				t.Errorf("%d batches received, Stats.Batches = %d", len(got.batches), g.Stats().Batches)
			}
			// A gutter is emitted the moment it fills, so exactly the
			// batches insert emitted are full, and Flush's are not.
			nfull := uint64(0)
			for _, k := range got.batches {
				if k == cfg.batch {
					nfull++
				}
			}
			if nfull != full {
				t.Errorf("%d full batches, Stats says insert emitted %d", nfull, full)
			}
			// The last Flush's batches, the last to arrive, hold what
			// Buffered counted.
			last := got.batches[len(got.batches)-int(g.Stats().FlushedBatches-flushedBefore):]
			sum := uint64(0)
			for _, k := range last {
				sum += uint64(k)
			}
			if sum != buffered {
				t.Errorf("Buffered said %d before the last Flush, which emitted %d ids", buffered, sum)
			}
		})
	}
}

// TestBackPressure checks that with no consumer insert blocks once
// QueueBatches batches are out, and goes on when one is released.
func TestBackPressure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const queue = 3
		g := newGutters(t, Config{Vertices: 4, BatchUpdates: 2, QueueBatches: queue})
		var done [10]bool // done[i]: insert i returned
		var mu sync.Mutex
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			// Each insert of (0,1) adds one id to gutter 0 and one to
			// gutter 1; every second insert emits two batches.
			for i := range done {
				g.insert(edge(0, 1))
				mu.Lock()
				done[i] = true
				mu.Unlock()
			}
		}()
		returned := func() int {
			mu.Lock()
			defer mu.Unlock()
			n := 0
			for _, d := range done {
				if d {
					n++
				}
			}
			return n
		}
		synctest.Wait() // the inserter is blocked or finished
		// Inserts 0..2 emit 2 batches (after insert 1) and the first of
		// insert 3's two: then the queue holds 3 and the spares are gone.
		if n, q := returned(), len(g.Batches()); n != 3 || q != queue {
			t.Fatalf("with no consumer: %d inserts returned, %d batches queued; want 3 and %d", n, q, queue)
		}
		// Releasing one batch lets insert 3 finish; insert 4 emits
		// nothing and insert 5 blocks again with the queue full.
		g.Release(<-g.Batches())
		synctest.Wait()
		if n, q := returned(), len(g.Batches()); n != 5 || q != queue {
			t.Fatalf("after one release: %d inserts returned, %d batches queued; want 5 and %d", n, q, queue)
		}
		// A consumer drains the rest.
		go func() {
			for b := range g.Batches() {
				g.Release(b)
			}
		}()
		<-finished
		g.Flush()
		requireNoError(t, g.Close())
		synctest.Wait()
	})
}

// TestFlush_BlocksWithoutConsumer checks that Flush, too, waits for spares.
func TestFlush_BlocksWithoutConsumer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGutters(t, Config{Vertices: 8, BatchUpdates: 100, QueueBatches: 2})
		for v := uint32(1); v < 8; v++ {
			g.insert(edge(0, v)) // 8 non-empty gutters
		}
		flushed := make(chan struct{})
		go func() { g.Flush(); close(flushed) }()
		synctest.Wait()
		select {
		case <-flushed:
			t.Fatal("Flush of 8 gutters returned with room for 2 batches and no consumer")
		default:
		}
		n := 0
		for n < 8 {
			g.Release(<-g.Batches())
			n++
		}
		<-flushed
		if g.buffered() != 0 || g.Stats().FlushedBatches != 8 {
			t.Errorf("after Flush: Buffered = %d, FlushedBatches = %d", g.buffered(), g.Stats().FlushedBatches)
		}
		requireNoError(t, g.Close())
	})
}

// TestInsert_Allocs checks that a steady-state insert allocates nothing.
func TestInsert_Allocs(t *testing.T) {
	const vertices = 1000
	g := newGutters(t, Config{Vertices: vertices, BatchUpdates: 32, QueueBatches: 4})
	var wg sync.WaitGroup
	wg.Go(func() {
		for b := range g.Batches() {
			g.Release(b)
		}
	})
	defer wg.Wait()
	defer g.Close()
	rng := rand.New(rand.NewPCG(2, 2))
	edges := make([]stream.Edge, 1<<14)
	for i := range edges {
		edges[i] = randomEdge(rng, vertices)
	}
	// Warm up: every gutter has been non-empty once, so the list of
	// non-empty gutters has reached its capacity.
	for v := uint32(1); v < vertices; v++ {
		g.insert(edge(0, v))
	}
	i := 0
	allocs := testing.AllocsPerRun(10000, func() {
		g.insert(edges[i%len(edges)])
		i++
	})
	if allocs != 0 {
		t.Errorf("insert allocates %v times per call", allocs)
	}
	us := make([]stream.Update, 100)
	for i := range us {
		us[i].Edge = edges[i]
	}
	if allocs := testing.AllocsPerRun(1000, func() { g.InsertBatch(us) }); allocs != 0 {
		t.Errorf("InsertBatch allocates %v times per call", allocs)
	}
}

func TestConfig_Validate(t *testing.T) {
	if err := (Config{Vertices: 10, BatchUpdates: DefaultBatchUpdates, QueueBatches: DefaultQueueBatches}).Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	if err := (Config{Vertices: 2}).Validate(); err != nil {
		t.Errorf("zero fields mean defaults: %v", err)
	}
	err := Config{Vertices: 1, BatchUpdates: -1, QueueBatches: 1<<20 + 1}.Validate()
	var joined interface{ Unwrap() []error }
	if !errors.As(err, &joined) || len(joined.Unwrap()) != 3 {
		t.Fatalf("Validate = %v, want 3 joined errors", err)
	}
	for _, want := range []string{"Vertices = 1", "BatchUpdates = -1", "QueueBatches = 1048577"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Validate = %q, does not mention %q", err, want)
		}
	}
	// Buffers are numbered by int32: vertices' first, then the spares.
	if err := (Config{Vertices: 1<<31 - 16}).Validate(); err == nil {
		t.Error("Validate accepted 2^31-16 vertices and 16 spares")
	}
	if err := (Config{Vertices: 1<<31 - 17, BatchUpdates: 1}).Validate(); err != nil {
		t.Errorf("Validate refused 2^31-17 vertices and 16 spares: %v", err)
	}
	if _, err := New(Config{Vertices: 1 << 31}); err == nil {
		t.Error("New accepted 2^31 vertices")
	}
	if g, err := New(Config{Vertices: 0}); g != nil || err == nil {
		t.Error("New accepted 0 vertices")
	}
	g := newGutters(t, Config{Vertices: 3})
	if c := g.Config(); c.BatchUpdates != 1024 || c.QueueBatches != 16 {
		t.Errorf("defaults: %+v", c)
	}
}

func TestClose(t *testing.T) {
	g := newGutters(t, Config{Vertices: 4, BatchUpdates: 2})
	g.insert(edge(0, 1))
	g.insert(edge(0, 2)) // vertex 0's batch is queued
	requireNoError(t, g.Close())
	if err := g.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close = %v, want ErrClosed", err)
	}
	// The queued batch is still delivered, then the channel ends.
	n := 0
	for b := range g.Batches() {
		g.Release(b)
		n++
	}
	if n != 1 {
		t.Errorf("%d batches after Close, want 1", n)
	}
}
