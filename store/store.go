// Package store holds the main node's sketches and is the one place where
// a batch is applied to them or a delta merged into them.
//
// # Exactly once
//
// The sketches are linear over GF(2): a batch applied twice, or a delta
// merged twice, cancels itself and silently loses its updates. So every
// batch that leaves the gutters carries a Ticket that the Store issued
// (Queue), and the Store retires each ticket exactly once, by Apply (the
// batch sketched here) or by MergeWith (its delta computed elsewhere).
// Apply or MergeWith with a ticket that is not outstanding (never issued,
// or already retired) changes no sketch and returns an error wrapping
// ErrTicket; the Store also remembers the first such error and Wait
// returns it, so a miscount fails the next query instead of hanging it. A batch that never
// leaves its flushing goroutine is applied by ApplyNow, which queues and
// retires it in one step.
//
// Wait blocks until every batch queued before it was called has been
// retired: after a flush of the gutters, the sketches then hold every
// update inserted so far.
//
// # Goroutines
//
// Queue, Apply, ApplyNow, MergeWith and Wait are safe for
// concurrent use: any number of inserting goroutines may queue, and any number of
// local delta workers and remote-delta readers may apply and merge, each
// under the vertex's lock, so two batches of one vertex never race. The
// Store starts no goroutine. Table and Columns may be read (a query) only
// while no batch is being applied: after Wait, while nobody queues.
//
// # Out of core
//
// A Store from OpenDisk keeps its sketches in a file, one vertex range
// resident, and spills the batches and merged deltas of the others to
// disk (DiskConfig); Table is then nil and a query reads Columns. An I/O
// error is returned by the Apply or MergeWith that met it and, like
// ErrTicket, remembered and returned by every later Wait, so that no query
// answers without the batches it lost.
package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"sketchcc/sketch"
)

// ErrTicket is wrapped by Apply and MergeWith for a ticket that is not
// outstanding: a batch applied twice, or a delta for an unknown batch.
var ErrTicket = errors.New("store: batch not outstanding")

// Ticket names one batch handed out by the gutters, from Queue until
// Apply or MergeWith retires it. The zero Ticket is never issued.
type Ticket = uint64

// Store is the main node's sketch table with its per-vertex locks and the
// ledger of outstanding batches (see the package doc).
type Store struct {
	p     sketch.Params
	table *sketch.Table // nil out of core
	disk  *disk         // nil in memory
	locks []sync.Mutex  // by vertex: held while its sketch is written

	mu struct {
		sync.Mutex
		out    map[Ticket]uint32 // outstanding tickets and their batches' vertices
		next   Ticket            // last ticket issued
		broken error             // the first ErrTicket or I/O error, returned by Wait
		// wake is closed, and cleared, when applied grows or broken is
		// set: every Wait blocked on it wakes and looks again. It is nil
		// while nobody waits.
		wake chan struct{}
	}
	queued, applied atomic.Uint64
}

// From returns a Store that owns t (a table read from a checkpoint): the
// caller must not use t afterwards.
func From(t *sketch.Table) *Store {
	p := t.Params()
	s := &Store{p: p, table: t, locks: make([]sync.Mutex, p.Vertices())}
	s.mu.out = make(map[Ticket]uint32)
	return s
}

// Toggle XORs the edges {v, u}, u in neighbors, into v's sketch under
// v's lock, outside the ledger: a k-forest query deletes a forest's edges
// with it, and puts them back with a second call. Nobody may apply or
// merge meanwhile (the query holds the pipeline flushed).
func (s *Store) Toggle(v uint32, neighbors []uint32) { _ = s.apply(v, neighbors) } // an I/O error is remembered for Wait

// Params returns the sketch parameters.
func (s *Store) Params() sketch.Params { return s.p }

// Table returns the sketches, for a query to read (see the package doc for
// when that is safe), or nil out of core. The caller must not write them.
func (s *Store) Table() *sketch.Table { return s.table }

// Columns returns sketches that hold column c, for a query to read (see
// the package doc for when that is safe): the table in memory; out of
// core, the columns from c on that fit in the resident memory, read from
// the file after every spilled batch is applied, valid until the next call
// or the next batch applied. It returns the I/O error of that, naming the
// file, or the one Wait would return.
func (s *Store) Columns(c int) (*sketch.Columns, error) {
	if s.disk == nil {
		return s.table.Columns(), nil
	}
	if err := s.failed(); err != nil {
		return nil, err
	}
	cols, err := s.disk.columns(c)
	if err != nil {
		s.fail(err)
	}
	return cols, err
}

// OutOfCore reports whether the sketches live on disk (OpenDisk), and
// their I/O counters if so.
func (s *Store) OutOfCore() (DiskStats, bool) {
	if s.disk == nil {
		return DiskStats{}, false
	}
	return s.disk.stats(), true
}

// Close removes a disk-backed store's files and frees its buffers,
// returning the first error of that; in memory it does nothing. Nobody
// may use the Store afterwards.
func (s *Store) Close() error {
	if s.disk == nil {
		return nil
	}
	return s.disk.close()
}

// AdviseHugePages asks the kernel for transparent huge pages for the
// sketches and reports whether it accepted; see sketch.Table. Out of core
// it does not ask.
func (s *Store) AdviseHugePages() bool { return s.table != nil && s.table.AdviseHugePages() }

