// Package gutters buffers edge updates per vertex until there are enough to
// be worth sketching together.
//
// A gutter holds neighbour ids for one vertex. Every edge update {u,v} goes
// into both endpoints' gutters: v into u's and u into v's. When a gutter
// holds BatchUpdates ids it becomes a Batch on a bounded queue and the
// vertex gets an empty buffer from a pool of spares; when no spare is free
// (QueueBatches batches queued or unreleased), InsertBatch blocks until a
// consumer releases a batch (that is the back-pressure that reaches the
// stream reader). Flush emits every
// non-empty gutter, as a query needs, at a cost that follows the number of
// non-empty gutters rather than the number of vertices.
//
// All buffers live in one pointer-free slab of (Vertices + QueueBatches)
// buffers of BatchUpdates ids (each padded to whole 64-byte lines), so
// nothing is allocated per batch and the garbage collector has nothing to
// scan. Ids take 16 bits when every vertex id fits (Vertices ≤ 2^16, the
// narrow gutters), 32 otherwise: at 2^15 vertices the slab is then 165 MB
// rather than 330, and each 64-byte trip to it carries 32 ids, not 16.
//
// An append does not write the slab: it writes the vertex's tail line, one
// 64-byte line in a dense array of Vertices lines (32 ids narrow, 16 wide). The
// appends of a stream land at random vertices; in the slab each vertex's
// buffer lies in its own 4 KiB page, so appending there would miss the TLB
// at every turn (and, on a virtual machine whose host maps guest memory in
// 4 KiB pages, walk two page tables), while the tail lines of 2^15
// vertices span 2 MiB. A full line joins a small queue per inserting
// goroutine (spillQueue lines); the queue prefetches the lines'
// destinations in the slab a half at a time, so that their TLB walks and
// cache misses overlap, and copies each line a half later.
//
// InsertBatch, Flush, FlushLocal, Settle and Close are not safe for
// concurrent use: one stream reader feeds them. Several goroutines may
// insert at once through Parts, each owning a disjoint share of the
// vertices. Release may be called from any goroutine. Settle returns a
// Settled view of the buffered ids for a query; each of those calls makes
// earlier views stale, so that a view read after the gutters moved on
// returns ErrStale instead of ids that are no longer there.
package gutters

import (
	"errors"
	"iter"
	"sync/atomic"
	"unsafe"

	"sketchcc/hugepage"
)

// ErrClosed is returned by operations on closed Gutters.
var ErrClosed = errors.New("gutters: closed")

// Batch is a full (or flushed) gutter: neighbour ids destined for one
// vertex's sketch. The receiver owns it until it calls Release.
type Batch struct {
	// Vertex is the vertex whose sketch the batch updates.
	Vertex uint32
	// Neighbors (wide gutters) or Narrow (Vertices ≤ 2^16) holds between
	// 1 and BatchUpdates neighbour ids, each != Vertex; the other is nil.
	// It aliases the gutter slab and is valid until Release.
	Neighbors []uint32
	Narrow    []uint16
	// Ticket is what Config.Queue returned for this batch, or 0.
	Ticket uint64
	slot   int32
}

// Len returns the number of neighbour ids of b.
func (b Batch) Len() int { return len(b.Neighbors) + len(b.Narrow) }

// IDs returns b's neighbour ids as uint32: Neighbors, or Narrow widened
// into *buf, which IDs grows as needed.
func (b Batch) IDs(buf *[]uint32) []uint32 {
	if b.Narrow != nil {
		return widen(buf, b.Narrow)
	}
	return b.Neighbors
}

// Stats counts what Gutters has done.
type Stats struct {
	// Updates is the number of edge updates inserted.
	Updates uint64
	// Batches is the number of batches emitted, full or flushed.
	Batches uint64
	// FlushedBatches is the number of batches emitted by Flush and
	// FlushLocal.
	FlushedBatches uint64
	// LocalBatches is the number of gutters FlushLocal applied itself.
	LocalBatches uint64
	// InterruptedBatches is the number of full gutters passed to the
	// interrupt's apply (InterruptOn) instead of being queued.
	InterruptedBatches uint64
}

// Gutters is the set of per-vertex gutters.
type Gutters struct {
	cfg Config
	buffers
	tails  []tail // by vertex: its buffer and how full it is
	listed []bool // by vertex: is it on a share's list of non-empty gutters
	// shares[0] is the caller's share (InsertBatch, the flushes), then
	// come the Parts (shares[1:]): each lists the non-empty gutters it
	// appended to, counts its batches and queues its spills. Walking the
	// shares (and nonEmpty) is how flush, Settle, the spills and Stats
	// reach every gutter.
	shares []*Part
	stage  *stage // updates not yet in the gutters; nil below stageMinVertices
	free   chan int32
	queue  chan Batch
	interruption
	// wide holds a narrow gutter's ids widened for FlushLocal's apply.
	wide   []uint32
	closed bool
	// gen counts the calls that changed the gutters (moveOn), so that a
	// Settled view knows when it is stale. Atomic: Parts insert at once.
	gen atomic.Uint64
}

