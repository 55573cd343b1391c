package distributor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
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
	// DialTimeout bounds connecting to a worker. Zero means 10 s.
	DialTimeout time.Duration
	// HandshakeTimeout bounds the handshake that follows. Zero means
	// 10 s.
	HandshakeTimeout time.Duration
	// AnswerTimeout is each batch's deadline: a batch that a worker has
	// not answered AnswerTimeout after it was sent is sketched on the
	// main node (a late answer is then dropped), whatever else the
	// connection carries meanwhile. A worker that holds batches and sends
	// no byte for AnswerTimeout loses its connection, as does one that
	// takes no byte of a frame for that long; a slow worker that keeps
	// sending is not cut. Zero means 30 s.
	AnswerTimeout time.Duration
	// RedialBackoff is the longest wait between attempts to re-dial a
	// worker that is still a member of the cluster after its connection
	// dropped or could not be made: the first attempt comes after
	// 100 ms, each next one waits twice as long, up to RedialBackoff.
	// Zero means 5 s.
	RedialBackoff time.Duration
	// Logger receives worker events; nil discards them.
	Logger *slog.Logger
	// SameHost, when set, is called with the delta threads of the
	// connected workers that run on this machine (see sameHost) each time
	// their sum changes, serialized, from the goroutine of the connection
	// that changed it. A main node can then leave those workers their
	// cores (main-node --cores).
	SameHost func(threads int)
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
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = 10 * time.Second
	}
	if c.RedialBackoff == 0 {
		c.RedialBackoff = 5 * time.Second
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
	if c.FlushDelay < 0 || c.DialTimeout < 0 || c.AnswerTimeout < 0 || c.HandshakeTimeout < 0 || c.RedialBackoff < 0 {
		errs = append(errs, errors.New("distributor: negative FlushDelay, DialTimeout, HandshakeTimeout, AnswerTimeout or RedialBackoff"))
	}
	if err := checkKey(c.Key); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// pending is a batch taken from the gutters and not yet applied: its
// neighbours encoded once for the wire (batchEncoder), kept until its delta
// is merged so that it can be sent again, to any worker, without encoding
// it again. Its id is its store ticket.
type pending struct {
	id     store.Ticket
	vertex uint32
	raw    int    // neighbour ids the gutter held, repeats included
	ids    int    // ids in enc: those of odd count in the gutter
	enc    []byte // the batch's wire encoding, from a Pool buffer
	// sent is when the frame carrying the batch on its current
	// connection was written (zero before); guarded by that
	// distributor's mu.
	sent time.Time
}

// retryQueueBatches bounds the queue of batches to send again. It holds
// what failed workers had in flight (at most Credits each); when it is
// full, the failing distributor applies the rest on the main node.
const retryQueueBatches = 1 << 14

// Pool is the main node's set of work distributors: one per connected
// worker, each with one TCP connection, one writer and one reader
// goroutine. While a worker is connected, the Pool's encoder goroutines
// take batches from the gutters' Batches, as the local delta workers do, so
// work balances itself, and hand them encoded to whichever writer has
// credit; when no worker is connected the Pool sketches batches on the
// main node, so the stream always makes progress.
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
	wg     sync.WaitGroup
	quit   chan struct{} // closed by Close
	closed atomic.Bool

	retry chan *pending
	// encoded carries batches from the encoders to the writers.
	encoded chan *pending
	// abandoned is closed by Abandon: from then on every batch is
	// sketched here.
	abandoned   chan struct{}
	abandonOnce sync.Once
	buffers     sync.Pool // *[]byte holding encoded batches

	// mu guards the fields below. Lock order: Pool.mu before
	// distributor.mu (doc.go).
	mu struct {
		sync.Mutex
		dists   map[string]*distributor   // by worker name: connecting or connected
		active  int                       // distributors past the handshake
		changed chan struct{}             // closed and replaced when active changes
		stats   map[string][]*workerStats // per connection, oldest first
		order   []string                  // worker names in order of first connection
		// members are the workers to keep a connection to: added by Add
		// or a join, removed by Remove or a departure. A connection that
		// drops is re-dialled while its worker is here.
		members map[string]*member
		// leaving holds the incarnation of each worker whose connection
		// ended with its goodbye (Worker.Close): the cluster's later news
		// of its departure is a leave, whatever the gossip says.
		leaving map[string]uint64
		// sameHost is the delta threads of connected workers on this
		// machine (Config.SameHost).
		sameHost int
	}

	localCutoff, fallback atomic.Uint64 // batches applied on the main node, by reason
	left, failed          atomic.Uint64 // workers that left, and that the cluster declared dead
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
		retry: make(chan *pending, retryQueueBatches), encoded: make(chan *pending, encodedQueue),
		abandoned: make(chan struct{})}
	batch := g.Config().BatchUpdates
	p.buffers.New = func() any { s := make([]byte, 0, maxBatchBytes(batch)); return &s }
	p.mu.dists = map[string]*distributor{}
	p.mu.changed = make(chan struct{})
	p.mu.stats = map[string][]*workerStats{}
	p.mu.leaving = map[string]uint64{}
	p.mu.members = map[string]*member{}
	if need := newDeltaCodec(p.params).maxBytes(); need > cfg.MaxFrameBytes {
		return nil, fmt.Errorf("distributor: a delta of %d bytes exceeds MaxFrameBytes=%d; raise it", need, cfg.MaxFrameBytes)
	}
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
	return p, nil
}

