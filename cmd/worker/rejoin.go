package main

// The worker's watch on its main node, and its way back into the cluster
// when the gossip has declared the main node dead: a main node paused for
// a few seconds (SIGSTOP, a long garbage-collection pause, a VM migration)
// is declared dead like a crashed one, and comes back.

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"sketchcc/distributor"
)

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
func watchMain(m *distributor.Membership, quit <-chan struct{}) <-chan mainEvent {
	events := make(chan mainEvent)
	go func() {
		for {
			var ev distributor.MemberEvent
			select {
			case <-quit:
				return
			case ev = <-m.Events():
			}
			if ev.Meta.Role != distributor.RoleMain {
				continue
			}
			var me mainEvent
			switch ev.Kind {
			case distributor.Left:
				me = mainLeft
			case distributor.Failed:
				me = mainFailed
			case distributor.Joined:
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
	m    *distributor.Membership
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
