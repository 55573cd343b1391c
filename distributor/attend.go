package distributor

// A worker's life in its cluster (Worker.Attend): serving, joining, the
// watch on its main node, and its way back into the cluster when the
// gossip has declared the main node dead: a main node paused for a few
// seconds (SIGSTOP, a long garbage-collection pause, a VM migration) is
// declared dead like a crashed one, and comes back.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"
)

// AttendConfig configures Worker.Attend. A zero duration takes its
// default.
type AttendConfig struct {
	// Join is the gossip address of the main node, HOST:PORT.
	Join string
	// JoinTimeout bounds the first join; zero means 30 s.
	JoinTimeout time.Duration
	// RejoinTimeout bounds how long the worker serves on and tries to
	// rejoin once the cluster has declared its main node dead; zero
	// means never give up.
	RejoinTimeout time.Duration
	// LeaveTimeout bounds the leave on an interrupt (Membership.Close);
	// zero means 500 ms.
	LeaveTimeout time.Duration
	// Logger receives the worker's cluster events; nil discards them.
	Logger *slog.Logger
}

// ErrJoin wraps Attend's error when the first join did not succeed
// within JoinTimeout.
var ErrJoin = errors.New("distributor: gave up joining")

// MainGoneError is Attend's error when no main node came back within
// RejoinTimeout of the cluster declaring it dead.
type MainGoneError struct {
	Join string        // AttendConfig.Join
	Gone time.Duration // since the cluster declared the main node dead
}

func (e *MainGoneError) Error() string {
	return fmt.Sprintf("the main node at %s has been gone for %v since the cluster declared it dead; gave up rejoining",
		e.Join, e.Gone.Round(time.Millisecond))
}

// Attend serves main-node connections on ln, joins the cluster at
// cfg.Join through m, and serves until the main node sends stop, leaves
// the cluster, stays declared dead for cfg.RejoinTimeout, or ctx is done.
// Then it closes the worker (answering the batches already read, within
// WorkerConfig.ShutdownTimeout) and ends m: with a leave when ctx was
// done (nobody else needs the news), else with a plain Shutdown. It
// returns why it stopped, and an error wrapping ErrJoin, ErrAuth, a
// *MainGoneError, or Serve's, when the worker failed rather than stopped.
// Call it once, from one goroutine, instead of Serve.
func (w *Worker) Attend(ctx context.Context, ln net.Listener, m *Membership, cfg AttendConfig) (string, error) {
	cfg.ensureDefaults()
	leaving := false // m.Close has ended m
	defer func() {
		if !leaving {
			m.Shutdown()
		}
	}()
	serveCtx, stopServe := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- w.Serve(serveCtx, ln) }()
	defer func() { stopServe(); <-served }()

	joinCtx, cancel := context.WithTimeout(ctx, cfg.JoinTimeout)
	err := m.JoinRetry(joinCtx, 500*time.Millisecond, cfg.Join)
	cancel()
	switch {
	case err != nil && ctx.Err() != nil:
		w.Close()
		return "interrupted", nil
	case errors.Is(err, ErrAuth):
		w.Close()
		return "", err
	case err != nil:
		w.Close()
		return "", fmt.Errorf("%w after %v: %w", ErrJoin, cfg.JoinTimeout, err)
	}
	cfg.Logger.Info("joined the cluster", "join", cfg.Join)

	reason, err := w.attend(ctx, m, served, cfg)
	t0 := time.Now()
	w.Close()
	st := w.Stats()
	cfg.Logger.Info("stopped serving", "reason", reason, "duration", time.Since(t0), "batches", st.Batches,
		"updates", st.Updates, "bytes_received", st.BytesReceived, "bytes_sent", st.BytesSent,
		"bad_frames", st.BadFrames)
	if ctx.Err() == nil {
		// The main node is done or gone: nobody needs the news, and
		// gossip with no one left to hear it would wait for the timeout.
		return reason, err
	}
	t0 = time.Now()
	leaving = true
	switch err := m.Close(cfg.LeaveTimeout); {
	case errors.Is(err, ErrLeaving):
		cfg.Logger.Info("exiting with the leave still spreading", "duration", time.Since(t0))
	case err != nil:
		cfg.Logger.Info("the leave did not spread in time", "timeout", cfg.LeaveTimeout, "err", err)
		fallthrough
	default:
		cfg.Logger.Info("left the cluster", "duration", time.Since(t0))
	}
	return reason, nil
}

