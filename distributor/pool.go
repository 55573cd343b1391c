package distributor

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/gutters"
	"sketchcc/store"
)

// Pool is the main node's set of work distributors: one per connected
// worker, each with one TCP connection, one writer and one reader
// goroutine. While a worker is connected, the Pool's encoder goroutines
// take batches from the gutters' Batches, as the local delta workers do, so
// work balances itself, and hand them encoded to whichever writer has
// credit; when no worker is connected the Pool sketches batches on the
// main node, so the stream always makes progress.
//
// It has three parts. The roster (roster.go) decides whom to connect to
// and when to re-dial; the Pool feeds it, under mu, and carries out its
// actions after letting go of mu (step). The plane (plane.go) moves
// batches: encoders, fallback, retry queue. Each distributor
// (distributor.go) is one connection.
//
// Stop order (Close): the roster closes, so that nothing is dialled any
// more, and every connection is asked to stop (its writer sends what it
// holds, then a stop frame); quit fires, ending the membership follower
// and the re-dial waits; the Pool waits for every connection's goroutines,
// whose unanswered batches went back to the plane as each ended; then the
// plane stops and sketches what its queues still hold. Abandon, before
// Close, dismisses every connection instead and turns the plane to
// sketching everything here.
//
// Follow, WaitWorkers, Late, Stats, Abandon and Close are safe for
// concurrent use.
type Pool struct {
	cfg Config
	plane
	quit signal // fired by Close
	wg   sync.WaitGroup

	// mu guards the fields below. Lock order: Pool.mu before
	// distributor.mu (doc.go). Never held while an action is carried out.
	mu struct {
		sync.Mutex
		roster roster
		conns  map[connID]*distributor // dialled and not yet ended
		stats  map[string][]*workerStats
		order  []string // worker names in order of first connection
		// sameHost is the delta threads of connected workers on this
		// machine (Config.SameHost).
		sameHost int
	}
	left, failed atomic.Uint64 // workers that left, and that the cluster declared dead
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
	if need := newDeltaCodec(st.Params()).maxBytes(); need > cfg.MaxFrameBytes {
		return nil, fmt.Errorf("distributor: a delta of %d bytes exceeds MaxFrameBytes=%d; raise it", need, cfg.MaxFrameBytes)
	}
	p := &Pool{cfg: cfg}
	p.plane.init(&p.cfg, g, st)
	p.quit.init()
	p.mu.roster = newRoster(cfg.RedialBackoff)
	p.mu.conns = map[connID]*distributor{}
	p.mu.stats = map[string][]*workerStats{}
	p.plane.start()
	return p, nil
}

// step feeds the roster one input and carries out the actions it returns;
// news is logged with the attributes attrs (the membership event's).
// Dials are registered under mu, so that a Close that follows sees them.
func (p *Pool) step(input func(r *roster) []action, attrs ...any) {
	p.mu.Lock()
	acts := input(&p.mu.roster)
	conns := make([]*distributor, len(acts))
	for i, a := range acts {
		if a.kind == actDial {
			conns[i] = newDistributor(p, a, p.statsLocked(a.name, a.addr, a.inc))
			p.mu.conns[a.conn] = conns[i]
		} else {
			conns[i] = p.mu.conns[a.conn]
		}
	}
	p.mu.Unlock()
	var dismissed []*distributor
	var why error
	for i, a := range acts {
		d, log := conns[i], p.cfg.Logger.With("worker", a.name).With(attrs...)
		switch a.kind {
		case actDial:
			if a.wait > 0 {
				d.log.Info("re-dialling the worker", "after", a.wait)
			}
			p.wg.Go(func() {
				t0 := time.Now()
				d.run()
				p.step(func(r *roster) []action { return r.ended(d.id, d.err(), time.Since(t0)) })
				p.mu.Lock()
				delete(p.mu.conns, d.id)
				p.mu.Unlock()
			})
		case actDrop:
			if d != nil {
				d.fail(a.err)
			}
		case actDismiss:
			if d != nil {
				d.ask(a.reason, a.err)
				dismissed, why = append(dismissed, d), a.err
			}
		case actStop:
			if d != nil {
				d.ask(stopReason, errStopped)
			}
		case actRedial:
			p.wg.Go(func() { p.redialAfter(a) })
		case actJoined:
			log.Info("worker joined", "addr", a.addr, "incarnation", a.inc)
		case actIgnored:
			log.Info(a.reason, "incarnation", a.inc)
		case actLeft:
			p.left.Add(1)
			log.Info("worker left the cluster", "incarnation", a.inc)
		case actFailed:
			p.failed.Add(1)
			log.Warn("worker failed", "incarnation", a.inc)
		}
	}
	if len(dismissed) > 0 {
		endWithin(dismissed, dismissWait, why)
	}
}

