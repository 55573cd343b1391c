// Package gutters buffers edge updates per vertex until there are enough to
// be worth sketching together.
//
// A gutter holds neighbour ids for one vertex. Every edge update {u,v} goes
// into both endpoints' gutters: v into u's and u into v's. When a gutter
// holds BatchUpdates ids it becomes a Batch on a bounded queue and the
// vertex gets an empty buffer from a pool of spares; when no spare is free,
// Insert blocks until a consumer releases a batch (that is the
// back-pressure that reaches the stream reader). Flush emits every
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
// Insert, Flush and Close are not safe for concurrent use: one stream
// reader feeds them. Several goroutines may insert at once through Parts,
// each owning a disjoint share of the vertices. Release may be called from
// any goroutine.
package gutters

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"sketchcc/internal/hugepage"
	"sketchcc/stream"
)

// Defaults and bounds of Config's fields.
const (
	DefaultBatchUpdates = 1024
	MaxBatchUpdates     = 1 << 24
	DefaultQueueBatches = 16
	MaxQueueBatches     = 1 << 20
)

// The number of neighbour ids in a vertex's tail line, one 64-byte cache
// line: 32 ids of 16 bits when Vertices ≤ narrowMaxVertices, else 16 of 32
// bits. A narrow line spills twice as many ids per trip to the slab, whose
// random pages are what a spill waits on. Against 16-bit tail lines
// widened into a 32-bit slab, the 16-bit slab took kron15's insert stage
// (cluster, 8 readers) from 16.6-20.5 to 13.9-15.1 ns per update on an
// AMD EPYC family 26 model 2 (results/perf-notes.md).
const (
	narrowTailIDs     = 32
	wideTailIDs       = 16
	narrowMaxVertices = 1 << 16
)

// spillQueue is the number of full tail lines an inserting goroutine
// holds on their way to the slab (see spills).
const spillQueue = 64

// Config configures Gutters. A zero field takes its default.
type Config struct {
	// Vertices is the number of vertices, in [2, 2^31); ids are in
	// [0, Vertices).
	Vertices uint32
	// BatchUpdates is the number of neighbour ids a gutter holds before it
	// becomes a batch, at most MaxBatchUpdates. Zero means
	// DefaultBatchUpdates. The ingestion pipeline sizes it from the
	// sketch: batch factor · sketch bytes per vertex / 4 (DESIGN.md §3).
	BatchUpdates int
	// QueueBatches is the number of spare buffers: full batches queued or
	// being sketched before Insert blocks, at most MaxQueueBatches. Zero
	// means DefaultQueueBatches.
	QueueBatches int
	// Queue, when set, is called with a batch's vertex as the batch is
	// queued, on the goroutine inserting or flushing; its result travels
	// in Batch.Ticket (the sketch store's ledger, store.Store.Queue).
	Queue func(vertex uint32) uint64

	// wideTails keeps 32-bit tail lines at any vertex count, so that
	// tests cover them on small graphs.
	wideTails bool
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Vertices < 2 {
		errs = append(errs, fmt.Errorf("gutters: Vertices = %d, need at least 2", c.Vertices))
	}
	if c.BatchUpdates < 0 || c.BatchUpdates > MaxBatchUpdates {
		errs = append(errs, fmt.Errorf("gutters: BatchUpdates = %d, need [1, 2^24]", c.BatchUpdates))
	}
	if c.QueueBatches < 0 || c.QueueBatches > MaxQueueBatches {
		errs = append(errs, fmt.Errorf("gutters: QueueBatches = %d, need [1, 2^20]", c.QueueBatches))
	}
	if c.Vertices >= 1<<31 {
		errs = append(errs, fmt.Errorf("gutters: Vertices = %d, need < 2^31", c.Vertices))
	} else if q := c.withDefaults().QueueBatches; q > 0 && uint64(c.Vertices)+uint64(q) > math.MaxInt32 {
		// Buffers are numbered by int32: one per vertex, then the spares.
		errs = append(errs, fmt.Errorf("gutters: Vertices + QueueBatches = %d, need < 2^31",
			uint64(c.Vertices)+uint64(q)))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	c.ensureDefaults()
	return c
}

func (c *Config) ensureDefaults() {
	if c.BatchUpdates == 0 {
		c.BatchUpdates = DefaultBatchUpdates
	}
	if c.QueueBatches == 0 {
		c.QueueBatches = DefaultQueueBatches
	}
}

// Bytes returns the memory of the gutters for c, with defaults filled in:
// the slab's (Vertices + QueueBatches) buffers of BatchUpdates ids, each
// rounded up to a whole 64-byte line, and the Vertices tail lines of 64
// bytes. An id takes 2 bytes when Vertices ≤ 2^16, else 4.
func (c Config) Bytes() int64 {
	c.ensureDefaults()
	return c.slabBytes() + int64(c.Vertices)*64
}

// slabBytes is the size of the slab.
func (c Config) slabBytes() int64 { return int64(c.slabIDs()) * int64(64/c.tailIDs()) }

// narrow reports whether the tail lines hold 16-bit ids.
func (c Config) narrow() bool { return c.Vertices <= narrowMaxVertices && !c.wideTails }

// tailIDs is the number of ids in a tail line.
func (c Config) tailIDs() int {
	if c.narrow() {
		return narrowTailIDs
	}
	return wideTailIDs
}

// slabIDs is the length of the slab: a buffer per vertex and per spare.
func (c Config) slabIDs() int {
	return (int(c.Vertices) + c.QueueBatches) * c.stride()
}

// stride is the distance in ids between buffers of the slab: BatchUpdates
// rounded up to whole tail lines, so that a full tail line goes to one
// 64-byte line of the buffer.
func (c Config) stride() int {
	k := c.tailIDs()
	return (c.BatchUpdates + k - 1) &^ (k - 1)
}

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
	cfg    Config
	stride int // cfg.stride()
	// raw is the slab, 64-byte aligned, in 4-byte words: the spill queue
	// copies lines to it and prefetches them in it. It holds (Vertices +
	// QueueBatches) buffers of stride ids: 32-bit ids in raw itself, or,
	// when cfg.narrow(), 16-bit ids in slab16, a view of raw (else nil).
	raw    []uint32
	slab16 []uint16
	// By vertex, its tail line of tailIDs ids, 64-byte aligned: lines16
	// when cfg.narrow(), else lines; the other is nil.
	lines   []uint32
	lines16 []uint16
	// wide holds a narrow gutter's ids widened for FlushLocal's apply.
	wide    []uint32
	tails   []tail   // by vertex: its buffer and how full it is
	listed  []bool   // by vertex: is it in nonEmpty
	nonEmpt []uint32 // vertices whose gutter may be non-empty
	free    chan int32
	queue   chan Batch
	// interrupt and onInterrupt are InterruptOn's: an emit waiting for a
	// spare stops waiting when interrupt is closed. Set only while no
	// insert runs.
	interrupt   <-chan struct{}
	onInterrupt func(vertex uint32, neighbors []uint32)
	stats       Stats
	closed      bool
	sq          spills  // InsertBatch's full tail lines not yet in the slab
	stage       *stage  // updates not yet in the gutters; nil below stageMinVertices
	parts       []*Part // made by Parts; each lists its own non-empty gutters
}

