package distributor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/gutters"
	"sketchcc/sketch"
	"sketchcc/store"
)

// Config configures a Pool. A zero field takes its default.
type Config struct {
	// Name is the main node's name in the handshake.
	Name string
	// Key is the cluster key that the handshake authenticates with; nil
	// means none. 16, 24 or 32 bytes.
	Key []byte
	// Credits is the number of batches in flight to one worker: sent and
	// not yet answered by a delta. It bounds the main node's memory per
	// worker (Credits · batch bytes) and, with the gutters' queue, makes
	// back-pressure reach the stream reader. At most MaxCredits; zero means
	// DefaultCredits.
	Credits int
	// FrameBytes is the batch payload at which a frame is sent at once, in
	// bytes. Zero means 512 KiB.
	FrameBytes int
	// FlushDelay is the longest a batch waits for others to share its
	// frame. Zero means DefaultFlushDelay.
	FlushDelay time.Duration
	// LocalCutoff is the batch size, in updates (neighbour ids), under
	// which a batch is sketched on the main node rather than shipped:
	// shipping it costs more than computing it. Zero means
	// DefaultLocalCutoff; negative means ship every batch.
	LocalCutoff int
	// MaxFrameBytes bounds the payload of a frame read from a worker, in
	// bytes. Zero means DefaultMaxFrameBytes.
	MaxFrameBytes int
	// DialTimeout bounds connecting to a worker and the handshake. Zero
	// means 10 s.
	DialTimeout time.Duration
	// AnswerTimeout is how long a worker that holds batches may stay
	// silent, and a frame may take to write, before its connection is
	// dropped and its batches are sent elsewhere. Zero means 30 s.
	AnswerTimeout time.Duration
	// Logger receives worker events; nil discards them.
	Logger *slog.Logger
}

// DefaultLocalCutoff is the default LocalCutoff, in updates. On the main
// node a batch costs about 39 ns per update to sketch, and about 1 µs to
// ship and merge back whatever its size (BenchmarkLocalCutoff at the
// kron13 geometry, loopback, 2 cores: op=local 2,489 ns at 64 updates,
// op=ship/wire=loopback 990 ns), plus reading the delta from the socket:
// the two cross between 26 and 40 updates. Landscape's cut-off was 400
// (work_distributor.h), with MPI's higher per-message cost.
const DefaultLocalCutoff = 32

// DefaultCredits and MaxCredits bound Config.Credits.
const (
	DefaultCredits = 64
	MaxCredits     = 1 << 16
)