// encoders returns the number of encoder goroutines: two, and one more
// for every 8 cores past 16, so that encoding (about 2–4 ns of CPU per
// stream update in all on an AMD EPYC family 26 model 2;
// results/perf-notes.md) does not make one
// goroutine the main node's limit.
func encoders() int { return max(2, runtime.GOMAXPROCS(0)/8) }

// encodedQueue is the capacity of Pool.encoded: a few batches encoded
// ahead of the writers' credits.
const encodedQueue = 8

// Add connects to the worker called name at data-plane address addr, in
// the background. A worker already added under that name is left alone.
// Connection failures are logged; the Pool does not retry them (the
// worker's next membership event does).
func (p *Pool) Add(name, addr string) { p.add(name, addr, 0) }

// member is a worker the Pool keeps connected to.
type member struct {
	addr    string
	inc     uint64
	backoff time.Duration // the next wait before a re-dial
}

// firstRedial is the wait before the first re-dial of a worker.
const firstRedial = 100 * time.Millisecond

// add is Add for incarnation inc of the worker called name
// (NodeMeta.Incarnation; 0 when unknown). A distributor of an older
// incarnation under that name is dropped first: its process has been
// replaced, and anything it held goes elsewhere. A newer one is left
// alone, and add returns false then.
func (p *Pool) add(name, addr string, inc uint64) bool {
	p.mu.Lock()
	if p.closed.Load() || p.isAbandoned() {
		p.mu.Unlock()
		return false
	}
	old := p.mu.dists[name]
	if m := p.mu.members[name]; m != nil && inc < m.inc || old != nil && inc <= old.inc {
		p.mu.Unlock()
		return old != nil && inc == old.inc
	}
	if m := p.mu.members[name]; m == nil || m.inc != inc || m.addr != addr {
		p.mu.members[name] = &member{addr: addr, inc: inc, backoff: firstRedial}
	}
	d := p.launchLocked(name, addr, inc)
	p.mu.Unlock()
	if old != nil {
		if old.st.connected.Load() {
			// A restarted process's connection has usually ended by
			// now: this one is alive, and is told why it must go.
			p.dismiss([]*distributor{old}, "another worker process took this worker's name (two workers started with one --name?)",
				fmt.Errorf("%w: incarnation %d replaced %d while %d was still connected (two workers started with one --name?)",
					errReplaced, inc, old.inc, old.inc))
		} else {
			old.fail(fmt.Errorf("%w: incarnation %d replaced %d (a restart)", errReplaced, inc, old.inc))
		}
	}
	return d != nil
}

