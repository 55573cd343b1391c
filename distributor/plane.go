package distributor

import (
	"context"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/gutters"
	"sketchcc/store"
)

// pending is a batch taken from the gutters and not yet applied: its
// neighbours encoded once for the wire (batchEncoder), kept until its delta
// is merged so that it can be sent again, to any worker, without encoding
// it again. Its id is its store ticket.
type pending struct {
	id     store.Ticket
	vertex uint32
	raw    int    // neighbour ids the gutter held, repeats included
	ids    int    // ids in enc: those of odd count in the gutter
	enc    []byte // the batch's wire encoding, from a plane buffer
	// sent is when the frame carrying the batch on its current
	// connection was written (zero before); guarded by that
	// distributor's mu.
	sent time.Time
}

// retryQueueBatches bounds the queue of batches to send again. It holds
// what failed workers had in flight (at most Credits each); when it is
// full, the failing distributor applies the rest on the main node.
const retryQueueBatches = 1 << 14

// encodedQueue is the capacity of plane.encoded: a few batches encoded
// ahead of the writers' credits.
const encodedQueue = 8

// plane is the Pool's data plane apart from the connections: the encoder
// goroutines, which take batches from the gutters while a worker is
// connected and hand them encoded to whichever connection's writer has
// credit; the fallback goroutine, which sketches batches on the main node
// while none is; the queue of batches to send again; and the applications
// on the main node. Every batch is applied, or its delta merged, through
// the store, which refuses a second application (see package store).
//
// Its goroutines run from start until stop. Its methods are safe for
// concurrent use.
type plane struct {
	cfg       *Config
	gut       *gutters.Gutters
	st        *store.Store
	retry     chan *pending
	encoded   chan *pending // from the encoders to the writers
	buffers   sync.Pool     // *[]byte holding encoded batches
	up        upCount       // connections past their handshake
	abandoned signal        // fired by Pool.Abandon: from then on every batch is sketched here
	quit      signal        // fired by stop
	wg        sync.WaitGroup
	counts    struct {
		localCutoff, fallback atomic.Uint64 // batches applied on the main node, by reason
		refused               atomic.Uint64 // applications the store refused (a bug; logged)
	}
}

func (p *plane) init(cfg *Config, g *gutters.Gutters, st *store.Store) {
	p.cfg, p.gut, p.st = cfg, g, st
	p.retry = make(chan *pending, retryQueueBatches)
	p.encoded = make(chan *pending, encodedQueue)
	p.up.init()
	p.abandoned.init()
	p.quit.init()
	batch := g.Config().BatchUpdates
	p.buffers.New = func() any { s := make([]byte, 0, maxBatchBytes(batch)); return &s }
}

// start starts the fallback goroutine and the encoders; pprof labels
// split the main node's CPU by stage (main-node --json).
func (p *plane) start() {
	p.wg.Go(func() {
		pprof.Do(context.Background(), pprof.Labels("stage", "apply", "goroutine", "fallback"),
			func(context.Context) { p.runFallback() })
	})
	for i := range encoders() {
		p.wg.Go(func() {
			pprof.Do(context.Background(), pprof.Labels("stage", "ship", "goroutine", "encode-"+strconv.Itoa(i)),
				func(context.Context) { p.runEncoder() })
		})
	}
}

// stop ends the encoders and the fallback, waits for them, then sketches
// here whatever the retry and encoded queues still hold. Call it once no
// connection can take or hand back a batch any more.
func (p *plane) stop() {
	p.quit.fire()
	p.wg.Wait()
	for {
		select {
		case b := <-p.retry:
			p.applyLocal(b)
		case b := <-p.encoded:
			p.applyLocal(b)
		default:
			return
		}
	}
}

// encoders returns the number of encoder goroutines: two, and one more
// for every 8 cores past 16, so that encoding (about 2–4 ns of CPU per
// stream update in all on an AMD EPYC family 26 model 2;
// results/perf-notes.md) does not make one
// goroutine the main node's limit.
func encoders() int { return max(2, runtime.GOMAXPROCS(0)/8) }

// take encodes batch b with enc (the calling encoder's) into a pending
// batch, or sketches it on the main node when it is under the local
// cutoff (nil then). It releases b.
func (p *plane) take(b gutters.Batch, enc *batchEncoder) *pending {
	if b.Len() < p.cfg.LocalCutoff {
		p.applyBatch(b.Ticket, b.Vertex, b.IDs(&enc.wide))
		p.gut.Release(b)
		p.counts.localCutoff.Add(1)
		return nil
	}
	buf := p.buffers.Get().(*[]byte)
	pb := &pending{id: b.Ticket, vertex: b.Vertex, raw: b.Len()}
	pb.enc, pb.ids = enc.appendBatch((*buf)[:0], b)
	p.gut.Release(b)
	return pb
}