func (c *Config) ensureDefaults() {
	if c.Credits == 0 {
		c.Credits = DefaultCredits
	}
	if c.FrameBytes == 0 {
		c.FrameBytes = 512 << 10
	}
	if c.FlushDelay == 0 {
		c.FlushDelay = DefaultFlushDelay
	}
	if c.LocalCutoff == 0 {
		c.LocalCutoff = DefaultLocalCutoff
	}
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = 10 * time.Second
	}
	if c.AnswerTimeout == 0 {
		c.AnswerTimeout = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Credits < 0 || c.Credits > MaxCredits {
		errs = append(errs, fmt.Errorf("distributor: %d credits, need [1, %d]", c.Credits, MaxCredits))
	}
	if c.FrameBytes < 0 {
		errs = append(errs, fmt.Errorf("distributor: FrameBytes %d, need > 0", c.FrameBytes))
	}
	if c.MaxFrameBytes < 0 || int64(c.MaxFrameBytes) > 1<<31 {
		errs = append(errs, fmt.Errorf("distributor: MaxFrameBytes %d, need [1, 2^31]", c.MaxFrameBytes))
	}
	if c.FlushDelay < 0 || c.DialTimeout < 0 || c.AnswerTimeout < 0 {
		errs = append(errs, errors.New("distributor: negative FlushDelay, DialTimeout or AnswerTimeout"))
	}
	if err := checkKey(c.Key); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// pending is a batch taken from the gutters and not yet applied: its own
// copy of the neighbours, kept until its delta is merged so that it can be
// sent again. Its id is its store ticket.
type pending struct {
	id        store.Ticket
	vertex    uint32
	neighbors []uint32
}

// retryQueueBatches bounds the queue of batches to send again. It holds
// what failed workers had in flight (at most Credits each); when it is
// full, the failing distributor applies the rest on the main node.
const retryQueueBatches = 1 << 14

// Pool is the main node's set of work distributors: one per connected
// worker, each with one TCP connection, one writer and one reader
// goroutine. Distributors and the local delta workers all take batches from
// the gutters' Batches, so work balances itself; when no worker is connected
// the Pool sketches batches on the main node, so the stream always makes
// progress.
//
// Every batch is applied, or its delta merged, through the store, which
// refuses a second application (see package store).
//
// Add, Remove, Workers, WaitWorkers, Late, Stats and Close are safe for
// concurrent use.
type Pool struct {
	cfg    Config
	gut    *gutters.Gutters
	st     *store.Store
	params sketch.Params
	per    int // buckets per delta
	wg     sync.WaitGroup
	quit   chan struct{} // closed by Close
	closed atomic.Bool

	retry   chan *pending
	buffers sync.Pool // *[]uint32 of BatchUpdates ids

	// mu guards the fields below. Lock order: Pool.mu before
	// distributor.mu (doc.go).
	mu struct {
		sync.Mutex
		dists   map[string]*distributor // by worker name: connecting or connected
		active  int                     // distributors past the handshake
		changed chan struct{}           // closed and replaced when active changes
		stats   map[string]*workerStats
		order   []string // worker names in order of first connection
	}

	localCutoff, fallback atomic.Uint64 // batches applied on the main node, by reason
	resent, duplicates    atomic.Uint64
	refused               atomic.Uint64 // applications the store refused (a bug; logged)
}

// NewPool returns a Pool that takes batches from g, whose tickets st
// issued (gutters.Config.Queue), and applies them through st; it starts
// its fallback goroutine, which sketches batches on the main node while
// no worker is connected. It returns the errors of cfg.Validate.
func NewPool(g *gutters.Gutters, st *store.Store, cfg Config) (*Pool, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Pool{cfg: cfg, gut: g, st: st, params: st.Params(), quit: make(chan struct{}),
		retry: make(chan *pending, retryQueueBatches)}
	p.per = p.params.BucketsPerVertex()
	batch := g.Config().BatchUpdates
	p.buffers.New = func() any { s := make([]uint32, 0, batch); return &s }
	p.mu.dists = map[string]*distributor{}
	p.mu.changed = make(chan struct{})
	p.mu.stats = map[string]*workerStats{}
	if need := deltaBytes(p.per); need > cfg.MaxFrameBytes {
		return nil, fmt.Errorf("distributor: a delta of %d bytes exceeds MaxFrameBytes=%d; raise it", need, cfg.MaxFrameBytes)
	}
	p.wg.Go(func() {
		pprof.Do(context.Background(), pprof.Labels("stage", "apply", "goroutine", "fallback"),
			func(context.Context) { p.runFallback() })
	})
	return p, nil
}

// deltaBytes is the encoded size of one delta (sketch.AppendDelta).
func deltaBytes(per int) int { return 8 + per*sketch.BucketBytes }

// Add connects to the worker called name at data-plane address addr, in
// the background. A worker already added under that name is left alone.
// Connection failures are logged; the Pool does not retry them (the
// worker's next membership event does).
func (p *Pool) Add(name, addr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Load() {
		return
	}
	if _, ok := p.mu.dists[name]; ok {
		return
	}
	st := p.statsLocked(name, addr)
	d := newDistributor(p, name, addr, st)
	p.mu.dists[name] = d
	p.wg.Go(func() {
		d.run()
		p.mu.Lock()
		if p.mu.dists[name] == d {
			delete(p.mu.dists, name)
		}
		p.mu.Unlock()
	})
}

// Remove drops the connection to the worker called name, if any: its
// unanswered batches go to other workers or are sketched on the main node.
func (p *Pool) Remove(name string, reason string) {
	p.mu.Lock()
	d := p.mu.dists[name]
	p.mu.Unlock()
	if d != nil {
		d.fail(errors.New(reason))
	}
}

// Workers returns the number of workers past the handshake.
func (p *Pool) Workers() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.mu.active
}

// WaitWorkers blocks until n workers are connected or ctx is done, and
// returns an error wrapping ctx's cause then.
func (p *Pool) WaitWorkers(ctx context.Context, n int) error {
	for {
		p.mu.Lock()
		have, ch := p.mu.active, p.mu.changed
		p.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ch:
		case <-p.quit:
			return ErrClosed
		case <-ctx.Done():
			return fmt.Errorf("distributor: %d of %d workers connected: %w", have, n, context.Cause(ctx))
		}
	}
}

// Late names, one string each, the workers that hold batches sent and not
// yet answered, with how many, and the batches waiting to be sent again:
// whom a flush that ran out of time waits for. It is empty when the Pool
// holds no batch.
func (p *Pool) Late() []string {
	var late []string
	p.mu.Lock()
	for _, d := range p.mu.dists {
		if n := d.held(); n > 0 {
			late = append(late, fmt.Sprintf("%s (%s) holds %d batches", d.name, d.addr, n))
		}
	}
	p.mu.Unlock()
	slices.Sort(late)
	if n := len(p.retry); n > 0 {
		late = append(late, fmt.Sprintf("%d batches wait to be sent again", n))
	}
	return late
}

