package gutters

import (
	"unsafe"

	"sketchcc/stream"
)

// insert puts the update {e.Src, e.Dst} into both endpoints' gutters, one
// update at a time and without staging: the reference InsertBatch is
// tested against.
func (g *Gutters) insert(e stream.Edge) {
	g.add(e.Src, e.Dst)
	g.add(e.Dst, e.Src)
	g.own().pairs += 2
}

// InsertBatch puts every update {u.Src, u.Dst} of us into both endpoints'
// gutters. Ids must be < Vertices and distinct (the stream readers check).
// It blocks while QueueBatches batches are queued or unreleased (see
// InterruptOn), and allocates nothing. With many vertices (see
// stageMinVertices) it first collects updates in a staging buffer and
// inserts them in runs grouped by vertex range, so that the appends of one
// run share cache lines; the staged updates reach the gutters before any
// Flush, FlushLocal or Settle. Settled views taken before become stale.
func (g *Gutters) InsertBatch(us []stream.Update) {
	g.moveOn()
	g.own().pairs += 2 * uint64(len(us))
	if g.stage == nil {
		g.insertUpdates(us)
		return
	}
	for len(us) > 0 {
		var full bool
		us, full = g.stage.add(us)
		if full {
			g.insertStaged()
		}
	}
}

// insertUpdates appends both pairs of every update of us, for InsertBatch:
// pair 2i is update i's {Src, Dst}, pair 2i+1 its {Dst, Src}.
func (g *Gutters) insertUpdates(us []stream.Update) {
	if g.lines16 != nil {
		insertUpdatesIn(g, g.lines16, us)
	} else {
		insertUpdatesIn(g, g.lines, us)
	}
}

// insertUpdatesIn is insertUpdates for tail lines of T: as in
// insertPairsIn, a loop that calls nothing appends up to the first pair
// that needs appendEdge.
func insertUpdatesIn[T lineID](g *Gutters, lines []T, us []stream.Update) {
	for k := 0; ; k++ {
		k = appendUpdates(lines, g.tails, g.cfg.BatchUpdates, us, k)
		if k == 2*len(us) {
			return
		}
		v, u := us[k/2].Src, us[k/2].Dst
		if k%2 == 1 {
			v, u = u, v
		}
		appendEdge(g, lines, v, u, g.own())
	}
}

// appendUpdates appends the pairs of us from pair k on to the tail lines,
// up to the first that appendID leaves to appendEdge, and returns its
// index, or 2·len(us) (pairs numbered as in insertUpdates).
//
//go:noinline
func appendUpdates[T lineID](lines []T, tails []tail, per int, us []stream.Update, k int) int {
	i := k / 2
	if k%2 == 1 {
		if !appendID(lines, tails, per, us[i].Dst, us[i].Src) {
			return k
		}
		i++
	}
	for ; i < len(us); i++ {
		s, d := us[i].Src, us[i].Dst
		if !appendID(lines, tails, per, s, d) {
			return 2 * i
		}
		if !appendID(lines, tails, per, d, s) {
			return 2*i + 1
		}
	}
	return 2 * len(us)
}

// insertStaged appends the staged updates' pairs, grouped by vertex range.
func (g *Gutters) insertStaged() {
	if g.stage == nil {
		return
	}
	g.insertPairs(g.stage.take(), g.own())
}

// insertPairs appends id p[1] to vertex p[0]'s gutter for each pair p, as
// share p of the inserting goroutine: it lists new non-empty gutters, counts
// batches and queues spills in the share.
func (g *Gutters) insertPairs(pairs [][2]uint32, p *Part) {
	if g.lines16 != nil {
		insertPairsIn(g, g.lines16, pairs, p)
	} else {
		insertPairsIn(g, g.lines, pairs, p)
	}
}

