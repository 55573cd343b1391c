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
}

// RunStats is what Run measured.
type RunStats struct {
	// Ingest is the time spent reading and inserting updates, queries
	// excluded.
	Ingest time.Duration
	// EndToEnd runs from the start of ingestion to the end of the final
	// query's flush.
	EndToEnd time.Duration
}

// Run reads src in segments that end at s.At, querying at each barrier:
// the segment's updates are all in the sketches (or the greedy DSU) when
// the query answers, and reading resumes after it without rereading. It
// returns an error saying where it stopped: when ctx is done ("interrupted
// after N of M updates; no answer"), when src fails or ends early, or when
// a query or s.Answer fails.
func (r *Room) Run(ctx context.Context, src stream.Source, s Schedule) (RunStats, error) {
	var st RunStats
	total := src.Header().Updates
	start := time.Now()
	var done uint64
	for qi, pos := range s.At {
		want := pos - done
		t0 := time.Now()
		var n uint64
		var err error
		if qi < len(s.At)-1 {
			n, err = r.IngestN(ctx, src, want)
		} else {
			n, err = r.Ingest(ctx, src)
		}
		st.Ingest += time.Since(t0)
		done += n
		if err != nil {
			if ctx.Err() != nil {
				return st, fmt.Errorf("interrupted after %d of %d updates; no answer", done, total)
			}
			return st, fmt.Errorf("after %d updates: %w", done, err)
		}
		if n != want {
			return st, fmt.Errorf("%s: stream ended after %d updates, header promises %d", s.Name, done, total)
		}
		res, err := r.Query(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return st, fmt.Errorf("interrupted during the query after %d updates; no answer", done)
			}
			return st, fmt.Errorf("query: %w", err)
		}
		if qi == len(s.At)-1 {
			st.EndToEnd = time.Since(start) - res.CC
		}
		if err := s.Answer(res); err != nil {
			return st, err
		}
	}
	return st, nil
}
