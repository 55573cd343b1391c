package distributor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime/pprof"
	"sync"
	"time"
)

// distributor ships batches to one worker over one connection: its
// writer goroutine takes batches from the engine (or from the retry
// queue) while it has credits, and its reader goroutine merges the deltas
// that come back. It lives for one connection; a worker that reconnects
// gets a new one.
//
// A connection ends in one of two ways: fail ends it at once (a broken
// link, a protocol error, a removal), and ask has the writer send a stop
// frame first, then fail the connection with the ask's error. Either way
// fail hands every unanswered batch back to the plane, once.
type distributor struct {
	p    *Pool
	id   connID
	peer // whom it connects to
	// frame holds, from the handshake, the payload at which a batches
	// frame is sent (send: FrameBytes, or less when the worker reads no
	// more) and the largest payload the worker reads (limit), which no
	// frame exceeds even at the batches' largest encoding.
	frame struct{ send, limit int }
	st    *workerStats
	log   *slog.Logger

	conn    net.Conn      // set before the handshake; closed by fail
	credit  chan struct{} // a credit back per merged delta; never blocks (cap Credits)
	failed  signal        // fired by fail
	stopped signal        // fired by ask, after asked is set
	// asked, set by ask before stopped fires, is the reason the stop
	// frame gives the worker and the error the connection ends with: a
	// plain stop (errStopped) sends what the writer holds first; any
	// other sends nothing more, and its batches go elsewhere.
	asked struct {
		reason string
		err    error
	}

	// mu guards the batches in flight. Lock order: Pool.mu before
	// distributor.mu; never held while calling the engine or the network.
	mu struct {
		sync.Mutex
		pending map[uint64]*pending // sent (or being sent), not yet answered
		dead    bool                // fail has run: pending has been requeued
		err     error               // why the connection ended
	}
}

// peer names a worker process: its name, its data-plane address and its
// NodeMeta.Incarnation (0 if unknown).
type peer struct {
	name, addr string
	inc        uint64
}

// newDistributor returns the connection that roster action a (actDial)
// asked for, counting into st.
func newDistributor(p *Pool, a action, st *workerStats) *distributor {
	d := &distributor{p: p, id: a.conn, peer: peer{name: a.name, addr: a.addr, inc: a.inc}, st: st,
		log:    p.cfg.Logger.With("worker", a.name, "addr", a.addr),
		credit: make(chan struct{}, p.cfg.Credits),
	}
	d.failed.init()
	d.stopped.init()
	d.mu.pending = make(map[uint64]*pending, p.cfg.Credits)
	return d
}

// err returns why the connection ended, once it has.
func (d *distributor) err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.err
}

// held returns the number of batches the worker holds.
func (d *distributor) held() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.mu.pending)
}

// errStopped ends a writer that was asked to stop.
var errStopped = errors.New("distributor: stopped by the main node")

// errAbandoned ends the connections of an abandoned Pool.
var errAbandoned = errors.New("distributor: the main node was interrupted")

// stopWriteTimeout bounds writing stop to a worker: a worker that does
// not read it is closed anyway.
const stopWriteTimeout = time.Second

// errReplaced ends the connection of a worker process that a newer one
// under its name replaced; errRemoved one whose worker left the cluster
// or was removed.
var (
	errReplaced = errors.New("distributor: a new process took the worker's name")
	errRemoved  = errors.New("distributor: removed")
)

// errWorkerLeft ends a connection whose worker said it was leaving
// (Worker.Close).
var errWorkerLeft = errors.New("distributor: the worker is leaving")