// launchLocked starts a distributor for the worker, and a goroutine that
// runs it and re-dials while the worker stays a member. p.mu is held.
func (p *Pool) launchLocked(name, addr string, inc uint64) *distributor {
	st := p.statsLocked(name, addr, inc)
	d := newDistributor(p, name, addr, inc, st)
	p.mu.dists[name] = d
	p.wg.Go(func() {
		for d != nil {
			t0 := time.Now()
			d.run()
			d = p.redial(d, time.Since(t0))
		}
	})
	return d
}

// redial is called when d's connection has ended after lasting for
// lived. It waits the worker's back-off and returns a new distributor for
// it, or nil when the connection is not to be made again: the Pool is
// closed or abandoned, the worker left, was replaced, stopped, or
// refused the main node.
func (p *Pool) redial(d *distributor, lived time.Duration) *distributor {
	p.mu.Lock()
	if p.mu.dists[d.name] == d {
		delete(p.mu.dists, d.name)
	}
	m := p.mu.members[d.name]
	again := m != nil && m.inc == d.inc && p.mu.dists[d.name] == nil && redialable(d.err())
	var wait time.Duration
	if again {
		if lived > p.cfg.RedialBackoff {
			m.backoff = firstRedial // it worked for a while: start over
		}
		wait = m.backoff
		m.backoff = min(2*m.backoff, p.cfg.RedialBackoff)
	}
	p.mu.Unlock()
	if !again {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
	case <-p.quit:
		return nil
	case <-p.abandoned:
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if m2 := p.mu.members[d.name]; m2 != m || p.mu.dists[d.name] != nil || p.closed.Load() || p.isAbandoned() {
		return nil
	}
	d.log.Info("re-dialling the worker", "after", wait)
	st := p.statsLocked(d.name, m.addr, m.inc)
	nd := newDistributor(p, d.name, m.addr, m.inc, st)
	p.mu.dists[d.name] = nd
	return nd
}

// redialable reports whether a connection that ended with err is worth
// making again: not after a stop, a goodbye, an interruption, a restart
// of the worker, or a refusal (key, parameters, protocol). A frame that
// failed its integrity check is a broken link, not a refusal: the
// worker is dialled again.
func redialable(err error) bool {
	var pe *PeerError
	var pr *ProtocolError
	switch {
	case errors.Is(err, ErrIntegrity):
		return true
	case err == nil, errors.Is(err, errStopped), errors.Is(err, errWorkerLeft), errors.Is(err, errAbandoned),
		errors.Is(err, errReplaced), errors.Is(err, errRemoved), errors.As(err, &pe), errors.As(err, &pr),
		errors.Is(err, ErrAuth), errors.Is(err, ErrParams), errors.Is(err, ErrVersion), errors.Is(err, ErrFrame):
		return false
	}
	return true
}

// Remove drops the connection to the worker called name, if any: its
// unanswered batches go to other workers or are sketched on the main node.
func (p *Pool) Remove(name string, reason string) { p.remove(name, 0, reason) }

// remove is Remove for incarnation inc of the worker (0: any). It
// returns false when the worker's distributor is of another incarnation:
// the event is about a process that has been replaced.
func (p *Pool) remove(name string, inc uint64, reason string) bool {
	p.mu.Lock()
	d := p.mu.dists[name]
	if m := p.mu.members[name]; m != nil && (inc == 0 || m.inc == inc) {
		delete(p.mu.members, name)
	}
	p.mu.Unlock()
	if d == nil {
		return true
	}
	if inc != 0 && d.inc != inc {
		return false
	}
	d.fail(fmt.Errorf("%w: %s", errRemoved, reason))
	return true
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
			return fmt.Errorf("distributor: %d of %d workers connected%s: %w", have, n, p.lastErrors(), context.Cause(ctx))
		}
	}
}

