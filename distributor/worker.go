package distributor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/sketch"
)

// WorkerConfig configures a Worker. A zero field takes its default.
type WorkerConfig struct {
	// Name is the worker's name in the handshake and in the main node's
	// logs. Empty means the listener's address.
	Name string
	// Threads is the number of goroutines computing deltas for each
	// connection, at most MaxThreads. Zero means runtime.GOMAXPROCS(0).
	Threads int
	// Key is the cluster key that the handshake authenticates with (an
	// HMAC challenge in both directions). Nil means no key: only a main
	// node without a key is served.
	Key []byte
	// MaxFrameBytes bounds the payload of a frame read from the main node,
	// in bytes. Zero means DefaultMaxFrameBytes.
	MaxFrameBytes int
	// FrameBytes is the delta payload at which a frame is sent at once, in
	// bytes. Zero means 1 MiB.
	FrameBytes int
	// FlushDelay is the longest a computed delta waits for others to share
	// its frame. Zero means DefaultFlushDelay.
	FlushDelay time.Duration
	// HandshakeTimeout bounds the handshake. Zero means
	// DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds writing one frame of deltas: a main node that
	// reads nothing for this long loses the connection. Zero means
	// DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ShutdownTimeout bounds Close: the batches already read are
	// sketched and answered within it, the rest are left to the main
	// node to send elsewhere. Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// Logger receives connection events; nil discards them.
	Logger *slog.Logger
}

// MaxThreads bounds WorkerConfig.Threads.
const MaxThreads = 4096

