package gutters

// settle copies the ids of v's tail line that its buffer lacks into the
// buffer, which then holds the whole gutter. The line keeps them, so
// settling twice, or appending after, is correct.
func (g *Gutters) settle(v uint32) {
	t := g.tails[v]
	if t.fill == 0 {
		return
	}
	if g.lines16 != nil {
		settleIn(g.buffer16(t.slot), g.lines16, v, t.fill)
	} else {
		settleIn(g.buffer32(t.slot), g.lines, v, t.fill)
	}
}

// settleIn copies to buf the ids of v's tail line in lines that a gutter
// of fill ids holds only there.
func settleIn[T lineID](buf, lines []T, v, fill uint32) {
	k := lineIDs[T]()
	at := (fill - 1) &^ (k - 1)
	copy(buf[at:fill], lines[int(v)*int(k):])
}

// emit hands v's buffer to the queue and gives v a spare one, counting the
// batch in share p (the emitting goroutine's). When no spare is free it
// waits for one, or, once InterruptOn's channel is closed, passes the
// gutter to its apply and empties it. The select waits only when the queue
// is full, so a free spare costs the receive it always did.
func (g *Gutters) emit(v uint32, p *Part) {
	st := &p.stats
	select {
	case spare := <-g.free:
		g.handOver(v, spare, st)
		return
	default:
	}
	select {
	case spare := <-g.free:
		g.handOver(v, spare, st)
	case <-g.interrupt:
		g.settle(v)
		// On several Parts' goroutines at once: no shared widening
		// buffer, and it happens only after an interruption.
		var wide []uint32
		g.onInterrupt(v, g.held(v, &wide))
		g.tails[v].fill = 0
		st.InterruptedBatches++
	}
}

// InterruptOn makes inserts and flushes stop waiting for a spare buffer
// once done is closed (a cancelled ingestion whose batch consumers have
// stalled): from then on a gutter that must be emitted while no spare is
// free goes to apply, as in FlushLocal, with its ids valid only during the
// call, and is emptied, so that the insert returns and no update is lost.
// apply runs on the inserting goroutines, concurrently when Parts insert.
// A nil done, as before the first call, waits as long as it takes. Call
// it only while no insert or flush runs.
func (g *Gutters) InterruptOn(done <-chan struct{}, apply func(vertex uint32, neighbors []uint32)) {
	g.interrupt, g.onInterrupt = done, apply
}

// handOver queues v's buffer, settled, as a batch and gives v the empty
// buffer spare, counting the batch in st.
func (g *Gutters) handOver(v uint32, spare int32, st *Stats) {
	g.settle(v)
	t := g.tails[v]
	g.tails[v] = tail{slot: spare}
	st.Batches++
	var ticket uint64
	if g.cfg.Queue != nil {
		ticket = g.cfg.Queue(v)
	}
	b := Batch{Vertex: v, Ticket: ticket, slot: t.slot}
	if g.slab16 != nil {
		b.Narrow = g.buffer16(t.slot)[:t.fill]
	} else {
		b.Neighbors = g.buffer32(t.slot)[:t.fill]
	}
	g.queue <- b
}

// buffer32 and buffer16 return buffer slot of the slab, BatchUpdates ids
// long, of wide and narrow gutters.
func (g *Gutters) buffer32(slot int32) []uint32 {
	return buffer(g.raw, slot, g.stride, g.cfg.BatchUpdates)
}

func (g *Gutters) buffer16(slot int32) []uint16 {
	return buffer(g.slab16, slot, g.stride, g.cfg.BatchUpdates)
}

func buffer[T lineID](slab []T, slot int32, stride, n int) []T {
	lo := int(slot) * stride
	return slab[lo : lo+n : lo+n]
}

// Flush emits every non-empty gutter as a batch. It blocks as InsertBatch does,
// so a consumer must be draining Batches. The caller learns that the
// batches have been applied from its consumer, not from Flush.
func (g *Gutters) Flush() { g.flush(nil, nil) }

// FlushLocal is Flush for a caller that can sketch batches itself: while a
// spare buffer is free it emits as Flush does, and when none is, instead of
// blocking, it calls apply with the gutter's vertex and neighbour ids (valid
// only during the call) and empties the gutter. A query's flush then keeps
// every core busy: the consumers drain the queue while the flushing
// goroutine sketches the rest. Batches passed to apply are not queued:
// Config.Queue is not called for them, nor are they counted in
// Stats().Batches.
//
// stop, if not nil, is called before each gutter: when it returns true
// FlushLocal returns false at once, the gutters it has not reached left as
// they were (a later flush takes them), so that an interrupted query's
// flush ends within one apply rather than after every gutter (seconds on
// 2^17 vertices whose sketches are touched for the first time). It
// returns true when every gutter was taken.
func (g *Gutters) FlushLocal(apply func(vertex uint32, neighbors []uint32), stop func() bool) bool {
	return g.flush(apply, stop)
}

// flush takes every non-empty gutter, after the staged updates: it hands
// the gutter over as a batch, waiting for a spare buffer, or, when local
// is set and no spare is free, passes it to local and empties it in place.
// It walks each share's list of non-empty gutters in turn, emptying it.
// It returns false when stop ended it early. Settled views taken before
// become stale.
func (g *Gutters) flush(local func(vertex uint32, neighbors []uint32), stop func() bool) bool {
	g.moveOn()
	g.insertStaged()
	g.drainSpills()
	for _, p := range g.shares {
		var all bool
		if p.nonEmpt, all = g.flushList(p.nonEmpt, local, stop); !all {
			return false
		}
	}
	return true
}

// flushList takes the gutters of the vertices in list, as flush does, and
// returns what is left of the list (empty, unless stop ended it early)
// and whether it took them all.
func (g *Gutters) flushList(list []uint32, local func(vertex uint32, neighbors []uint32), stop func() bool) ([]uint32, bool) {
	own := g.own()
	for i, v := range list {
		if stop != nil && stop() {
			return list[i:], false
		}
		g.listed[v] = false
		n := g.tails[v].fill
		if n == 0 {
			continue
		}
		if local == nil {
			g.emit(v, own)
			own.stats.FlushedBatches++
			continue
		}
		select {
		case spare := <-g.free:
			g.handOver(v, spare, &own.stats)
			own.stats.FlushedBatches++
		default:
			g.settle(v)
			local(v, g.held(v, &g.wide))
			g.tails[v].fill = 0
			own.stats.LocalBatches++
		}
	}
	return list[:0], true
}