func (c *AttendConfig) ensureDefaults() {
	if c.JoinTimeout == 0 {
		c.JoinTimeout = 30 * time.Second
	}
	if c.LeaveTimeout == 0 {
		c.LeaveTimeout = 500 * time.Millisecond
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// attend is Attend's watch, once joined: it returns why the worker stops.
func (w *Worker) attend(ctx context.Context, m *Membership, served chan error, cfg AttendConfig) (string, error) {
	quit := make(chan struct{})
	defer close(quit)
	mainEvents := watchMain(m, quit)
	rj := &rejoiner{m: m, join: cfg.Join, log: cfg.Logger}
	defer func() {
		if !rj.wait(100 * time.Millisecond) {
			cfg.Logger.Info("exiting with a rejoin attempt under way")
		}
	}()
	var (
		lost   time.Time // when the main node was declared dead; zero while it is a member
		giveUp <-chan time.Time
	)
	for {
		select {
		case <-ctx.Done():
			return "interrupted", nil
		case <-w.Stopped():
			return "the main node sent stop: " + w.StopReason(), nil
		case ev := <-mainEvents:
			switch {
			case ev == mainLeft:
				return "the main node left the cluster", nil
			case ev == mainFailed && lost.IsZero():
				// Dead or paused: the worker cannot tell. It serves on
				// (a paused main node keeps its connection) and asks
				// to be taken back.
				lost = time.Now()
				cfg.Logger.Warn("the cluster declared the main node dead; serving on and trying to rejoin",
					"join", cfg.Join, "rejoin_timeout", cfg.RejoinTimeout)
				rj.start()
				if cfg.RejoinTimeout > 0 {
					giveUp = time.After(cfg.RejoinTimeout)
				}
			case ev == mainBack && !lost.IsZero():
				rj.stop()
				cfg.Logger.Info("rejoined the cluster", "join", cfg.Join, "duration", time.Since(lost))
				lost, giveUp = time.Time{}, nil
			}
		case <-giveUp:
			return "the main node did not come back", &MainGoneError{Join: cfg.Join, Gone: time.Since(lost)}
		case err := <-served:
			served <- err // for Attend's wait
			return "cannot serve", fmt.Errorf("cannot serve: %w", err)
		}
	}
}

// mainEvent is what a worker learns about its main node from the gossip.
type mainEvent int

const (
	// mainLeft: the main node said it was leaving: it is done.
	mainLeft mainEvent = iota
	// mainFailed: the cluster declared the main node dead.
	mainFailed
	// mainBack: a main node is a member again: the one declared dead
	// has refuted it, or a new main node process joined.
	mainBack
)

// watchMain returns a channel that receives what happens to main nodes
// in the cluster. Its goroutine reads membership events until quit is
// closed; it only reads them while the channel is read or quit is
// closed, so the caller reads it promptly.
func watchMain(m *Membership, quit <-chan struct{}) <-chan mainEvent {
	events := make(chan mainEvent)
	go func() {
		for {
			var ev MemberEvent
			select {
			case <-quit:
				return
			case ev = <-m.Events():
			}
			if ev.Meta.Role != RoleMain {
				continue
			}
			var me mainEvent
			switch ev.Kind {
			case Left:
				me = mainLeft
			case Failed:
				me = mainFailed
			case Joined:
				me = mainBack
			default:
				continue
			}
			select {
			case events <- me:
			case <-quit:
				return
			}
		}
	}()
	return events
}

// Rejoin back-off: the first attempt is made when the main node is
// declared dead, the next firstRejoinWait later, and each next one waits
// twice as long, up to maxRejoinWait. A main node back from a pause is
// usually taken back by the gossip itself within a second or two (it
// refutes its death as soon as it hears of it); the attempts are for a
// main node that the gossip does not reach, such as a new process at the
// same address (a main node resumed from its checkpoint), which the cap
// finds within 10 s. An attempt is one TCP exchange with the main node;
// one every 10 s from each of a fleet's workers costs it nothing.
const (
	firstRejoinWait = 500 * time.Millisecond
	maxRejoinWait   = 10 * time.Second
)

// rejoinWait returns the wait after the attempt numbered attempt (from 0).
func rejoinWait(attempt int) time.Duration {
	d := firstRejoinWait
	for range attempt {
		if d >= maxRejoinWait/2 {
			return maxRejoinWait
		}
		d *= 2
	}
	return d
}

// rejoiner tries to bring a worker back into its main node's cluster
// while the main node is gone. Its methods are called from one goroutine.
type rejoiner struct {
	m    *Membership
	join string
	log  *slog.Logger
	wg   sync.WaitGroup
	// cancel stops the running attempts; nil when none run.
	cancel context.CancelFunc
}

// start makes attempts to join the cluster at r.join, at once and then
// after each rejoinWait, until stop. A Join that reaches the main node
// is not the way back by itself (memberlist keeps a node it declared dead
// until the node refutes it): the main node's return shows as a mainBack
// event. A no-op while attempts run.
func (r *rejoiner) start() {
	if r.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	r.wg.Go(func() {
		for attempt := 0; ; attempt++ {
			// While the main node is paused, its kernel accepts the
			// connection and the attempt waits memberlist's TCP timeout
			// (10 s; 1 s with --gossip-local).
			if _, err := r.m.Join(r.join); err != nil {
				r.log.Info("cannot rejoin the cluster yet; retrying", "attempt", attempt+1,
					"after", rejoinWait(attempt), "err", err)
			}
			t := time.NewTimer(rejoinWait(attempt))
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	})
}

// stop ends the attempts; the one under way, if any, finishes in the
// background (see wait).
func (r *rejoiner) stop() {
	if r.cancel != nil {
		r.cancel()
		r.cancel = nil
	}
}

// wait stops the attempts and waits at most timeout for them to end,
// reporting whether they did. An attempt under way when the worker exits
// may wait memberlist's TCP timeout; the exit does not wait for it.
func (r *rejoiner) wait(timeout time.Duration) bool {
	r.stop()
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// Advertised returns the data-plane address to put in the node metadata:
// the listener's, with an unspecified IP replaced by the local IP that
// routes to the main node.
func Advertised(a *net.TCPAddr, join string) (string, error) {
	if !a.IP.IsUnspecified() {
		return a.String(), nil
	}
	c, err := net.Dial("udp", join) // sends nothing: picks the route
	if err != nil {
		return "", fmt.Errorf("cannot find a local address towards %s: %w", join, err)
	}
	defer c.Close()
	ip := c.LocalAddr().(*net.UDPAddr).IP
	return net.JoinHostPort(ip.String(), fmt.Sprint(a.Port)), nil
}

// CheckDialAddr checks an address a worker advertises for its data
// plane: HOST:PORT with a host that the main node can dial (not
// unspecified) and a port in [1, 65535].
func CheckDialAddr(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil {
		return err
	}
	if host == "" {
		return errors.New("no host")
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Errorf("%s is not an address the main node can dial", host)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q, want [1, 65535]", port)
	}
	return nil
}