// New returns empty gutters. It returns the errors of cfg.Validate.
func New(cfg Config) (*Gutters, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := int(cfg.Vertices)
	g := &Gutters{
		cfg:    cfg,
		stride: cfg.stride(),
		raw:    alignedIDs(int(cfg.slabBytes() / 4)),
		tails:  make([]tail, n),
		listed: make([]bool, n),
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

// insert puts the update {e.Src, e.Dst} into both endpoints' gutters, one
// update at a time and without staging: the reference InsertBatch is
// tested against.
func (g *Gutters) insert(e stream.Edge) {
	g.add(e.Src, e.Dst)
	g.add(e.Dst, e.Src)
	g.stats.Updates++
}

// InsertBatch puts every update {u.Src, u.Dst} of us into both endpoints'
// gutters. Ids must be < Vertices and distinct (the stream readers check).
// It blocks while QueueBatches batches are queued or unreleased (see
// InterruptOn), and allocates nothing. With many
// vertices (see stageMinVertices) it first collects updates in a staging
// buffer and inserts them in runs grouped by vertex range, so that the
// appends of one run share cache lines; the staged updates reach the
// gutters before any Flush or FlushLocal.
func (g *Gutters) InsertBatch(us []stream.Update) {
	g.stats.Updates += uint64(len(us))
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
		appendEdge(g, lines, v, u, &g.nonEmpt, &g.stats, &g.sq)
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
	g.insertPairs(g.stage.take(), &g.nonEmpt, &g.stats, &g.sq)
}

// insertPairs appends id p[1] to vertex p[0]'s gutter for each pair p,
// listing new non-empty gutters in nonEmpt, counting batches in st and
// queueing spills on sq: those of the goroutine that inserts.
func (g *Gutters) insertPairs(pairs [][2]uint32, nonEmpt *[]uint32, st *Stats, sq *spills) {
	if g.lines16 != nil {
		insertPairsIn(g, g.lines16, pairs, nonEmpt, st, sq)
	} else {
		insertPairsIn(g, g.lines, pairs, nonEmpt, st, sq)
	}
}

// insertPairsIn is insertPairs for tail lines of T. appendRun appends up
// to the first pair that needs appendEdge, and the pair goes to appendEdge
// here, between runs.
func insertPairsIn[T lineID](g *Gutters, lines []T, pairs [][2]uint32, nonEmpt *[]uint32, st *Stats, sq *spills) {
	for {
		i := appendRun(lines, g.tails, g.cfg.BatchUpdates, pairs)
		if i == len(pairs) {
			return
		}
		appendEdge(g, lines, pairs[i][0], pairs[i][1], nonEmpt, st, sq)
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
	g.insertPairs([][2]uint32{{v, u}}, &g.nonEmpt, &g.stats, &g.sq)
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

// appendEdge appends u to v's gutter where appendID would not: it lists
// the gutter in nonEmpt after its first append, queues a full tail line on
// sq for its buffer, and emits a full gutter, counting the batch in st.
//
//go:noinline
func appendEdge[T lineID](g *Gutters, lines []T, v, u uint32, nonEmpt *[]uint32, st *Stats, sq *spills) {
	k := lineIDs[T]()
	t := &g.tails[v]
	n := t.fill
	line := lines[int(v)*int(k) : int(v+1)*int(k)]
	line[n%k] = T(u)
	t.fill = n + 1
	if n == 0 && !g.listed[v] {
		g.listed[v] = true
		*nonEmpt = append(*nonEmpt, v)
	}
	if n%k == k-1 {
		at := int(t.slot)*g.stride + int(n) - int(k-1) // in ids
		spill(sq, g, at*int(64/k)/4, line, u)          // in words of raw
	}
	if int(n)+1 == g.cfg.BatchUpdates {
		sq.drain(g)
		g.emit(v, st)
	}
}

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
// batch in st (the inserting goroutine's own counters). When no spare is
// free it waits for one, or, once InterruptOn's channel is closed, passes
// the gutter to its apply and empties it. The select waits only when the
// queue is full, so a free spare costs the receive it always did.
func (g *Gutters) emit(v uint32, st *Stats) {
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
		g.onInterrupt(v, g.Held(v, &wide))
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

// Flush emits every non-empty gutter as a batch. It blocks as Insert does,
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
// It is the one walk over the non-empty gutters. It returns false when
// stop ended it early.
func (g *Gutters) flush(local func(vertex uint32, neighbors []uint32), stop func() bool) bool {
	g.insertStaged()
	g.drainSpills()
	var all bool
	if g.nonEmpt, all = g.flushList(g.nonEmpt, local, stop); !all {
		return false
	}
	for _, p := range g.parts {
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
			g.emit(v, &g.stats)
			g.stats.FlushedBatches++
			continue
		}
		select {
		case spare := <-g.free:
			g.handOver(v, spare, &g.stats)
			g.stats.FlushedBatches++
		default:
			g.settle(v)
			local(v, g.Held(v, &g.wide))
			g.tails[v].fill = 0
			g.stats.LocalBatches++
		}
	}
	return list[:0], true
}

// Buffered returns the number of neighbour ids held in gutters and in the
// staging buffer (twice the updates not yet emitted). It changes nothing.
func (g *Gutters) Buffered() uint64 {
	var n uint64
	for _, v := range g.nonEmpt {
		n += uint64(g.tails[v].fill)
	}
	for _, p := range g.parts {
		for _, v := range p.nonEmpt {
			n += uint64(g.tails[v].fill)
		}
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
	for _, v := range g.nonEmpt {
		g.settle(v)
	}
	for _, p := range g.parts {
		for _, v := range p.nonEmpt {
			g.settle(v)
		}
	}
}

// drainSpills copies every queued tail line, the Parts' too, to the slab.
func (g *Gutters) drainSpills() {
	g.sq.drain(g)
	for _, p := range g.parts {
		p.sq.drain(g)
	}
}

// Held returns the neighbour ids buffered in v's gutter: inserted and not
// yet emitted. It is whole only after Settle, with no insert since. The
// slice aliases the gutter, or for narrow gutters (Vertices ≤ 2^16) *buf,
// which Held grows as needed and fills with the ids widened; it is valid
// until the next InsertBatch, Flush or Close (and, narrow, the next use of
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
		g.stats.LocalBatches++
	}
}

// Release returns a batch's buffer to the spares. It must be called once per
// batch received; b must not be used after it. Safe for concurrent use.
func (g *Gutters) Release(b Batch) {
	g.free <- b.slot
}

// AdviseHugePages asks the kernel to back the gutter slab with transparent
// huge pages and reports whether it accepted (see internal/hugepage); the
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
	st := g.stats
	var pairs uint64
	for _, p := range g.parts {
		pairs += p.pairs
		st.Batches += p.stats.Batches
		st.InterruptedBatches += p.stats.InterruptedBatches
	}
	st.Updates += pairs / 2
	return st
}

// Close closes the batch queue; buffered updates not flushed are dropped.
// It returns ErrClosed if called twice.
func (g *Gutters) Close() error {
	if g.closed {
		return ErrClosed
	}
	g.closed = true
	close(g.queue)
	return nil
}