// Queue registers a batch for vertex v as handed out and returns its
// ticket, which travels with the batch until Apply or MergeWith retires it.
func (s *Store) Queue(v uint32) Ticket {
	s.mu.Lock()
	s.mu.next++
	t := s.mu.next
	s.mu.out[t] = v
	s.mu.Unlock()
	s.queued.Add(1)
	return t
}

// retire removes ticket t of a batch for v from the ledger, or returns an
// error wrapping ErrTicket (and remembers the first one) when t is not
// outstanding or was issued for another vertex.
func (s *Store) retire(t Ticket, v uint32, op string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.mu.out[t]
	var err error
	switch {
	case !ok && t > 0 && t <= s.mu.next:
		err = fmt.Errorf("%w: %s of batch %d for vertex %d: the batch was applied already", ErrTicket, op, t, v)
	case !ok:
		err = fmt.Errorf("%w: %s of batch %d for vertex %d: no such batch was queued", ErrTicket, op, t, v)
	case w != v:
		err = fmt.Errorf("%w: %s of batch %d for vertex %d: the batch is for vertex %d", ErrTicket, op, t, v, w)
	default:
		delete(s.mu.out, t)
		return nil
	}
	s.failLocked(err)
	return err
}

// fail remembers err, if it is the first, for Wait to return.
func (s *Store) fail(err error) {
	s.mu.Lock()
	s.failLocked(err)
	s.mu.Unlock()
}

func (s *Store) failLocked(err error) {
	if s.mu.broken == nil {
		s.mu.broken = err
		s.wakeLocked()
	}
}

// failed returns the error Wait would return.
func (s *Store) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.broken
}

// Apply sketches the edges {v, u}, u in neighbors, into v's sketch and
// retires ticket t. It returns an error wrapping ErrTicket, and changes
// nothing, when t is not an outstanding ticket for v.
func (s *Store) Apply(t Ticket, v uint32, neighbors []uint32) error {
	if err := s.retire(t, v, "apply"); err != nil {
		return err
	}
	err := s.apply(v, neighbors)
	s.done()
	return err
}

// ApplyNow sketches a batch that was never queued (a flush sketching a
// gutter in place): it counts as queued and applied at once. Out of core,
// an I/O error is remembered for Wait.
func (s *Store) ApplyNow(v uint32, neighbors []uint32) {
	s.queued.Add(1)
	_ = s.apply(v, neighbors) // remembered for Wait
	s.done()
}

// MergeWith retires ticket t and calls merge with v's sketch
// (BucketsPerVertex buckets) under v's lock, for a caller that XORs a
// delta in its own form (a remote delta straight from its frame, only its
// non-zero buckets). merge must XOR in the delta that sketch.Params.Delta
// computes for t's batch, and nothing else. It returns an error wrapping
// ErrTicket, and does not call merge, when t is not an outstanding ticket
// for v. Out of core, when v's range is not resident, merge is called with
// a zeroed sketch instead and the delta's non-zero buckets are spilled,
// to be XORed into v's sketch when its range comes in; an I/O error of
// that is returned and remembered for Wait.
func (s *Store) MergeWith(t Ticket, v uint32, merge func(sketch []sketch.Bucket)) error {
	if err := s.retire(t, v, "merge"); err != nil {
		return err
	}
	var err error
	l := &s.locks[v]
	if s.disk != nil {
		if err = s.disk.merge(v, merge, l); err != nil {
			s.fail(err)
		}
	} else {
		l.Lock()
		merge(s.table.Sketch(v))
		l.Unlock()
	}
	s.done()
	return err
}

// apply sketches a batch into v's sketch under v's lock; out of core it
// may spill it instead, and remembers an I/O error for Wait.
func (s *Store) apply(v uint32, neighbors []uint32) error {
	l := &s.locks[v]
	if s.disk != nil {
		err := s.disk.apply(v, neighbors, l)
		if err != nil {
			s.fail(err)
		}
		return err
	}
	l.Lock()
	s.table.ApplyBatch(v, neighbors)
	l.Unlock()
	return nil
}

// done counts one batch as applied and wakes every Wait.
func (s *Store) done() {
	s.applied.Add(1)
	s.mu.Lock()
	s.wakeLocked()
	s.mu.Unlock()
}

// wakeLocked wakes every Wait blocked on s.mu.wake.
func (s *Store) wakeLocked() {
	if s.mu.wake != nil {
		close(s.mu.wake)
		s.mu.wake = nil
	}
}

// Wait blocks until every batch queued before the call has been applied
// or merged. It returns the first ErrTicket or I/O error the Store met, or, when
// ctx is done first, an error wrapping ctx's cause with the number of
// batches still out.
func (s *Store) Wait(ctx context.Context) error {
	target := s.queued.Load()
	for {
		wake, err := s.waitFor(target)
		if wake == nil {
			return err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("store: %d of %d batches not applied: %w",
				target-min(target, s.applied.Load()), target, context.Cause(ctx))
		}
	}
}

// waitFor returns a nil channel and the first ErrTicket error once target
// batches are applied or an ErrTicket was met, and otherwise the channel
// that the next batch applied closes. It reads applied under s.mu, which
// done takes after adding to it, so no batch applied after the read goes
// unnoticed.
func (s *Store) waitFor(target uint64) (<-chan struct{}, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.broken != nil || s.applied.Load() >= target {
		return nil, s.mu.broken
	}
	if s.mu.wake == nil {
		s.mu.wake = make(chan struct{})
	}
	return s.mu.wake, nil
}