// insertPairsIn is insertPairs for tail lines of T. appendRun appends up
// to the first pair that needs appendEdge, and the pair goes to appendEdge
// here, between runs.
func insertPairsIn[T lineID](g *Gutters, lines []T, pairs [][2]uint32, p *Part) {
	for {
		i := appendRun(lines, g.tails, g.cfg.BatchUpdates, pairs)
		if i == len(pairs) {
			return
		}
		appendEdge(g, lines, pairs[i][0], pairs[i][1], p)
		pairs = pairs[i+1:]
	}
}

// appendRun appends pairs to the tail lines up to the first that appendID
// leaves to appendEdge, and returns how many it appended. It calls
// nothing, so its loop keeps everything in registers: with the call to
// appendEdge in the same loop, the compiler kept the fill count and the
// pair on the stack (BenchmarkPartInsert at 2^13 vertices: 4.64 cpu-ns
// per pair then, 4.22 now, on an AMD EPYC family 26 model 2), and a
// generic loop, passed its dictionary, cost 1.5 ns more than one written
// out per width. Without the call both compile to the same loop.
//
//go:noinline
func appendRun[T lineID](lines []T, tails []tail, per int, pairs [][2]uint32) int {
	for i := range pairs {
		// Two loads: a [2]uint32 copied whole goes through the stack.
		if !appendID(lines, tails, per, pairs[i][0], pairs[i][1]) {
			return i
		}
	}
	return len(pairs)
}

// tail is a vertex's gutter: the slab buffer it appends to and the ids it
// holds, fill. Of those, the first (fill-1) &^ (tailIDs-1) are in the
// buffer or queued for it, and the rest only in the tail line (a settled
// line is in both). Keeping slot and fill in one 8-byte record makes an
// append touch one line of gutter state besides the tail line.
type tail struct {
	slot int32
	fill uint32
}

// add appends u to v's gutter.
func (g *Gutters) add(v, u uint32) {
	g.insertPairs([][2]uint32{{v, u}}, g.own())
}

// lineID is the type of the ids in tail lines.
type lineID interface{ uint16 | uint32 }

// lineIDs is the number of ids of type T in a 64-byte tail line.
func lineIDs[T lineID]() uint32 { return 64 / uint32(unsafe.Sizeof(T(0))) }

// appendID appends u to v's tail line and reports true, unless the append
// is the gutter's first, the line's last or the gutter's last (per is
// BatchUpdates): then it changes nothing, reports false, and the caller
// must call appendEdge instead. It is small enough to inline into the
// insert loops.
func appendID[T lineID](lines []T, tails []tail, per int, v, u uint32) bool {
	// lineIDs[T](), spelt out: with the call the loops around kept the
	// fill count on the stack.
	k := 64 / uint32(unsafe.Sizeof(T(0)))
	t := &tails[v]
	n := t.fill
	if n%k == k-1 || n == 0 || int(n)+1 == per {
		return false
	}
	lines[int(v)*int(k)+int(n%k)] = T(u)
	t.fill = n + 1
	return true
}

// appendEdge appends u to v's gutter where appendID would not, for share
// p: it lists the gutter in p after its first append, queues a full tail
// line on p's spills for its buffer, and emits a full gutter, counting the
// batch in p.
//
//go:noinline
func appendEdge[T lineID](g *Gutters, lines []T, v, u uint32, p *Part) {
	k := lineIDs[T]()
	t := &g.tails[v]
	n := t.fill
	line := lines[int(v)*int(k) : int(v+1)*int(k)]
	line[n%k] = T(u)
	t.fill = n + 1
	if n == 0 && !g.listed[v] {
		g.listed[v] = true
		p.nonEmpt = append(p.nonEmpt, v)
	}
	if n%k == k-1 {
		at := int(t.slot)*g.stride + int(n) - int(k-1) // in ids
		spill(&p.sq, g, at*int(64/k)/4, line, u)       // in words of raw
	}
	if int(n)+1 == g.cfg.BatchUpdates {
		p.sq.drain(g)
		g.emit(v, p)
	}
}