// redialAfter waits a's back-off, then feeds the roster its end.
func (p *Pool) redialAfter(a action) {
	t := time.NewTimer(a.wait)
	defer t.Stop()
	select {
	case <-t.C:
		p.step(func(r *roster) []action { return r.due(a.name, a.token, a.wait) })
	case <-p.quit.c:
	case <-p.abandoned.c:
	}
}

// endWithin waits at most wait for the connections ds, which were asked
// to stop, to end, then ends those left with err. Their unanswered
// batches go elsewhere, as for any failed connection.
func endWithin(ds []*distributor, wait time.Duration, err error) {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for _, d := range ds {
		select {
		case <-d.failed.c:
		case <-deadline.C:
		}
	}
	for _, d := range ds {
		d.fail(err)
	}
}

// dismissWait bounds how long a dismissal waits for the writers to send
// their stop frames.
const dismissWait = 100 * time.Millisecond

// add connects to the worker called name at data-plane address addr, in
// the background, and keeps it connected (re-dialling after a dropped
// connection) until remove: a Pool without membership, as tests use it. A
// worker already added under that name is left alone. Connection failures
// are logged.
func (p *Pool) add(name, addr string) {
	p.step(func(r *roster) []action { return r.join(name, addr, 0) })
}

// remove drops the connection to the worker called name, if any: its
// unanswered batches go to other workers or are sketched on the main node.
func (p *Pool) remove(name string, reason string) {
	p.step(func(r *roster) []action { acts, _ := r.remove(name, 0, reason); return acts })
}

// workers returns the number of workers past the handshake.
func (p *Pool) workers() int {
	n, _ := p.up.get()
	return n
}

// WaitWorkers blocks until n workers are connected or ctx is done, and
// returns an error wrapping ctx's cause then, naming why workers were
// refused or lost.
func (p *Pool) WaitWorkers(ctx context.Context, n int) error {
	for {
		have, ch := p.up.get()
		if have >= n {
			return nil
		}
		select {
		case <-ch:
		case <-p.quit.c:
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
	for _, d := range p.mu.conns {
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

// Close stops the Pool in the order its doc comment gives: every worker
// is told to stop, the connections close, and batches still unanswered
// are sketched on the main node, so that none is lost. It waits for every
// goroutine the Pool started and is idempotent.
func (p *Pool) Close() error {
	if !p.quit.fired() {
		p.step(func(r *roster) []action { return r.close("", nil) })
	}
	if !p.quit.fire() {
		p.wg.Wait() // another Close is under way
		return nil
	}
	p.wg.Wait()
	p.plane.stop()
	return nil
}

// Abandon stops shipping batches, for a main node that was interrupted:
// every worker is sent a stop frame (so that it exits at once rather than
// when the gossip declares the main node gone), every connection is
// dropped (its unanswered batches are sketched here), and from then on the
// Pool sketches every batch on the main node and connects to no worker. A
// stream reader blocked by back-pressure thus goes on at once, and sees
// its context done. It returns within dismissWait, once every connected
// worker has been told why; it may be called again, and from several
// goroutines at once: every call tells the workers still connected, so
// that one racing the first (Cluster.Close against the context's watch)
// cannot return before they are told, and a Close after it cannot tell
// them "main node done" instead.
func (p *Pool) Abandon() {
	p.abandoned.fire()
	p.step(func(r *roster) []action { return r.close("main node interrupted", errAbandoned) })
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
			case <-p.quit.c:
				return
			case ev := <-m.Events():
				p.apply(ev)
			}
		}
	})
}

// apply feeds the roster one membership event about a worker.
func (p *Pool) apply(ev MemberEvent) {
	if ev.MetaErr != nil {
		p.cfg.Logger.Warn("ignoring a member with unreadable metadata", "worker", ev.Name, "node", ev.Node, "err", ev.MetaErr)
		return
	}
	if ev.Meta.Role != RoleWorker {
		return
	}
	name, inc := ev.Name, ev.Meta.Incarnation
	switch {
	case (ev.Kind == Joined || ev.Kind == Updated) && ev.Meta.Leaving:
		// On its way out: its connection, if any, ends with its
		// goodbye; connecting now would fail.
		p.step(func(r *roster) []action { return r.leaving(name, inc) })
	case ev.Kind == Joined || ev.Kind == Updated:
		p.step(func(r *roster) []action { return r.join(name, ev.Meta.Addr, inc) }, "node", ev.Node, "gossip", ev.Gossip)
	case ev.Kind == Left || ev.Kind == Failed:
		p.step(func(r *roster) []action { return r.depart(name, inc, ev.Kind == Failed) }, "node", ev.Node)
	}
}
