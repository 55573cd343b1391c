package gutters

import (
	"errors"
	"slices"
)

// ErrStale is returned by a Settled view used after its Gutters moved on.
var ErrStale = errors.New("gutters: settled view used after the gutters changed")

// Settled is the view of the neighbour ids buffered in the gutters that
// Settle returns: for each vertex, the ids inserted and not yet emitted,
// which a query adds to the sketches it reads. It is valid until the
// gutters next change other than through its own Drop: the next
// InsertBatch, Part.Insert, Flush, FlushLocal, Settle or Close. From then
// on every method returns ErrStale and reads nothing; so does the zero
// Settled. A Settled is a small value, copied freely.
type Settled struct {
	g   *Gutters
	gen uint64 // g.gen when Settle returned
}

// Settle moves the staged updates into the gutters, emitting those that
// fill, copies every non-empty gutter's tail line to its buffer, and
// returns the view of every update inserted so far and not emitted. It
// blocks as InsertBatch does; its cost follows the number of non-empty
// gutters. Earlier views become stale.
func (g *Gutters) Settle() Settled {
	g.moveOn()
	g.insertStaged()
	g.drainSpills()
	for v := range g.nonEmpty() {
		g.settle(v)
	}
	return Settled{g: g, gen: g.gen.Load()}
}

// moveOn makes every Settled view taken so far stale. Each entry point
// that changes the gutters calls it once per call, not per update.
func (g *Gutters) moveOn() { g.gen.Add(1) }

// check returns ErrStale unless s is still valid.
func (s Settled) check() error {
	if s.g == nil || s.g.gen.Load() != s.gen {
		return ErrStale
	}
	return nil
}

// Held returns the neighbour ids buffered in v's gutter. The slice aliases
// the gutter, or for narrow gutters (Vertices ≤ 2^16) *buf, which Held
// grows as needed and fills with the ids widened; it is valid while s is
// (and, narrow, until the next use of buf), and the caller must not write
// it. Held may be called from several goroutines at once, each with its
// own buf. It returns ErrStale, and no ids, once s is stale.
func (s Settled) Held(v uint32, buf *[]uint32) ([]uint32, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.g.held(v, buf), nil
}

// Len returns the number of ids Held would return, or ErrStale.
func (s Settled) Len(v uint32) (int, error) {
	if err := s.check(); err != nil {
		return 0, err
	}
	return int(s.g.tails[v].fill), nil
}

// Drop empties v's gutter without emitting it, for a caller that has
// sketched Held(v) itself (a query applying the buffered updates of the
// vertices it reads); it counts as a LocalBatches batch, and s stays
// valid. It is not safe for concurrent use with Held. It returns
// ErrStale, and changes nothing, once s is stale.
func (s Settled) Drop(v uint32) error {
	if err := s.check(); err != nil {
		return err
	}
	g := s.g
	if g.tails[v].fill > 0 {
		g.tails[v].fill = 0
		g.own().stats.LocalBatches++
	}
	return nil
}

// held returns the ids of v's gutter, whole once settled: aliasing the
// slab, or widened into *buf for narrow gutters.
func (g *Gutters) held(v uint32, buf *[]uint32) []uint32 {
	t := g.tails[v]
	if g.slab16 != nil {
		return widen(buf, g.buffer16(t.slot)[:t.fill])
	}
	return g.buffer32(t.slot)[:t.fill:t.fill]
}

// buffered returns the number of neighbour ids held in gutters and in the
// staging buffer (twice the updates not yet emitted). It changes nothing.
func (g *Gutters) buffered() uint64 {
	var n uint64
	for v := range g.nonEmpty() {
		n += uint64(g.tails[v].fill)
	}
	if g.stage != nil {
		n += 2 * uint64(len(g.stage.updates))
	}
	return n
}

// widen stores ids as uint32 in *buf, growing it as needed, and returns
// them.
func widen(buf *[]uint32, ids []uint16) []uint32 {
	w := slices.Grow((*buf)[:0], len(ids))[:len(ids)]
	for i, x := range ids {
		w[i] = uint32(x)
	}
	*buf = w
	return w
}
