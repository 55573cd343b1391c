package distributor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/gutters"
	"sketchcc/sketch"
)

// distributor ships batches to one worker over one connection: its
// writer goroutine takes batches from the engine (or from the retry
// queue) while it has credits, and its reader goroutine merges the deltas
// that come back. It lives for one connection; a worker that reconnects
// gets a new one.
type distributor struct {
	p          *Pool
	name, addr string
	st         *workerStats
	log        *slog.Logger

	conn    net.Conn      // set before the handshake; closed by fail
	credit  chan struct{} // a credit back per merged delta; never blocks (cap Credits)
	failed  chan struct{} // closed by fail
	stopped chan struct{} // closed by stop: send stop, then close
	once    sync.Once     // guards fail
	stopOne sync.Once
	// connected is true from the handshake until the connection ends.
	connected atomic.Bool

	// mu guards the batches in flight. Lock order: Pool.mu before
	// distributor.mu; never held while calling the engine or the network.
	mu struct {
		sync.Mutex
		pending map[uint64]*pending // sent (or being sent), not yet answered
		dead    bool                // fail has run: pending has been requeued
		err     error               // why the connection ended
	}
}

func newDistributor(p *Pool, name, addr string, st *workerStats) *distributor {
	d := &distributor{p: p, name: name, addr: addr, st: st,
		log:     p.cfg.Logger.With("worker", name, "addr", addr),
		credit:  make(chan struct{}, p.cfg.Credits),
		failed:  make(chan struct{}),
		stopped: make(chan struct{}),
	}
	d.mu.pending = make(map[uint64]*pending, p.cfg.Credits)
	return d
}

// held returns the number of batches the worker holds.
func (d *distributor) held() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.mu.pending)
}

// errStopped ends a writer that was asked to stop.
var errStopped = errors.New("distributor: stopped by the main node")

// run connects, shakes hands, then runs the writer in this goroutine and
// the reader in another until the connection ends. It runs in its own
// goroutine, started by Pool.Add.
func (d *distributor) run() {
	ctx, cancel := context.WithTimeout(context.Background(), d.p.cfg.DialTimeout)
	// Stop or fail cancel a dial in progress.
	var watch sync.WaitGroup
	watch.Go(func() {
		select {
		case <-d.stopped:
		case <-d.failed:
		case <-ctx.Done():
		}
		cancel()
	})
	defer watch.Wait()
	defer cancel()
	conn, err := d.p.dial(ctx, d.addr)
	if err != nil {
		d.st.setErr(err)
		d.log.Warn("cannot connect to worker", "err", err)
		return
	}
	d.mu.Lock()
	d.conn = conn
	dead := d.mu.dead
	d.mu.Unlock()
	if dead {
		conn.Close()
		return
	}
	fr := newFrameReader(conn, &d.st.bytesIn)
	fw := newFrameWriter(conn, &d.st.bytesOut)
	deadline, _ := ctx.Deadline()
	conn.SetDeadline(deadline)
	res, err := mainHandshake(fr, fw, d.p.cfg.Key, d.p.cfg.Name, d.p.params, d.p.gut.Config().BatchUpdates)
	if err != nil {
		var pe *PeerError
		if !errors.As(err, &pe) && (errors.Is(err, ErrAuth) || errors.Is(err, ErrFrame) || errors.Is(err, ErrVersion)) {
			err = &ProtocolError{Worker: d.name, Err: err}
		}
		d.st.setErr(err)
		d.st.refused.Add(1)
		d.log.Warn("worker refused", "err", err)
		conn.Close()
		return
	}
	conn.SetDeadline(time.Time{})
	fr.maxHeader = maxHeaderBytes
	fr.maxPayload = min(d.p.cfg.MaxFrameBytes, maxFrameBatches*deltaBytes(d.p.per))
	d.log.Info("worker connected", "threads", res.threads, "remote_name", res.name)
	d.st.connections.Add(1)
	d.connected.Store(true)
	d.p.setActive(+1)
	defer d.p.setActive(-1)
	defer d.connected.Store(false)

	// pprof labels split the main node's CPU by stage (main-node --json).
	var reader sync.WaitGroup
	reader.Go(func() {
		pprof.Do(context.Background(), pprof.Labels("stage", "merge", "goroutine", "merge-"+d.name),
			func(context.Context) { d.fail(d.readDeltas(fr)) })
	})
	pprof.Do(context.Background(), pprof.Labels("stage", "ship", "goroutine", "ship-"+d.name),
		func(context.Context) { d.fail(d.writeBatches(fw)) })
	reader.Wait()
}

