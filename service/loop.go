// Package service runs a main node as a service over a live stream: one
// goroutine (Run) ingests the stream and takes queries at barriers between
// chunks of records, exactly as a scheduled query is taken, and an HTTP
// API (Serve) hands it the questions of its clients:
//
//	producers ──records──▶ ingest.Live ──Read──▶ Run: Room.IngestN … barrier … Room.Query
//	HTTP clients ──Ask──▶ a round (every request waiting for the next barrier) ◀── Answer
//
// Requests that arrive while a query runs wait for the next barrier and
// share its one query: a burst of N requests costs one or two queries,
// not N. Every Answer names its Position, the number of updates applied
// when it was taken, and how many of each producer's records those were
// (ingest.ProducerCount), so that a client can check it: the answer is
// exact for the graph of exactly those records.
package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/cc"
	"sketchcc/ingest"
	"sketchcc/stream"
)

// ErrStopped is the error of a question asked after the service stopped
// answering.
var ErrStopped = errors.New("service: stopped")

// Answer is one query's answer. It is never modified once published and
// may be read from any goroutine.
type Answer struct {
	// Position is the number of updates applied when the query was taken:
	// the answer is exact for the stream's first Position updates.
	Position uint64
	// Producers says how many records of each producer those were.
	Producers []ingest.ProducerCount
	// Result is the query's answer (labels, forest, timings).
	Result *cc.Result
	// Taken is when the query ended.
	Taken time.Time
}

// round is the set of questions waiting for one barrier.
type round struct {
	done chan struct{}
	ans  *Answer
	err  error
}

// Service ingests a live stream and answers questions at its barriers.
// Ask, Shutdown and Status are safe for concurrent use; Run runs once.
type Service struct {
	room    *cc.Room
	src     *ingest.Live
	timing  Timing
	mu      sync.Mutex
	next    *round // the round the next barrier answers; nil when none waits
	closed  bool   // no more rounds: Run has answered its last
	last    atomic.Pointer[Answer]
	stop    chan struct{} // closed by Shutdown
	once    sync.Once
	applied atomic.Uint64 // updates read through the Room
	start   time.Time
	queries atomic.Uint64 // queries taken for questions
}

// Timing sets a Service's pace.
type Timing struct {
	// StopTimeout bounds the last query after a stop. Zero means 30 s.
	StopTimeout time.Duration
	// QueryGap is the least time between the starts of two queries taken
	// for questions: questions arriving sooner wait for it, and share one
	// query, while ingestion goes on. It trades answer latency for
	// ingestion under many questions. Zero means none.
	QueryGap time.Duration
}

// New returns a Service over room, which must have read nothing yet, and
// src, whose every update must reach room through Run.
func New(room *cc.Room, src *ingest.Live, t Timing) *Service {
	if t.StopTimeout <= 0 {
		t.StopTimeout = 30 * time.Second
	}
	return &Service{room: room, src: src, timing: t, stop: make(chan struct{}), start: time.Now()}
}

// Run ingests src until its producers have all closed (ingest.LiveConfig.
// Producers), ctx is done or Shutdown is called, answering every round of
// questions at the barrier after it arrived. Then it stops src, takes a
// last query at the final barrier, answers every question still waiting
// with it, and returns it with the time spent ingesting. A query that
// fails answers its round with the error and Run goes on; a failing
// producer that ends the stream (standard input) ends Run with its error
// (the questions waiting get ErrStopped).
func (s *Service) Run(ctx context.Context) (*Answer, cc.RunStats, error) {
	var st cc.RunStats
	s.room.StartGreedy()
	defer context.AfterFunc(ctx, s.src.Stop)()
	t0 := time.Now()
	var lastQuery time.Time
	rewake := false // a Wake is due at the end of the query gap
	for {
		ti := time.Now()
		k, err := s.room.Ingest(ctx, s.src)
		st.Ingest += time.Since(ti)
		s.applied.Add(k)
		stopping := ctx.Err() != nil || s.stopped() || s.src.Ended()
		if err != nil && !stopping {
			s.src.Stop()
			s.finish(nil, ErrStopped, true)
			return nil, st, err
		}
		if stopping {
			s.src.Stop()
			qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timing.StopTimeout)
			ans, err := s.query(qctx)
			cancel()
			st.EndToEnd = time.Since(t0)
			s.finish(ans, err, true)
			return ans, st, err
		}
		if !s.waiting() {
			continue
		}
		if wait := s.timing.QueryGap - time.Since(lastQuery); wait > 0 {
			if !rewake {
				rewake = true
				time.AfterFunc(wait, func() { s.src.Wake() })
			}
			continue
		}
		rewake, lastQuery = false, time.Now()
		ans, err := s.query(ctx)
		s.finish(ans, err, false)
	}
}