// buffers is the gutters' memory, 64-byte aligned.
type buffers struct {
	stride int // cfg.stride()
	// raw is the slab, in 4-byte words: the spill queue copies lines to
	// it and prefetches them in it. It holds (Vertices + QueueBatches)
	// buffers of stride ids: 32-bit ids in raw itself, or, when
	// cfg.narrow(), 16-bit ids in slab16, a view of raw (else nil).
	raw    []uint32
	slab16 []uint16
	// By vertex, its tail line of tailIDs ids: lines16 when
	// cfg.narrow(), else lines; the other is nil.
	lines   []uint32
	lines16 []uint16
}

// interruption is InterruptOn's: an emit waiting for a spare stops
// waiting when interrupt is closed and passes the gutter to onInterrupt.
// Set only while no insert runs.
type interruption struct {
	interrupt   <-chan struct{}
	onInterrupt func(vertex uint32, neighbors []uint32)
}

// New returns empty gutters. It returns the errors of cfg.Validate.
func New(cfg Config) (*Gutters, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := int(cfg.Vertices)
	g := &Gutters{
		cfg:     cfg,
		buffers: buffers{stride: cfg.stride(), raw: alignedIDs(int(cfg.slabBytes() / 4))},
		tails:   make([]tail, n),
		listed:  make([]bool, n),
		// free holds every spare, so Release never blocks.
		free: make(chan int32, cfg.QueueBatches),
		// queue holds every batch that can exist at once, so emit blocks
		// only on free, never on queue.
		queue: make(chan Batch, cfg.QueueBatches),
	}
	if cfg.narrow() {
		g.lines16 = aligned[uint16](n * narrowTailIDs)
		g.slab16 = unsafe.Slice((*uint16)(unsafe.Pointer(unsafe.SliceData(g.raw))), 2*len(g.raw))
	} else {
		g.lines = alignedIDs(n * wideTailIDs)
	}
	for v := range g.tails {
		g.tails[v].slot = int32(v)
	}
	g.shares = []*Part{{g: g}}
	if cfg.Vertices >= stageMinVertices {
		g.stage = newStage(cfg.Vertices)
	}
	for i := range cfg.QueueBatches {
		g.free <- int32(n + i)
	}
	return g, nil
}

// alignedIDs returns n zero ids starting on a 64-byte boundary, so that
// every 16 ids from the start are one cache line.
func alignedIDs(n int) []uint32 { return aligned[uint32](n) }

// aligned returns n zeros of T starting on a 64-byte boundary.
func aligned[T lineID](n int) []T {
	size := int(unsafe.Sizeof(T(0)))
	s := make([]T, n+64/size)
	off := int(-uintptr(unsafe.Pointer(unsafe.SliceData(s)))&63) / size
	return s[off : off+n : off+n]
}

// Config returns the configuration with defaults filled in.
func (g *Gutters) Config() Config { return g.cfg }

// Batches returns the queue of batches. It is closed by Close.
func (g *Gutters) Batches() <-chan Batch { return g.queue }

// Release returns a batch's buffer to the spares. It must be called once per
// batch received; b must not be used after it. Safe for concurrent use.
func (g *Gutters) Release(b Batch) {
	g.free <- b.slot
}

// AdviseHugePages asks the kernel to back the gutter slab with transparent
// huge pages and reports whether it accepted (see package hugepage); the
// tail lines are advised too when they are large enough. Call it before
// the first insert; it pays when most gutters get appends.
func (g *Gutters) AdviseHugePages() bool {
	hugepage.Advise(g.lines)
	hugepage.Advise(g.lines16)
	return hugepage.Advise(g.raw)
}

// Stats returns the counters, those of Parts included. It must not run
// while a Part inserts.
func (g *Gutters) Stats() Stats {
	var st Stats
	var pairs uint64
	for _, p := range g.shares {
		pairs += p.pairs
		st.Batches += p.stats.Batches
		st.FlushedBatches += p.stats.FlushedBatches
		st.LocalBatches += p.stats.LocalBatches
		st.InterruptedBatches += p.stats.InterruptedBatches
	}
	st.Updates = pairs / 2
	return st
}

// own returns the caller's share: InsertBatch's, the flushes' and Settled.Drop's.
func (g *Gutters) own() *Part { return g.shares[0] }

// nonEmpty yields every vertex whose gutter may be non-empty, share by
// share: the walk Settle and buffered make (flush walks the shares' lists
// itself, since it empties them and may stop part way).
func (g *Gutters) nonEmpty() iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for _, p := range g.shares {
			for _, v := range p.nonEmpt {
				if !yield(v) {
					return
				}
			}
		}
	}
}

// Close closes the batch queue; buffered updates not flushed are dropped.
// It returns ErrClosed if called twice.
func (g *Gutters) Close() error {
	if g.closed {
		return ErrClosed
	}
	g.moveOn()
	g.closed = true
	close(g.queue)
	return nil
}