// lastErrors returns why workers were refused or lost, as "; seen: name:
// reason, ...", or "" when none was.
func (p *Pool) lastErrors() string {
	var seen []string
	for _, w := range p.Stats().Workers {
		if w.LastError != "" && !w.Connected {
			seen = append(seen, w.Name+": "+w.LastError)
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return "; seen: " + strings.Join(seen, "; ")
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
	if n := len(p.encoded); n > 0 {
		late = append(late, fmt.Sprintf("%d encoded batches wait for a writer", n))
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
	// Nobody takes from retry or encoded any more.
	for {
		select {
		case b := <-p.retry:
			p.applyLocal(b)
		case b := <-p.encoded:
			p.applyLocal(b)
		default:
			return nil
		}
	}
}

// Abandon stops shipping batches, for a main node that was interrupted:
// every worker is sent a stop frame (so that it exits at once rather than
// when the gossip declares the main node gone), every connection is
// dropped (its unanswered batches are sketched here), and from then on the
// Pool sketches every batch on the main node and connects to no worker. A
// stream reader blocked by back-pressure thus goes on at once, and sees
// its context done. It returns within dismissWait; it is idempotent.
func (p *Pool) Abandon() {
	p.abandonOnce.Do(func() {
		p.mu.Lock()
		close(p.abandoned)
		dists := make([]*distributor, 0, len(p.mu.dists))
		for _, d := range p.mu.dists {
			dists = append(dists, d)
		}
		p.mu.Unlock()
		// Nothing more will be merged: each worker is told, so that it
		// exits now instead of waiting for the gossip.
		p.dismiss(dists, "main node interrupted", errAbandoned)
	})
}

// dismiss has the writer of each of ds send its worker stop with reason
// and no more batches, then ends every connection with err: those that
// have not ended within dismissWait are cut off. The workers' unanswered
// batches go elsewhere, as for any failed connection.
func (p *Pool) dismiss(ds []*distributor, reason string, err error) {
	for _, d := range ds {
		d.dismiss(reason, err)
	}
	deadline := time.NewTimer(dismissWait)
	defer deadline.Stop()
	for _, d := range ds {
		select {
		case <-d.failed:
		case <-deadline.C:
		}
	}
	for _, d := range ds {
		d.fail(err)
	}
}

// dismissWait bounds how long dismiss waits for the writers to send their
// stop frames.
const dismissWait = 100 * time.Millisecond

func (p *Pool) isAbandoned() bool {
	select {
	case <-p.abandoned:
		return true
	default:
		return false
	}
}

// take encodes batch b with enc (the calling encoder's) into a pending
// batch, or sketches it on the main node when it is under the local
// cutoff (nil then). It releases b.
func (p *Pool) take(b gutters.Batch, enc *batchEncoder) *pending {
	if b.Len() < p.cfg.LocalCutoff {
		p.applyBatch(b.Ticket, b.Vertex, b.IDs(&enc.wide))
		p.gut.Release(b)
		p.localCutoff.Add(1)
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
func (p *Pool) done(b *pending) {
	s := b.enc[:0]
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
	ids, err := decodeBatch(make([]uint32, 0, b.ids), b.enc, b.ids, b.vertex, p.params.Vertices())
	if err != nil {
		// The encoding is the Pool's own: a bug, which the store then
		// reports as an outstanding batch.
		p.cfg.Logger.Error("cannot decode a batch the main node encoded", "vertex", b.vertex, "err", err)
		return
	}
	p.applyBatch(b.id, b.vertex, ids)
	p.fallback.Add(1)
	p.done(b)
}

// requeue hands the batches of a failed connection to other workers or,
// when the retry queue is full, sketches them here. It never blocks.
func (p *Pool) requeue(bs []*pending) {
	for _, b := range bs {
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
	var wide []uint32 // a 16-bit batch's ids widened
	for {
		p.mu.Lock()
		active, changed := p.mu.active, p.mu.changed
		p.mu.Unlock()
		if active > 0 && !p.isAbandoned() {
			select {
			case <-changed:
				continue
			case <-p.abandoned:
			case <-p.quit:
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
			p.fallback.Add(1)
		case <-changed:
		case <-p.quit:
			return
		}
	}
}

// runEncoder takes batches from the gutters while a worker is connected
// and the Pool is not abandoned, encodes them (or sketches those under the
// local cutoff, see take) and hands them to the writers through encoded.
// It runs in its own goroutine until Close; a batch it holds then is
// sketched here.
func (p *Pool) runEncoder() {
	batches := p.gut.Batches()
	enc := newBatchEncoder(p.params.Vertices())
	state := func() (int, chan struct{}) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.mu.active, p.mu.changed
	}
	active, changed := state() // read again only when it changes
	for {
		var fresh <-chan gutters.Batch
		if active > 0 && !p.isAbandoned() {
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
			active, changed = state()
			continue
		case <-p.quit:
			return
		}
		b := p.take(gb, enc)
		if b == nil {
			continue // sketched here: under the local cutoff
		}
		select {
		case p.encoded <- b:
		case <-p.quit:
			p.applyLocal(b)
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

// addSameHost adds threads to the delta threads of connected workers on
// this machine and tells Config.SameHost the new sum.
func (p *Pool) addSameHost(threads int) {
	if p.cfg.SameHost == nil || threads == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.sameHost += threads
	p.cfg.SameHost(p.mu.sameHost)
}

// sameHost reports whether conn's two ends are on one machine: a
// loopback address, or one address at both ends (a connection from a host
// to its own address does not leave it).
func sameHost(conn net.Conn) bool {
	l, lok := conn.LocalAddr().(*net.TCPAddr)
	r, rok := conn.RemoteAddr().(*net.TCPAddr)
	return lok && rok && (r.IP.IsLoopback() || r.IP.Equal(l.IP))
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
		log.Warn("ignoring a member with unreadable metadata", "node", ev.Node, "err", ev.MetaErr)
		return
	}
	if ev.Meta.Role != RoleWorker {
		return
	}
	inc := ev.Meta.Incarnation
	switch ev.Kind {
	case Joined, Updated:
		if ev.Meta.Leaving {
			// The worker is on its way out: its connection, if any,
			// ends with its goodbye; connecting now would fail.
			p.mu.Lock()
			p.mu.leaving[ev.Name] = inc
			p.mu.Unlock()
			return
		}
		if p.add(ev.Name, ev.Meta.Addr, inc) {
			log.Info("worker joined", "addr", ev.Meta.Addr, "gossip", ev.Gossip, "incarnation", inc)
		} else {
			log.Info("ignoring an old process of the worker", "node", ev.Node, "event", ev.Kind)
		}
	case Left, Failed:
		p.mu.Lock()
		if goodbye, ok := p.mu.leaving[ev.Name]; ok && goodbye == inc {
			// memberlist may spread the leave before the Leaving
			// metadata (gossip keeps no order); the data plane said it.
			ev.Kind = Left
			delete(p.mu.leaving, ev.Name)
		}
		p.mu.Unlock()
		reason := "the worker left the cluster"
		msg := "worker left the cluster"
		if ev.Kind == Failed {
			reason, msg = "the cluster declared the worker dead", "worker failed"
		}
		if p.remove(ev.Name, inc, reason) {
			if ev.Kind == Failed {
				p.failed.Add(1)
				log.Warn(msg, "node", ev.Node)
			} else {
				p.left.Add(1)
				log.Info(msg, "node", ev.Node)
			}
		} else {
			log.Info(msg+"; a newer process of it is connected", "node", ev.Node)
		}
	}
}