// done recycles the buffer of a batch that has been applied. b's fields
// are not written: the writer of a failed connection may still read them.
func (p *plane) done(b *pending) {
	s := b.enc[:0]
	p.buffers.Put(&s)
}

// applyBatch sketches batch t on the main node, through the store.
func (p *plane) applyBatch(t store.Ticket, v uint32, neighbors []uint32) {
	if err := p.st.Apply(t, v, neighbors); err != nil {
		p.refusedBy(err)
	}
}

// refusedBy logs an application the store refused: a bug of the Pool,
// which the store also reports to the next flush.
func (p *plane) refusedBy(err error) {
	p.counts.refused.Add(1)
	p.cfg.Logger.Error("the sketch store refused a batch", "err", err)
}

// applyLocal sketches a pending batch on the main node.
func (p *plane) applyLocal(b *pending) {
	ids, err := decodeBatch(make([]uint32, 0, b.ids), b.enc, b.ids, b.vertex, p.st.Params().Vertices())
	if err != nil {
		// The encoding is the plane's own: a bug, which the store then
		// reports as an outstanding batch.
		p.cfg.Logger.Error("cannot decode a batch the main node encoded", "vertex", b.vertex, "err", err)
		return
	}
	p.applyBatch(b.id, b.vertex, ids)
	p.counts.fallback.Add(1)
	p.done(b)
}

// requeue hands the batches of a failed connection to other workers or,
// when the retry queue is full, sketches them here. It never blocks.
func (p *plane) requeue(bs []*pending) {
	for _, b := range bs {
		select {
		case p.retry <- b:
		default:
			p.applyLocal(b)
		}
	}
}

// runFallback sketches batches on the main node while no worker is
// connected, or every batch once abandoned. It runs until stop.
func (p *plane) runFallback() {
	batches := p.gut.Batches()
	var wide []uint32 // a 16-bit batch's ids widened
	for {
		active, changed := p.up.get()
		if active > 0 && !p.abandoned.fired() {
			select {
			case <-changed:
				continue
			case <-p.abandoned.c:
			case <-p.quit.c:
				return
			}
		}
		select {
		case b := <-p.retry:
			p.applyLocal(b)
		case b := <-p.encoded: // encoded while a worker was connected
			p.applyLocal(b)
		case b, ok := <-batches:
			if !ok {
				batches = nil
				continue
			}
			p.applyBatch(b.Ticket, b.Vertex, b.IDs(&wide))
			p.gut.Release(b)
			p.counts.fallback.Add(1)
		case <-changed:
		case <-p.quit.c:
			return
		}
	}
}

// runEncoder takes batches from the gutters while a worker is connected
// and the plane is not abandoned, encodes them (or sketches those under
// the local cutoff, see take) and hands them to the writers through
// encoded. It runs until stop; a batch it holds then is sketched here.
func (p *plane) runEncoder() {
	batches := p.gut.Batches()
	enc := newBatchEncoder(p.st.Params().Vertices())
	active, changed := p.up.get() // read again only when it changes
	for {
		var fresh <-chan gutters.Batch
		if active > 0 && !p.abandoned.fired() {
			fresh = batches
		}
		var gb gutters.Batch
		select {
		case b, ok := <-fresh:
			if !ok {
				batches = nil
				continue
			}
			gb = b
		case <-changed:
			active, changed = p.up.get()
			continue
		case <-p.quit.c:
			return
		}
		b := p.take(gb, enc)
		if b == nil {
			continue // sketched here: under the local cutoff
		}
		select {
		case p.encoded <- b:
		case <-p.quit.c:
			p.applyLocal(b)
			return
		}
	}
}

// upCount counts the connections past their handshake and wakes whoever
// waits on a change. Safe for concurrent use.
type upCount struct {
	mu      sync.Mutex
	n       int
	changed chan struct{} // closed and replaced when n changes
}

func (u *upCount) init() { u.changed = make(chan struct{}) }

// add changes the count by delta and wakes the waiters.
func (u *upCount) add(delta int) {
	u.mu.Lock()
	u.n += delta
	close(u.changed)
	u.changed = make(chan struct{})
	u.mu.Unlock()
}

// get returns the count and a channel closed at its next change.
func (u *upCount) get() (int, <-chan struct{}) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.n, u.changed
}

// signal is a channel closed once, by the first fire. Safe for
// concurrent use once init has run.
type signal struct {
	c  chan struct{}
	on atomic.Bool
}

func (s *signal) init() { s.c = make(chan struct{}) }

// fire closes the channel; it reports whether this call did.
func (s *signal) fire() bool {
	if s.on.Swap(true) {
		return false
	}
	close(s.c)
	return true
}

// fired reports whether fire has been called.
func (s *signal) fired() bool { return s.on.Load() }