// run connects, shakes hands, then runs the writer in this goroutine and
// the reader in another until the connection ends. It runs in its own
// goroutine, started by Pool.step for a dial.
func (d *distributor) run() {
	ctx, cancel := context.WithTimeout(context.Background(), d.p.cfg.DialTimeout)
	// Stop or fail cancel a dial in progress.
	var watch sync.WaitGroup
	watch.Go(func() {
		select {
		case <-d.stopped.c:
			// A handshake in progress ends now: the Pool is closing.
			d.mu.Lock()
			if d.conn != nil && !d.st.connected.Load() {
				d.conn.Close()
			}
			d.mu.Unlock()
		case <-d.failed.c:
		case <-ctx.Done():
		}
		cancel()
	})
	defer watch.Wait()
	defer cancel()
	var dialer net.Dialer
	conn, err := dialer.DialContext(ctx, "tcp", d.addr)
	if err != nil {
		d.setErr(err)
		d.st.setErr(err)
		d.st.refused.Store(true)
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
	conn.SetDeadline(time.Now().Add(d.p.cfg.HandshakeTimeout))
	res, err := mainHandshake(fr, fw, d.p.cfg.Key, d.p.cfg.Name, d.p.st.Params(), d.p.gut.Config().BatchUpdates, d.p.cfg.MaxFrameBytes)
	if err != nil {
		var pe *PeerError
		if !errors.As(err, &pe) && (errors.Is(err, ErrAuth) || errors.Is(err, ErrFrame) || errors.Is(err, ErrVersion) ||
			errors.Is(err, ErrParams)) {
			err = &ProtocolError{Worker: d.name, Err: err}
		}
		d.setErr(err)
		d.st.setErr(err)
		d.st.refused.Store(true)
		d.log.Warn("worker refused", "err", err)
		conn.Close()
		return
	}
	conn.SetDeadline(time.Time{})
	fr.maxHeader = maxHeaderBytes
	fr.maxPayload = min(d.p.cfg.MaxFrameBytes, maxFrameBatches*newDeltaCodec(d.p.st.Params()).maxBytes())
	d.frame.send = min(d.p.cfg.FrameBytes, res.maxFrameBytes)
	d.frame.limit = res.maxFrameBytes
	d.log.Info("worker connected", "threads", res.threads, "remote_name", res.name, "batch_frame_bytes", d.frame.send)
	d.st.up.Store(true)
	d.st.connected.Store(true)
	d.p.step(func(r *roster) []action { return r.connected(d.id) })
	d.p.up.add(+1)
	defer d.p.up.add(-1)
	defer d.st.connected.Store(false)
	if sameHost(conn) {
		d.p.addSameHost(res.threads)
		defer d.p.addSameHost(-res.threads)
	}

	// pprof labels split the main node's CPU by stage (main-node --json).
	var reader sync.WaitGroup
	reader.Go(func() {
		pprof.Do(context.Background(), pprof.Labels("stage", "merge", "goroutine", "merge-"+d.name),
			func(context.Context) { d.fail(d.readDeltas(fr)) })
	})
	reader.Go(d.watch)
	pprof.Do(context.Background(), pprof.Labels("stage", "ship", "goroutine", "ship-"+d.name),
		func(context.Context) { d.fail(d.writeBatches(fw)) })
	reader.Wait()
}

// setErr records why the connection could not be made.
func (d *distributor) setErr(err error) {
	d.mu.Lock()
	if d.mu.err == nil {
		d.mu.err = err
	}
	d.mu.Unlock()
}

// watch enforces AnswerTimeout until the connection ends: a batch held
// past its deadline is sketched on the main node (its late delta will be
// dropped as unknown) and its credit given back; a worker that holds
// batches and has sent no byte for AnswerTimeout loses the connection.
// It runs in its own goroutine.
func (d *distributor) watch() {
	timeout := d.p.cfg.AnswerTimeout
	tick := time.NewTicker(min(max(timeout/8, 5*time.Millisecond), time.Second))
	defer tick.Stop()
	lastBytes, lastProgress := d.st.bytesIn.Load(), time.Now()
	for {
		select {
		case <-d.failed.c:
			return
		case now := <-tick.C:
			var late []*pending
			d.mu.Lock()
			for id, b := range d.mu.pending {
				if !b.sent.IsZero() && now.Sub(b.sent) >= timeout {
					late = append(late, b)
					delete(d.mu.pending, id)
				}
			}
			held := len(d.mu.pending)
			d.mu.Unlock()
			if len(late) > 0 {
				d.log.Warn("batches not answered in time; sketching them on the main node",
					"batches", len(late), "answer_timeout", timeout)
				d.st.late.Add(uint64(len(late)))
				for _, b := range late {
					d.p.applyLocal(b)
					d.credit <- struct{}{} // never blocks: one per batch held
				}
			}
			if n := d.st.bytesIn.Load(); n != lastBytes || held == 0 {
				lastBytes, lastProgress = n, now
			} else if now.Sub(lastProgress) >= timeout {
				d.fail(fmt.Errorf("the worker holds %d batches and has sent nothing for %v (answer timeout)",
					held, now.Sub(lastProgress).Round(time.Millisecond)))
				return
			}
		}
	}
}

// fail ends the connection once: it closes it, marks the distributor
// dead and hands every unanswered batch back to the plane. Safe for
// concurrent use; the first error is kept.
func (d *distributor) fail(err error) {
	if !d.failed.fire() {
		return
	}
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
	if conn != nil {
		conn.Close()
	}
	d.st.resent.Add(uint64(len(bs)))
	d.p.requeue(bs)
	switch {
	case errors.Is(err, errStopped), errors.Is(err, errAbandoned):
		d.log.Info("worker released", "unanswered", len(bs))
	case errors.Is(err, errWorkerLeft):
		d.st.setErr(err)
		d.log.Info("worker left; sending its unanswered batches elsewhere", "batches", len(bs))
	case len(bs) > 0:
		d.st.setErr(err)
		d.log.Warn("worker connection lost; sending its batches elsewhere", "batches", len(bs), "err", err)
	default:
		d.st.setErr(err)
		d.log.Warn("worker connection lost", "err", err)
	}
}

// stopReason is what a plain stop tells the worker.
const stopReason = "main node done"

// ask has the writer send stop with reason and end the connection with
// err: after what it holds for a plain stop (errStopped), else at once,
// sending nothing more. Only the first ask counts.
func (d *distributor) ask(reason string, err error) {
	d.mu.Lock()
	first := d.asked.err == nil
	if first {
		d.asked.reason, d.asked.err = reason, err
	}
	d.mu.Unlock()
	if first {
		d.stopped.fire()
	}
}

// stopReason returns, once stopped has fired, the reason the stop frame
// gives the worker and the error the connection ends with.
func (d *distributor) stopReason() (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked.reason, d.asked.err
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
	b.sent = time.Time{} // set when its frame has been written
	d.mu.pending[b.id] = b
	d.mu.Unlock()
	d.st.batches.Add(1)
	d.st.updates.Add(uint64(b.raw))
	return true
}
