package gutters

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"sketchcc/stream"
)

// TestSettledStale: a view from Settle reads the buffered ids and stays
// valid through its own Drop; once the gutters move on (each entry point
// that changes them), every method of the old view returns ErrStale and
// reads or changes nothing, while a new Settle reads the gutters again.
// The zero view is stale too.
func TestSettledStale(t *testing.T) {
	us := []stream.Update{{Edge: edge(1, 2)}, {Edge: edge(1, 3)}, {Edge: edge(4, 1)}}
	moves := []struct {
		name string
		move func(g *Gutters, p *Part)
	}{
		{"InsertBatch", func(g *Gutters, _ *Part) { g.InsertBatch(us[:1]) }},
		{"InsertBatch of nothing", func(g *Gutters, _ *Part) { g.InsertBatch(nil) }},
		{"Part.Insert", func(_ *Gutters, p *Part) { p.Insert([][2]uint32{{5, 6}}) }},
		{"Flush", func(g *Gutters, _ *Part) { g.Flush() }},
		{"FlushLocal", func(g *Gutters, _ *Part) { g.FlushLocal(func(uint32, []uint32) {}, nil) }},
		{"Settle", func(g *Gutters, _ *Part) { g.Settle() }},
		{"Close", func(g *Gutters, _ *Part) { requireNoError(t, g.Close()) }},
	}
	for _, wide := range []bool{false, true} {
		for _, m := range moves {
			t.Run(fmt.Sprintf("wide=%v/%s", wide, m.name), func(t *testing.T) {
				g := newGutters(t, Config{Vertices: 40, BatchUpdates: 8, QueueBatches: 4, wideTails: wide})
				parts, err := g.Parts(1)
				requireNoError(t, err)
				var wg sync.WaitGroup
				wg.Go(func() { consume(g, nil) })
				defer func() {
					if !g.closed {
						requireNoError(t, g.Close())
					}
					wg.Wait()
				}()
				g.InsertBatch(us)
				view := g.Settle()
				var buf []uint32
				if h, err := view.Held(1, &buf); err != nil || !slices.Equal(h, []uint32{2, 3, 4}) {
					t.Fatalf("Held(1) = %v, %v; want [2 3 4]", h, err)
				}
				if err := view.Drop(2); err != nil {
					t.Fatalf("Drop(2) = %v", err)
				}
				if n, err := view.Len(2); err != nil || n != 0 {
					t.Fatalf("Len(2) after its Drop = %d, %v; want 0 and a valid view", n, err)
				}
				m.move(g, parts[0])
				if h, err := view.Held(1, &buf); !errors.Is(err, ErrStale) || h != nil {
					t.Errorf("Held(1) after %s = %v, %v; want ErrStale", m.name, h, err)
				}
				if n, err := view.Len(1); !errors.Is(err, ErrStale) || n != 0 {
					t.Errorf("Len(1) after %s = %d, %v; want ErrStale", m.name, n, err)
				}
				before := g.tails[4].fill
				if err := view.Drop(4); !errors.Is(err, ErrStale) || g.tails[4].fill != before {
					t.Errorf("Drop(4) after %s = %v, gutter %d ids then %d; want ErrStale, unchanged", m.name, err, before, g.tails[4].fill)
				}
				if g.closed {
					return
				}
				if _, err := g.Settle().Len(4); err != nil {
					t.Errorf("a new view after %s: %v", m.name, err)
				}
			})
		}
	}
	var zero Settled
	if _, err := zero.Held(0, new([]uint32)); !errors.Is(err, ErrStale) {
		t.Errorf("zero Settled: Held = %v, want ErrStale", err)
	}
}
