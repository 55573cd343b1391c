package gutters

import "unsafe"

// spillQueue is the number of full tail lines an inserting goroutine
// holds on their way to the slab (see spills).
const spillQueue = 64

// spills holds full tail lines on their way to the slab, for one
// inserting goroutine: a ring of spillQueue lines, prefetched a half at a
// time and copied a half later.
type spills struct {
	n    int                        // lines queued, at most spillQueue
	end  int                        // ring index after the newest line
	at   [spillQueue]int            // index in Gutters.raw of each line's destination
	line [spillQueue][64 / 4]uint32 // a 64-byte tail line each, of either width
}

// spill queues line, whose last id is u, for the 64 bytes at raw[at]. Each time half
// a ring of lines has queued, it prefetches their destinations all at
// once, so that their TLB walks overlap, and copies the half before, whose
// lines have arrived meanwhile. It reads the line an id at a time and
// takes u from its argument: a wider load spanning recent stores would not
// be forwarded from the store buffer and would wait until they are
// written.
func spill[T lineID](sq *spills, g *Gutters, at int, line []T, u uint32) {
	k := int(lineIDs[T]())
	e := unsafe.Slice((*T)(unsafe.Pointer(&sq.line[sq.end])), k)
	for i, x := range line[:k-1] {
		e[i] = x
	}
	e[k-1] = T(u)
	sq.at[sq.end] = at
	sq.end = (sq.end + 1) % spillQueue
	sq.n++
	if sq.end%(spillQueue/2) != 0 {
		return
	}
	half := (sq.end + spillQueue/2) % spillQueue
	prefetchLines(&g.raw[0], &sq.at[half], spillQueue/2)
	if sq.n == spillQueue {
		for i := sq.end; i < sq.end+spillQueue/2; i++ { // the older half
			sq.write(g, i)
		}
		sq.n -= spillQueue / 2
	}
}

// drain copies the queued lines to the slab.
func (sq *spills) drain(g *Gutters) {
	for k := range sq.n {
		sq.write(g, (sq.end-sq.n+k+spillQueue)%spillQueue)
	}
	sq.n, sq.end = 0, 0
}

// write copies queued line i to its destination.
func (sq *spills) write(g *Gutters, i int) {
	*(*[64 / 4]uint32)(g.raw[sq.at[i]:]) = sq.line[i]
}

// drainSpills copies every queued tail line, the Parts' too, to the slab.
func (g *Gutters) drainSpills() {
	for _, p := range g.shares {
		p.sq.drain(g)
	}
}