// waiting reports whether a round waits for a barrier.
func (s *Service) waiting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next != nil
}

// query answers for the updates read so far: the last answer again when
// nothing was read since, else a Room query at this barrier.
func (s *Service) query(ctx context.Context) (*Answer, error) {
	if a := s.last.Load(); a != nil && a.Position == s.applied.Load() {
		return a, nil
	}
	res, err := s.room.Query(ctx)
	if err != nil {
		return nil, fmt.Errorf("service: query after %s: %w", stream.UpdateCount(s.applied.Load()), err)
	}
	s.queries.Add(1)
	a := &Answer{Position: res.AfterUpdates, Producers: s.src.Counts(), Result: res, Taken: time.Now()}
	s.last.Store(a)
	return a, nil
}

// finish answers the waiting round; last closes the service to new ones.
func (s *Service) finish(a *Answer, err error, last bool) {
	s.mu.Lock()
	r := s.next
	s.next = nil
	s.closed = s.closed || last
	s.mu.Unlock()
	if r != nil {
		r.ans, r.err = a, err
		close(r.done)
	}
}

// Ask waits for the answer taken at the next barrier (with the questions
// that arrive with it) and returns it; once Run has taken its last
// answer, Ask returns that one. It returns ErrStopped when Run ended
// without one, a query's error, or ctx's error when ctx ends first (the
// query still runs, for the others).
func (s *Service) Ask(ctx context.Context) (*Answer, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		if a := s.last.Load(); a != nil {
			return a, nil // the stream has ended: its last answer stays exact
		}
		return nil, ErrStopped
	}
	if s.next == nil {
		s.next = &round{done: make(chan struct{})}
	}
	r := s.next
	s.mu.Unlock()
	s.src.Wake()
	select {
	case <-r.done:
		return r.ans, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Shutdown asks Run to stop at the next barrier, answer what waits, and
// return. It is idempotent and returns at once.
func (s *Service) Shutdown() {
	s.once.Do(func() { close(s.stop) })
	s.src.Wake()
}

func (s *Service) stopped() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

// Status is what the service has done so far.
type Status struct {
	// Vertices is the stream's vertex count: ids are in [0, Vertices).
	Vertices uint32 `json:"vertices"`
	// Updates is the number of updates read into the sketches.
	Updates uint64 `json:"updates"`
	// UpdatesPerSecond is Updates over the time since New.
	UpdatesPerSecond float64 `json:"updates_per_second"`
	// LastPosition is the Position of the last answer (0: none yet).
	LastPosition uint64 `json:"last_position"`
	// Queries counts the queries taken for questions.
	Queries uint64 `json:"queries"`
	// Producers is what was applied of each producer so far.
	Producers []ingest.ProducerCount `json:"producers"`
	// Stopping is true once Shutdown was called.
	Stopping bool `json:"stopping"`
}

// Status returns what the service has done so far; its counts move on
// while ingestion runs (an answer's own counts are exact, these are not).
func (s *Service) Status() Status {
	st := Status{Vertices: s.src.Header().Vertices, Updates: s.src.Updates(), Queries: s.queries.Load(), Producers: s.src.Counts(),
		Stopping: s.stopped()}
	st.UpdatesPerSecond = float64(st.Updates) / time.Since(s.start).Seconds()
	if a := s.last.Load(); a != nil {
		st.LastPosition = a.Position
	}
	return st
}