// Close tells every worker to stop, closes the connections and waits for
// all goroutines started by the Pool; batches still unanswered are
// sketched on the main node first, so that none is lost. It is
// idempotent.
func (p *Pool) Close() error {
	p.mu.Lock()
	if p.closed.Swap(true) {
		p.mu.Unlock()
		return nil
	}
	dists := make([]*distributor, 0, len(p.mu.dists))
	for _, d := range p.mu.dists {
		dists = append(dists, d)
	}
	p.mu.Unlock()
	for _, d := range dists {
		d.stop()
	}
	close(p.quit)
	p.wg.Wait()
	// Nobody takes from retry any more.
	for {
		select {
		case b := <-p.retry:
			p.applyLocal(b)
		default:
			return nil
		}
	}
}

// take copies batch b into a pending batch with a new id, or sketches it
// on the main node when it is under the local cutoff (nil then). It
// releases b.
func (p *Pool) take(b gutters.Batch) *pending {
	if len(b.Neighbors) < p.cfg.LocalCutoff {
		p.applyBatch(b.Ticket, b.Vertex, b.Neighbors)
		p.gut.Release(b)
		p.localCutoff.Add(1)
		return nil
	}
	buf := p.buffers.Get().(*[]uint32)
	pb := &pending{id: b.Ticket, vertex: b.Vertex, neighbors: append((*buf)[:0], b.Neighbors...)}
	p.gut.Release(b)
	return pb
}

// done recycles the buffer of a batch that has been applied. b's fields
// are not written: the writer of a failed connection may still read them.
func (p *Pool) done(b *pending) {
	s := b.neighbors[:0]
	p.buffers.Put(&s)
}

// applyBatch sketches batch t on the main node, through the store.
func (p *Pool) applyBatch(t store.Ticket, v uint32, neighbors []uint32) {
	if err := p.st.Apply(t, v, neighbors); err != nil {
		p.refusedBy(err)
	}
}

// refusedBy logs an application the store refused: a bug of the Pool,
// which the store also reports to the next flush.
func (p *Pool) refusedBy(err error) {
	p.refused.Add(1)
	p.cfg.Logger.Error("the sketch store refused a batch", "err", err)
}

// applyLocal sketches a pending batch on the main node.
func (p *Pool) applyLocal(b *pending) {
	p.applyBatch(b.id, b.vertex, b.neighbors)
	p.fallback.Add(1)
	p.done(b)
}

// requeue hands the batches of a failed connection to other workers or,
// when the retry queue is full, sketches them here. It never blocks.
func (p *Pool) requeue(bs []*pending) {
	for _, b := range bs {
		p.resent.Add(1)
		select {
		case p.retry <- b:
		default:
			p.applyLocal(b)
		}
	}
}

// runFallback sketches batches on the main node while no worker is
// connected. It runs in its own goroutine until Close.
func (p *Pool) runFallback() {
	batches := p.gut.Batches()
	for {
		p.mu.Lock()
		active, changed := p.mu.active, p.mu.changed
		p.mu.Unlock()
		if active > 0 {
			select {
			case <-changed:
				continue
			case <-p.quit:
				return
			}
		}
		select {
		case b := <-p.retry:
			p.applyLocal(b)
		case b, ok := <-batches:
			if !ok {
				batches = nil
				continue
			}
			p.applyBatch(b.Ticket, b.Vertex, b.Neighbors)
			p.gut.Release(b)
			p.fallback.Add(1)
		case <-changed:
		case <-p.quit:
			return
		}
	}
}

// setActive counts a distributor in or out of the active set and wakes
// whoever waits on a change.
func (p *Pool) setActive(delta int) {
	p.mu.Lock()
	p.mu.active += delta
	close(p.mu.changed)
	p.mu.changed = make(chan struct{})
	p.mu.Unlock()
}

// dial connects to a worker's data-plane address.
func (p *Pool) dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", addr)
}

// Follow keeps the Pool in step with the cluster: it connects to every
// worker that joins (or is already a member) and drops the connection of
// every worker that leaves or is declared dead. It returns at once; the
// goroutine it starts reads events until Close. Call it once.
func (p *Pool) Follow(m *Membership) {
	for _, ev := range m.Members() {
		p.apply(ev)
	}
	p.wg.Go(func() {
		for {
			select {
			case <-p.quit:
				return
			case ev := <-m.Events():
				p.apply(ev)
			}
		}
	})
}

// apply acts on one membership event.
func (p *Pool) apply(ev MemberEvent) {
	log := p.cfg.Logger.With("worker", ev.Name)
	if ev.MetaErr != nil {
		log.Warn("ignoring a member with unreadable metadata", "err", ev.MetaErr)
		return
	}
	if ev.Meta.Role != RoleWorker {
		return
	}
	switch ev.Kind {
	case Joined, Updated:
		log.Info("worker joined", "addr", ev.Meta.Addr, "gossip", ev.Gossip)
		p.Add(ev.Name, ev.Meta.Addr)
	case Left:
		log.Info("worker left the cluster")
		p.Remove(ev.Name, "the worker left the cluster")
	}
}
