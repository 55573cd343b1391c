package cc

import (
	"context"
	"fmt"
	"time"

	"sketchcc/stream"
)

// Schedule says where Run queries and what it does with the answers.
type Schedule struct {
	// At holds the update counts after which to query, sorted and
	// distinct, each in [1, Updates]; the last one must be the stream
	// header's Updates, and Run reads the last segment to the end of the
	// stream, so a source holding more than its header promises reports
	// it (stream.ErrTrailing).
	At []uint64
	// Name names the stream in errors.
	Name string
	// Answer receives every answer, in order, on Run's goroutine; an error
	// it returns stops Run.
	Answer func(*Result) error
	// KAnswer, when set, makes every query a k-forest query
	// (Room.KForests): it receives each KResult, on Run's goroutine, after
	// Answer has received its CC part; an error it returns stops Run.
	KAnswer func(*KResult) error
	// From is the number of updates the Room holds already (a run resumed
	// by Room.Restore); src must start right after them. Positions of At
	// not past From were answered before and are skipped.
	From uint64
	// Checkpoint, when set, is called on Run's goroutine at a barrier
	// (Room.Barrier: the gutters flushed and every batch applied) every
	// CheckpointEvery of ingestion, and once more when ctx is done during
	// ingestion, so that a stopped run can resume; an error it returns
	// stops Run. The barrier at a stop is bounded by StopTimeout.
	Checkpoint      func(ctx context.Context, st State) error
	CheckpointEvery time.Duration
	// StopTimeout bounds the barrier and checkpoint after ctx is done.
	// Zero means 30 s.
	StopTimeout time.Duration
}

// checkpointStep is the number of updates ingested between two looks at
// the checkpoint clock: 64 Ki updates take a few milliseconds. Tests
// lower it.
var checkpointStep uint64 = 1 << 16

// RunStats is what Run measured.
type RunStats struct {
	// Ingest is the time spent reading and inserting updates, queries
	// excluded.
	Ingest time.Duration
	// EndToEnd runs from the start of ingestion to the end of the final
	// query's flush.
	EndToEnd time.Duration
	// Checkpoints counts the checkpoints taken, and Checkpointing is the
	// time they took, barrier included (not in Ingest).
	Checkpoints   int
	Checkpointing time.Duration
}

// Run reads src in segments that end at s.At, querying at each barrier:
// the segment's updates are all in the sketches (or the greedy DSU) when
// the query answers, and reading resumes after it without rereading. It
// returns an error saying where it stopped: when ctx is done ("interrupted
// after N of M updates; no answer", after a last checkpoint when
// s.Checkpoint is set), when src fails or ends early, or when a query,
// s.Answer or s.Checkpoint fails. A Run with s.From > 0 continues a Room
// restored at that count; src then starts at update s.From + 1.
//
// With more than one query in s.At, a Room that has read nothing yet keeps
// the greedy shortcut from the first update (the empty graph's answer is
// known: every vertex alone), so that no query flushes the gutters or runs
// Boruvka over all vertices; with one query it is not kept, and the final
// query flushes.
func (r *Room) Run(ctx context.Context, src stream.Source, s Schedule) (RunStats, error) {
	var st RunStats
	if len(s.At) > 1 {
		r.greedyFromStart()
	}
	total := src.Header().Updates
	start := time.Now()
	done := s.From
	last := time.Now()
	for qi, pos := range s.At {
		if pos <= done && qi < len(s.At)-1 {
			continue
		}
		want := pos - min(pos, done)
		t0 := time.Now()
		var n uint64
		var err error
		final := qi == len(s.At)-1
		for {
			step := want - n
			chunked := s.Checkpoint != nil && s.CheckpointEvery > 0 && step > checkpointStep
			var k uint64
			if final && !chunked {
				// The last segment reads to the end, so that a source
				// holding more than its header promises reports it.
				k, err = r.Ingest(ctx, src)
				n += k
				break
			}
			if chunked {
				step = checkpointStep
			}
			k, err = r.IngestN(ctx, src, step)
			n += k
			if err != nil || k < step || n >= want {
				break
			}
			if chunked && time.Since(last) >= s.CheckpointEvery {
				st.Ingest += time.Since(t0)
				if err = r.checkpoint(ctx, s, &st); err != nil {
					if ctx.Err() == nil {
						return st, err
					}
					break // stopped during the barrier: the stop checkpoint below takes over
				}
				last, t0 = time.Now(), time.Now()
			}
		}
		st.Ingest += time.Since(t0)
		done += n
		if err != nil {
			if ctx.Err() != nil {
				if s.Checkpoint != nil {
					if cerr := r.stopCheckpoint(ctx, s, &st); cerr != nil {
						return st, fmt.Errorf("interrupted after %d of %d updates; no answer; %w", done, total, cerr)
					}
					return st, fmt.Errorf("interrupted after %d of %d updates; no answer; checkpoint taken", done, total)
				}
				return st, fmt.Errorf("interrupted after %d of %d updates; no answer", done, total)
			}
			return st, fmt.Errorf("after %s: %w", stream.UpdateCount(done), err)
		}
		if n != want {
			return st, fmt.Errorf("%s: stream ended after %s, header promises %d", s.Name, stream.UpdateCount(done), total)
		}
		res, kres, err := r.scheduledQuery(ctx, s)
		if err != nil {
			if ctx.Err() != nil {
				return st, fmt.Errorf("interrupted during the query after %s; no answer", stream.UpdateCount(done))
			}
			return st, fmt.Errorf("query: %w", err)
		}
		if final {
			st.EndToEnd = time.Since(start) - res.CC
			if kres != nil {
				st.EndToEnd -= kres.Extract + kres.Restore
			}
		}
		if err := s.Answer(res); err != nil {
			return st, err
		}
		if kres != nil {
			if err := s.KAnswer(kres); err != nil {
				return st, err
			}
		}
	}
	return st, nil
}

// scheduledQuery runs Query, or KForests when s.KAnswer is set.
func (r *Room) scheduledQuery(ctx context.Context, s Schedule) (*Result, *KResult, error) {
	if s.KAnswer == nil {
		res, err := r.Query(ctx)
		return res, nil, err
	}
	kres, err := r.KForests(ctx)
	if err != nil {
		return nil, nil, err
	}
	return kres.CC, kres, nil
}

// checkpoint takes a barrier and hands its state to s.Checkpoint.
func (r *Room) checkpoint(ctx context.Context, s Schedule, st *RunStats) error {
	t0 := time.Now()
	state, err := r.Barrier(ctx)
	if err == nil {
		err = s.Checkpoint(ctx, state)
	}
	st.Checkpointing += time.Since(t0)
	if err != nil {
		return fmt.Errorf("checkpoint after %s: %w", stream.UpdateCount(r.updates), err)
	}
	st.Checkpoints++
	return nil
}

// stopCheckpoint takes the checkpoint of a run whose ctx is done, within
// s.StopTimeout.
func (r *Room) stopCheckpoint(ctx context.Context, s Schedule, st *RunStats) error {
	d := s.StopTimeout
	if d <= 0 {
		d = 30 * time.Second
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	defer cancel()
	return r.checkpoint(cctx, s, st)
}