func (c *WorkerConfig) ensureDefaults() {
	if c.Threads == 0 {
		c.Threads = runtime.GOMAXPROCS(0)
	}
	if c.MaxFrameBytes == 0 {
		c.MaxFrameBytes = DefaultMaxFrameBytes
	}
	if c.FrameBytes == 0 {
		c.FrameBytes = 1 << 20
	}
	if c.FlushDelay == 0 {
		c.FlushDelay = DefaultFlushDelay
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports every problem with c at once.
func (c WorkerConfig) Validate() error {
	var errs []error
	if c.Threads < 0 || c.Threads > MaxThreads {
		errs = append(errs, fmt.Errorf("distributor: %d threads, need [1, %d]", c.Threads, MaxThreads))
	}
	if c.MaxFrameBytes < 0 || int64(c.MaxFrameBytes) > 1<<31 {
		errs = append(errs, fmt.Errorf("distributor: MaxFrameBytes %d, need [1, 2^31]", c.MaxFrameBytes))
	}
	if c.FrameBytes < 0 {
		errs = append(errs, fmt.Errorf("distributor: FrameBytes %d, need > 0", c.FrameBytes))
	}
	if c.FlushDelay < 0 || c.HandshakeTimeout < 0 || c.WriteTimeout < 0 || c.ShutdownTimeout < 0 {
		errs = append(errs, errors.New("distributor: negative FlushDelay, HandshakeTimeout, WriteTimeout or ShutdownTimeout"))
	}
	if err := checkKey(c.Key); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ServeStats counts what a Worker has done. Fields are totals since
// NewWorker.
type ServeStats struct {
	// Connections is the number of main-node connections accepted.
	Connections uint64
	// Refused counts connections dropped before or during the handshake.
	Refused uint64
	// Batches is the number of batches received and sketched.
	Batches uint64
	// Updates is the number of neighbour ids in them, once the ids that
	// occur an even number of times in a batch have cancelled (wire.go).
	Updates uint64
	// BytesReceived and BytesSent count frame bytes on the data plane.
	BytesReceived, BytesSent uint64
	// BadFrames counts frames from main nodes that failed their integrity
	// check (ErrIntegrity): each ended its connection.
	BadFrames uint64
}

// Worker computes deltas for the batches that main nodes send it. It keeps
// no state between batches. Serve, Stats, Stopped and Close are safe for
// concurrent use.
type Worker struct {
	cfg    WorkerConfig
	wg     sync.WaitGroup
	closed atomic.Bool
	// stopped records the first stop frame from a main node: c is closed,
	// once, after reason is written.
	stopped struct {
		c      chan struct{}
		once   sync.Once
		reason string
	}
	// shutdownBy is the deadline of every write once Close has begun.
	shutdownBy atomic.Pointer[time.Time]

	mu struct {
		sync.Mutex
		listeners map[net.Listener]struct{}
		conns     map[net.Conn]struct{}
	}

	n serveCounters
}

// serveCounters are the live counters behind ServeStats.
type serveCounters struct {
	conns, refused, batches, updates, bytesIn, bytesOut, badFrames atomic.Uint64
}

// NewWorker returns a Worker for cfg. It returns the errors of
// cfg.Validate.
func NewWorker(cfg WorkerConfig) (*Worker, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	w := &Worker{cfg: cfg}
	w.stopped.c = make(chan struct{})
	w.mu.listeners = map[net.Listener]struct{}{}
	w.mu.conns = map[net.Conn]struct{}{}
	return w, nil
}

// Stopped is closed when a main node has sent stop: it is done with this
// worker (StopReason says why).
func (w *Worker) Stopped() <-chan struct{} { return w.stopped.c }

// StopReason returns the reason the main node gave in its stop frame
// ("main node done", "main node interrupted"), or "" before Stopped is
// closed.
func (w *Worker) StopReason() string {
	select {
	case <-w.stopped.c:
		return w.stopped.reason
	default:
		return ""
	}
}

// Stats returns the counters.
func (w *Worker) Stats() ServeStats {
	n := &w.n
	return ServeStats{Connections: n.conns.Load(), Refused: n.refused.Load(), Batches: n.batches.Load(),
		Updates: n.updates.Load(), BytesReceived: n.bytesIn.Load(), BytesSent: n.bytesOut.Load(),
		BadFrames: n.badFrames.Load()}
}

// Serve accepts main-node connections on ln and serves each in its own
// goroutines until ctx is done or Close is called; it closes ln then. It
// returns ErrClosed after Close, ctx's cause when ctx is done, or the
// listener's error.
func (w *Worker) Serve(ctx context.Context, ln net.Listener) error {
	w.mu.Lock()
	if w.closed.Load() {
		w.mu.Unlock()
		ln.Close()
		return ErrClosed
	}
	w.mu.listeners[ln] = struct{}{}
	w.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer func() {
		w.mu.Lock()
		delete(w.mu.listeners, ln)
		w.mu.Unlock()
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			if w.closed.Load() {
				return ErrClosed
			}
			if ctx.Err() != nil {
				return context.Cause(ctx)
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		w.mu.Lock()
		if w.closed.Load() {
			w.mu.Unlock()
			c.Close()
			return ErrClosed
		}
		w.mu.conns[c] = struct{}{}
		w.mu.Unlock()
		w.n.conns.Add(1)
		w.wg.Go(func() {
			defer func() {
				w.mu.Lock()
				delete(w.mu.conns, c)
				w.mu.Unlock()
				c.Close()
			}()
			w.serveConn(c)
		})
	}
}

// Close stops accepting connections and stops reading batches at once;
// the batches already read are sketched and their deltas sent, then each
// main node is told that this worker leaves (it sends what it did not
// get an answer for elsewhere), all within ShutdownTimeout. Close waits
// for all goroutines started by Serve; it is idempotent.
func (w *Worker) Close() error {
	by := time.Now().Add(w.cfg.ShutdownTimeout)
	w.mu.Lock()
	if !w.closed.Swap(true) {
		w.shutdownBy.Store(&by)
	}
	for ln := range w.mu.listeners {
		ln.Close()
	}
	for c := range w.mu.conns {
		c.SetReadDeadline(time.Now()) // the reader stops at once
		c.SetWriteDeadline(*w.shutdownBy.Load())
	}
	w.mu.Unlock()
	w.wg.Wait()
	return nil
}

// setWriteDeadline gives the next write on c WriteTimeout, or what is left
// of ShutdownTimeout once Close has begun.
func (w *Worker) setWriteDeadline(c net.Conn) {
	d := time.Now().Add(w.cfg.WriteTimeout)
	if by := w.shutdownBy.Load(); by != nil && by.Before(d) {
		d = *by
	}
	c.SetWriteDeadline(d)
	if by := w.shutdownBy.Load(); by != nil && by.Before(d) {
		c.SetWriteDeadline(*by) // Close began meanwhile
	}
}

// sayGoodbye tells the main node that this worker leaves, closes the
// write side and reads until the main node closes, within the shutdown
// deadline: closing with unread bytes would reset the connection and
// could drop the goodbye and the last deltas.
func (w *Worker) sayGoodbye(c net.Conn, fw *frameWriter) {
	w.setWriteDeadline(c)
	if _, err := fw.write(goodbyeMsg, &goodbye{}); err != nil {
		return
	}
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok {
		return
	}
	cw.CloseWrite()
	c.SetReadDeadline(*w.shutdownBy.Load())
	io.Copy(io.Discard, c)
}

// job is one batch to sketch. neighbors aliases a frame buffer, released
// through frame after the delta is computed.
type job struct {
	id        uint64
	vertex    uint32
	neighbors []uint32
	frame     *frameBuf
}

// frameBuf is the payload of one batches frame, shared by its jobs.
type frameBuf struct {
	raw  []byte   // the payload as read
	ids  []uint32 // its batches' neighbour ids, decoded
	refs atomic.Int32
	pool *sync.Pool
}

func (f *frameBuf) release() {
	if f.refs.Add(-1) == 0 {
		f.pool.Put(f)
	}
}

// result is one computed delta.
type result struct {
	id     uint64
	vertex uint32
	delta  *[]sketch.Bucket
}

// serveConn runs one connection: the handshake, then this goroutine reads
// batches, Threads goroutines sketch them and one goroutine writes the
// deltas back.
func (w *Worker) serveConn(c net.Conn) {
	log := w.cfg.Logger.With("peer", c.RemoteAddr().String())
	fr := newFrameReader(c, &w.n.bytesIn)
	fw := newFrameWriter(c, &w.n.bytesOut)
	c.SetDeadline(time.Now().Add(w.cfg.HandshakeTimeout))
	terms, err := workerHandshake(fr, fw, w.cfg.Key, w.name(c), w.cfg.Threads, w.cfg.MaxFrameBytes)
	p, maxBatch := terms.p, terms.maxBatch
	if err != nil {
		w.n.refused.Add(1)
		log.Warn("refusing a connection", "err", err)
		return
	}
	c.SetDeadline(time.Time{})
	log.Info("main node connected", "vertices", p.Vertices(), "threads", w.cfg.Threads,
		"delta_frame_bytes", min(w.cfg.FrameBytes, terms.maxFrameBytes))
	fr.maxHeader = maxHeaderBytes
	fr.maxPayload = min(w.cfg.MaxFrameBytes, maxFrameBatches*maxBatchBytes(maxBatch))

	per := p.BucketsPerVertex()
	jobs := make(chan job, w.cfg.Threads) // a short queue: the main node's credits bound the work
	results := make(chan result, w.cfg.Threads)
	var outstanding atomic.Int64 // batches read whose delta is not in a frame yet
	deltas := sync.Pool{New: func() any { s := make([]sketch.Bucket, per); return &s }}
	frames := &sync.Pool{}
	frames.New = func() any { return &frameBuf{pool: frames} }

	var compute sync.WaitGroup
	for range w.cfg.Threads {
		compute.Go(func() {
			for j := range jobs {
				d := deltas.Get().(*[]sketch.Bucket)
				p.Delta(*d, j.vertex, j.neighbors)
				j.frame.release()
				results <- result{id: j.id, vertex: j.vertex, delta: d}
			}
		})
	}
	var writer sync.WaitGroup
	var werr error
	writer.Go(func() {
		frameBytes := min(w.cfg.FrameBytes, terms.maxFrameBytes)
		if werr = w.writeDeltas(c, fw, frameBytes, results, &outstanding, &deltas, newDeltaCodec(p)); werr != nil {
			log.Warn("cannot send deltas; closing the connection", "err", werr)
			c.Close() // the reader sees the error too
		}
	})

	err = w.readBatches(fr, p, maxBatch, jobs, frames, &outstanding)
	close(jobs)
	compute.Wait()
	close(results)
	writer.Wait()
	switch {
	case err == nil:
		log.Info("main node sent stop")
	case w.closed.Load():
		if werr == nil {
			w.sayGoodbye(c, fw)
		}
		log.Info("connection closed by shutdown")
	default:
		var pe *ProtocolError
		if errors.As(err, &pe) {
			log.Error("dropping main node connection", "err", err)
		} else {
			log.Warn("main node connection ended", "err", err)
		}
	}
}

func (w *Worker) name(c net.Conn) string {
	if w.cfg.Name != "" {
		return w.cfg.Name
	}
	return c.LocalAddr().String()
}

// readBatches reads frames until stop (nil), EOF or an error, and queues
// every batch as a job.
func (w *Worker) readBatches(fr *frameReader, p sketch.Params, maxBatch int, jobs chan<- job, frames *sync.Pool, outstanding *atomic.Int64) error {
	var entries []batchEntry
	for {
		t, h, n, err := fr.next()
		if err != nil {
			if errors.Is(err, ErrIntegrity) {
				w.n.badFrames.Add(1)
			}
			var pe *ProtocolError
			if (errors.Is(err, ErrFrame) || errors.Is(err, ErrIntegrity)) && !errors.As(err, &pe) {
				return &ProtocolError{Worker: "main node", Err: err}
			}
			return err
		}
		switch t {
		case errorMsg:
			var f failure
			if err := fr.dec.decode(h, &f, 0); err != nil || n != 0 {
				return &ProtocolError{Worker: "main node", Err: fmt.Errorf("%w: bad error frame", ErrFrame)}
			}
			return &PeerError{Reason: f.Reason}
		case stopMsg:
			var s stop
			if err := fr.dec.decode(h, &s, 0); err != nil || n != 0 {
				return &ProtocolError{Worker: "main node", Err: fmt.Errorf("%w: bad stop frame", ErrFrame)}
			}
			w.stopped.once.Do(func() {
				w.stopped.reason = s.Reason
				close(w.stopped.c)
			})
			return nil
		case batchesMsg:
		default:
			return &ProtocolError{Worker: "main node", Err: fmt.Errorf("%w: unexpected %s frame", ErrFrame, t)}
		}
		// The payload first: nothing of a frame is used before its
		// check, the header included.
		f := frames.Get().(*frameBuf)
		if f.raw, err = fr.payload(f.raw, n); err != nil {
			frames.Put(f)
			if errors.Is(err, ErrIntegrity) {
				w.n.badFrames.Add(1)
				return &ProtocolError{Worker: "main node", Err: err}
			}
			return err
		}
		if err := fr.dec.decode(h, &entries, maxFrameBatches); err != nil {
			return &ProtocolError{Worker: "main node", Err: fmt.Errorf("%w: bad batches header: %v", ErrFrame, err)}
		}
		total, err := checkBatches(entries, n, p.Vertices(), maxBatch, fr.maxPayload)
		if err != nil {
			return &ProtocolError{Worker: "main node", Err: err}
		}
		if cap(f.ids) < total {
			f.ids = make([]uint32, 0, total)
		}
		f.ids = f.ids[:0]
		raw := f.raw
		for _, e := range entries {
			if f.ids, err = decodeBatch(f.ids, raw[:e.Bytes], int(e.Updates), e.Vertex, p.Vertices()); err != nil {
				return &ProtocolError{Worker: "main node", Err: fmt.Errorf("batch %d: %w", e.ID, err)}
			}
			raw = raw[e.Bytes:]
		}
		f.refs.Store(int32(len(entries)))
		outstanding.Add(int64(len(entries)))
		w.n.batches.Add(uint64(len(entries)))
		w.n.updates.Add(uint64(total))
		off := 0
		for _, e := range entries {
			jobs <- job{id: e.ID, vertex: e.Vertex, neighbors: f.ids[off : off+int(e.Updates) : off+int(e.Updates)], frame: f}
			off += int(e.Updates)
		}
	}
}

// writeDeltas sends the deltas of results in frames until results is
// closed. A frame goes out when it reaches FrameBytes, when no batch read
// is still being sketched, or FlushDelay after its first delta. After a
// write error it keeps draining results (so the compute goroutines end)
// and returns the error.
func (w *Worker) writeDeltas(c net.Conn, fw *frameWriter, frameBytes int, results <-chan result, outstanding *atomic.Int64, deltas *sync.Pool, dc *deltaCodec) error {
	var (
		ids     []uint64
		payload []byte
		werr    error
		timer   = time.NewTimer(time.Hour)
		timerC  <-chan time.Time
	)
	timer.Stop()
	flush := func() {
		if len(ids) > 0 && werr == nil {
			w.setWriteDeadline(c)
			_, werr = fw.write(deltasMsg, ids, payload)
		}
		ids, payload = ids[:0], payload[:0]
		timer.Stop()
		timerC = nil
	}
	for {
		select {
		case r, ok := <-results:
			if !ok {
				flush()
				return werr
			}
			if len(payload)+dc.maxBytes() > frameBytes {
				flush() // the main node reads no larger frame
			}
			ids = append(ids, r.id)
			payload = dc.append(payload, r.vertex, *r.delta)
			deltas.Put(r.delta)
			left := outstanding.Add(-1)
			switch {
			case len(payload) >= frameBytes || left == 0 || len(ids) == maxFrameBatches:
				flush()
			case timerC == nil:
				timer.Reset(w.cfg.FlushDelay)
				timerC = timer.C
			}
		case <-timerC:
			flush()
		}
	}
}
