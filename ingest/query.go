package ingest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/dsu"
	"sketchcc/gutters"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// maxReplay bounds the updates kept while a background query runs, so the
// greedy DSU can catch up when it ends: 4 Mi updates, 48 MiB. A longer gap
// leaves the greedy shortcut off until the next full query.
const maxReplay = 4 << 20

// PendingQuery is a connected-components query started by StartQuery whose
// flush and Boruvka run in the background while ingestion goes on.
type PendingQuery struct {
	done chan struct{}
	res  *Result
	err  error
	d    *dsu.DSU
}

// Wait blocks until the query is answered and returns its answer, as Query
// does. Safe to call more than once and from any goroutine.
func (q *PendingQuery) Wait() (*Result, error) {
	<-q.done
	return q.res, q.err
}

// StartQuery starts a connected-components query at the current point of
// the stream and returns without waiting for its answer, so the caller can
// go on ingesting: the buffered updates are copied out of the gutters
// (Drain) and sketched by background goroutines, which then run Boruvka.
// Until Boruvka has read the sketches no new batch reaches them (the
// gutters Hold), so the answer is exactly that of the query's point; Ingest
// blocks only if a gutter fills meanwhile. A greedy answer is immediate.
// A previous pending query is waited for first. ctx bounds the wait for
// batches already handed out.
//
// Copying the buffered updates out needs memory: when they exceed half the
// gutters' memory, StartQuery flushes in place and answers before it
// returns, as Query does.
func (e *Engine) StartQuery(ctx context.Context) (*PendingQuery, error) {
	return e.startQuery(ctx, true)
}

func (e *Engine) startQuery(ctx context.Context, background bool) (*PendingQuery, error) {
	if e.closed {
		return nil, gutters.ErrClosed
	}
	if e.pending != nil {
		e.pending.Wait()
		e.finishPending()
	}
	t0 := time.Now()
	after := e.updates.Load()
	q := &PendingQuery{done: make(chan struct{})}
	if e.greedy.valid {
		d := e.greedy.d
		q.res = &Result{
			Components:   d.Sets(),
			Labels:       d.Labels(),
			Forest:       sketch.Forest{Edges: append([]stream.Edge(nil), e.greedy.forest...)},
			AfterUpdates: after,
			Greedy:       true,
		}
		q.res.CC = time.Since(t0)
		close(q.done)
		return q, nil
	}
	buffered := e.gut.Buffered()
	if !background || int64(buffered)*4 > e.gutterBytes/2 {
		// In place: flush (the calling goroutine sketches gutters itself
		// when the queue is full) and run Boruvka here.
		e.pending, e.replay, e.replayOK = q, e.replay[:0], !e.cfg.NoGreedy
		defer close(q.done)
		if err := e.Flush(ctx); err != nil {
			q.err = err
			return q, nil
		}
		t1 := time.Now()
		q.res, q.d, q.err = e.boruvka(max(e.cfg.Workers, runtime.GOMAXPROCS(0)))
		if q.err == nil {
			q.res.AfterUpdates, q.res.Flush, q.res.CC = after, t1.Sub(t0), time.Since(t1)
		}
		return q, nil
	}
	e.drainIDs = slices.Grow(e.drainIDs[:0], int(buffered))
	e.drainIDs, e.drainRuns = e.gut.Drain(e.drainIDs, e.drainRuns[:0])
	release := make(chan struct{})
	e.gut.Hold(release)
	e.pending = q
	e.replay, e.replayOK = e.replay[:0], !e.cfg.NoGreedy
	ids, runs := e.drainIDs, e.drainRuns
	workers := max(e.cfg.Workers, runtime.GOMAXPROCS(0))
	e.qwg.Go(func() {
		defer close(q.done)
		defer close(release)
		e.applyRuns(ids, runs, workers)
		if err := e.st.Wait(ctx); err != nil {
			q.err = fmt.Errorf("ingest: flush: %w", err)
			return
		}
		t1 := time.Now()
		q.res, q.d, q.err = e.boruvka(workers)
		if q.err == nil {
			q.res.AfterUpdates, q.res.Flush, q.res.CC = after, t1.Sub(t0), time.Since(t1)
		}
	})
	return q, nil
}

// boruvka answers from the sketches, which must be up to date.
func (e *Engine) boruvka(workers int) (*Result, *dsu.DSU, error) {
	d := dsu.New(e.cfg.Vertices)
	forest, st, err := sketch.SpanningForestParallel(e.st.Table(), d, workers)
	if err != nil {
		return nil, nil, err
	}
	return &Result{Components: d.Sets(), Labels: d.Labels(), Forest: forest, Boruvka: st}, d, nil
}

// applyRuns sketches the drained gutters on up to workers goroutines.
func (e *Engine) applyRuns(ids []uint32, runs []gutters.Run, workers int) {
	const block = 32
	var next atomic.Int64
	work := func() {
		for {
			lo := int(next.Add(block)) - block
			if lo >= len(runs) {
				return
			}
			for _, r := range runs[lo:min(lo+block, len(runs))] {
				e.st.ApplyNow(r.Vertex, ids[r.Off:r.Off+r.Len])
			}
		}
	}
	var wg sync.WaitGroup
	for range min(workers, (len(runs)+block-1)/block) {
		wg.Go(work)
	}
	wg.Wait()
}

// notePending runs on the ingesting goroutine for every chunk read while a
// background query is pending: it keeps the chunk for the greedy DSU's
// catch-up, and finishes the query if it is done.
func (e *Engine) notePending(us []stream.Update) {
	select {
	case <-e.pending.done:
		e.finishPending()
		return
	default:
	}
	if e.replayOK {
		if len(e.replay)+len(us) > maxReplay {
			e.replayOK = false
			e.replay = e.replay[:0]
		} else {
			e.replay = append(e.replay, us...)
		}
	}
}

// finishPending makes the answer of the finished pending query the greedy
// DSU, caught up with the updates ingested since its point.
func (e *Engine) finishPending() {
	q := e.pending
	if q == nil {
		return
	}
	e.pending = nil
	<-q.done
	if q.err != nil || q.d == nil || !e.replayOK || e.cfg.NoGreedy {
		e.greedy.valid = false
		return
	}
	e.greedy.reset(q.d, q.res.Forest.Edges)
	e.greedy.apply(e.replay)
	e.replay = e.replay[:0]
}
