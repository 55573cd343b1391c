package gutters

import "slices"

// Buffered returns the number of neighbour ids held in gutters and in the
// staging buffer (twice the updates not yet emitted). It changes nothing.
func (g *Gutters) Buffered() uint64 {
	var n uint64
	for v := range g.nonEmpty() {
		n += uint64(g.tails[v].fill)
	}
	if g.stage != nil {
		n += 2 * uint64(len(g.stage.updates))
	}
	return n
}

// Settle moves the staged updates into the gutters, emitting those that
// fill, and copies every non-empty gutter's tail line to its buffer, so
// that Held sees every update inserted so far. It blocks as InsertBatch
// does; its cost follows the number of non-empty gutters.
func (g *Gutters) Settle() {
	g.insertStaged()
	g.drainSpills()
	for v := range g.nonEmpty() {
		g.settle(v)
	}
}

// Held returns the neighbour ids buffered in v's gutter: inserted and not
// yet emitted. It is whole only after Settle, with no insert since. The
// slice aliases the gutter, or for narrow gutters (Vertices ≤ 2^16) *buf,
// which Held grows as needed and fills with the ids widened; it is valid
// until the next InsertBatch, Part.Insert, Flush or Close (and, narrow, the next use of
// buf), and the caller must not write it. Held may be called from several
// goroutines, each with its own buf, while none of those runs.
func (g *Gutters) Held(v uint32, buf *[]uint32) []uint32 {
	t := g.tails[v]
	if g.slab16 != nil {
		return widen(buf, g.buffer16(t.slot)[:t.fill])
	}
	return g.buffer32(t.slot)[:t.fill:t.fill]
}

// HeldLen returns the number of ids Held would return.
func (g *Gutters) HeldLen(v uint32) int { return int(g.tails[v].fill) }

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

// Drop empties v's gutter without emitting it, for a caller that has
// sketched Held(v) itself (a query applying the buffered updates of the
// vertices it reads); it counts as a LocalBatches batch. Not safe for
// concurrent use with InsertBatch, Flush or Held.
func (g *Gutters) Drop(v uint32) {
	if g.tails[v].fill > 0 {
		g.tails[v].fill = 0
		g.own().stats.LocalBatches++
	}
}