// fail ends the connection once: it closes it, marks the distributor
// dead and hands every unanswered batch back to the pool. Safe for
// concurrent use; the first error is kept.
func (d *distributor) fail(err error) {
	d.once.Do(func() {
		d.mu.Lock()
		d.mu.dead = true
		d.mu.err = err
		bs := make([]*pending, 0, len(d.mu.pending))
		for _, b := range d.mu.pending {
			bs = append(bs, b)
		}
		clear(d.mu.pending)
		conn := d.conn
		d.mu.Unlock()
		close(d.failed)
		if conn != nil {
			conn.Close()
		}
		d.st.resent.Add(uint64(len(bs)))
		d.p.requeue(bs)
		switch {
		case errors.Is(err, errStopped):
			d.log.Info("worker released")
		case len(bs) > 0:
			d.st.setErr(err)
			d.log.Warn("worker connection lost; sending its batches elsewhere", "batches", len(bs), "err", err)
		default:
			d.st.setErr(err)
			d.log.Warn("worker connection lost", "err", err)
		}
	})
}

// stop asks the writer to send stop and end the connection.
func (d *distributor) stop() {
	d.stopOne.Do(func() { close(d.stopped) })
}

// admit records b as in flight, unless the connection has failed: then b
// goes back to the pool and admit returns false.
func (d *distributor) admit(b *pending) bool {
	d.mu.Lock()
	if d.mu.dead {
		d.mu.Unlock()
		d.p.requeue([]*pending{b})
		return false
	}
	d.mu.pending[b.id] = b
	d.mu.Unlock()
	return true
}

// writeBatches is the writer: it runs until the connection fails or stop
// is asked, and returns why.
func (d *distributor) writeBatches(fw *frameWriter) error {
	p := d.p
	credits := p.cfg.Credits
	batches := p.gut.Batches()
	var (
		frame   []*pending
		entries []batchEntry
		parts   [][]byte
		bytes   int
		timer   = time.NewTimer(time.Hour)
		timerC  <-chan time.Time
	)
	timer.Stop()
	defer timer.Stop()
	flush := func() error {
		timer.Stop()
		timerC = nil
		if len(frame) == 0 {
			return nil
		}
		entries, parts = entries[:0], parts[:0]
		var updates uint64
		for _, b := range frame {
			entries = append(entries, batchEntry{ID: b.id, Vertex: b.vertex, Updates: uint32(len(b.neighbors))})
			parts = append(parts, uint32Bytes(b.neighbors))
			updates += uint64(len(b.neighbors))
		}
		d.conn.SetWriteDeadline(time.Now().Add(p.cfg.AnswerTimeout))
		_, err := fw.write(batchesMsg, entries, parts...)
		if err != nil {
			return fmt.Errorf("cannot send %d batches to %s: %w", len(frame), d.addr, err)
		}
		d.st.batches.Add(uint64(len(frame)))
		d.st.updates.Add(updates)
		d.armReadDeadline()
		clear(frame)
		frame, bytes = frame[:0], 0
		return nil
	}
	for {
		var fresh <-chan gutters.Batch
		var again <-chan *pending
		if credits > 0 {
			fresh, again = batches, p.retry
		}
		var b *pending
		select {
		case <-d.failed:
			return nil // fail has run; its error is kept
		case <-d.stopped:
			if err := flush(); err != nil {
				return err
			}
			d.conn.SetWriteDeadline(time.Now().Add(p.cfg.AnswerTimeout))
			if _, err := fw.write(stopMsg, &stop{Reason: "main node done"}); err != nil {
				return fmt.Errorf("cannot send stop to %s: %w", d.addr, err)
			}
			return errStopped
		case <-d.credit:
			credits++
			continue
		case <-timerC:
			if err := flush(); err != nil {
				return err
			}
			continue
		case b = <-again:
		case gb, ok := <-fresh:
			if !ok {
				batches = nil
				continue
			}
			if b = p.take(gb); b == nil {
				continue // sketched here: under the local cutoff
			}
		}
		if !d.admit(b) {
			return nil
		}
		credits--
		frame = append(frame, b)
		bytes += 4 * len(b.neighbors)
		switch {
		case credits == 0 || bytes >= p.cfg.FrameBytes || len(frame) == maxFrameBatches:
			// Out of credits, nothing more can join the frame until
			// it has been answered: send it now.
			if err := flush(); err != nil {
				return err
			}
		case timerC == nil:
			timer.Reset(p.cfg.FlushDelay)
			timerC = timer.C
		}
	}
}

// armReadDeadline gives the worker AnswerTimeout to answer while it holds
// batches, and lifts the deadline when it holds none.
func (d *distributor) armReadDeadline() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.mu.pending) > 0 {
		d.conn.SetReadDeadline(time.Now().Add(d.p.cfg.AnswerTimeout))
	} else {
		d.conn.SetReadDeadline(time.Time{})
	}
}

// readDeltas is the reader: it merges deltas until the connection fails,
// and returns why.
func (d *distributor) readDeltas(fr *frameReader) error {
	p := d.p
	per := p.per
	delta := make([]sketch.Bucket, per)
	var ids []uint64
	var payload []byte
	protocol := func(err error) error { return &ProtocolError{Worker: d.name, Err: err} }
	for {
		t, h, n, err := fr.next()
		if err != nil {
			if errors.Is(err, ErrFrame) {
				return protocol(err)
			}
			select {
			case <-d.failed:
				return err
			default:
			}
			return fmt.Errorf("cannot read deltas from %s: %w", d.addr, err)
		}
		switch t {
		case deltasMsg:
		case errorMsg:
			var f failure
			if err := fr.dec.decode(h, &f, 0); err != nil {
				return protocol(fmt.Errorf("%w: bad error frame: %v", ErrFrame, err))
			}
			return &PeerError{Reason: f.Reason}
		default:
			return protocol(fmt.Errorf("%w: unexpected %s frame", ErrFrame, t))
		}
		if err := fr.dec.decode(h, &ids, maxFrameBatches); err != nil {
			return protocol(fmt.Errorf("%w: bad deltas header: %v", ErrFrame, err))
		}
		if err := checkDeltas(ids, n, per); err != nil {
			return protocol(err)
		}
		if cap(payload) < n {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if err := fr.payload(payload); err != nil {
			return fmt.Errorf("cannot read deltas from %s: %w", d.addr, err)
		}
		rest := payload
		for _, id := range ids {
			var v uint32
			v, rest, err = p.params.DecodeDelta(delta, rest)
			if err != nil {
				return protocol(fmt.Errorf("%w: delta for batch %d: %v", ErrFrame, id, err))
			}
			d.mu.Lock()
			b := d.mu.pending[id]
			if b != nil && b.vertex != v {
				d.mu.Unlock()
				return protocol(fmt.Errorf("%w: delta for batch %d is for vertex %d, the batch for vertex %d",
					ErrFrame, id, v, b.vertex))
			}
			delete(d.mu.pending, id)
			d.mu.Unlock()
			if b == nil {
				// Answered already, or never sent here: merging it
				// would cancel a delta (doc.go).
				p.duplicates.Add(1)
				d.st.duplicates.Add(1)
				continue
			}
			if err := p.st.Merge(id, v, delta); err != nil {
				p.refusedBy(err)
			}
			d.st.merged.Add(1)
			p.done(b)
			d.credit <- struct{}{}
		}
		d.armReadDeadline()
	}
}
