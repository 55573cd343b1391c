package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"sketchcc/cc"
	"sketchcc/checkpoint"
	"sketchcc/internal/cli"
	"sketchcc/internal/cputime"
	"sketchcc/stream"
)

// queryRecord is one query of the run, as --json prints it.
type queryRecord struct {
	AfterUpdates uint64  `json:"after_updates"`
	Components   int     `json:"components"`
	Greedy       bool    `json:"greedy"`
	FlushSeconds float64 `json:"flush_seconds"`
	CCSeconds    float64 `json:"cc_seconds"`
	// ApplySeconds is the part of CCSeconds spent sketching the re-opened
	// components' buffered updates into the sketches.
	ApplySeconds  float64 `json:"apply_seconds"`
	TotalSeconds  float64 `json:"total_seconds"`
	BoruvkaRounds int     `json:"boruvka_rounds"`
	BoruvkaMerges int     `json:"boruvka_merges"`
	BoruvkaFails  int     `json:"boruvka_fails"`
	// BoruvkaVertices is the number of vertices in the components the
	// query re-opened (all vertices when it reused no answer);
	// BoruvkaReads the vertex sketches it read.
	BoruvkaVertices int           `json:"boruvka_vertices"`
	BoruvkaReads    int           `json:"boruvka_reads"`
	Points          []pointAnswer `json:"point_queries,omitempty"`
}

type pointAnswer struct {
	U         uint32 `json:"u"`
	V         uint32 `json:"v"`
	Connected bool   `json:"connected"`
}

// runResult is what the ingest-and-query loop measured.
type runResult struct {
	queries []queryRecord
	final   *cc.Result
	cc.RunStats
	in    input             // what it read: with --resume, where from and the prefix check's time
	taker *checkpoint.Taker // the checkpoints' writer: their size and write time
	// cpu is the main process's CPU per update by stage, with --json.
	cpu *cputime.Stages
	// cores is GOMAXPROCS as the last query ended (--cores).
	cores int
}

// queryPositions returns the update counts after which to query
// (cc.Positions): --query-at's, or --queries evenly spaced ones, and always
// the end. It warns about every position it drops or merges.
func queryPositions(c config, total uint64, log *slog.Logger) []uint64 {
	pos, skipped := cc.Positions(c.queryAt, c.queries, total)
	for _, s := range skipped {
		switch s.Why {
		case cc.SkipRepeated:
			log.Warn("--query-at: position given more than once; querying once", "position", s.Position)
		case cc.SkipZero:
			log.Warn("--query-at: no query after 0 updates")
		case cc.SkipPastEnd:
			log.Warn("--query-at: position past the end of the stream; the final query answers for the end",
				"position", s.Position, "updates", total)
		case cc.SkipNoUpdates:
			log.Warn("--queries: the stream has no updates; one query answers for its isolated vertices", "queries", c.queries)
		case cc.SkipCrowded:
			log.Warn("--queries exceeds the updates; querying after every update", "queries", c.queries, "updates", total)
		}
	}
	return pos
}

// ingestAndQuery runs the query schedule (cc.Room.Run) at the query
// positions, paced by --rate-limit, and records every answer, with those
// of --point-queries. Labels and forest files are written
// at every query when there are several (named FILE.<updates>), and as
// FILE for the final one; observe is called with every query's record. A
// query that runs out of sketch columns (cc.ErrTooManyRounds) names the
// flag that gives more.
func ingestAndQuery(ctx context.Context, c config, room *cc.Room, src stream.Source, sched cc.Schedule,
	observe func(queryRecord), log *slog.Logger) (*runResult, error) {
	total := src.Header().Updates
	var points []cc.Pair
	if c.pointQueries != "" {
		var err error
		if points, err = cc.ReadPairsFile(c.pointQueries, src.Header().Vertices); err != nil {
			return nil, err
		}
	}
	if c.checkpoint.rate > 0 {
		src = stream.Throttle(src, c.checkpoint.rate)
	}
	positions := queryPositions(c, total, log)
	run := &runResult{}
	answer := func(res *cc.Result) error {
		rec := queryRecord{
			AfterUpdates: res.AfterUpdates, Components: res.Components, Greedy: res.Greedy,
			FlushSeconds: res.Flush.Seconds(), CCSeconds: res.CC.Seconds(), ApplySeconds: res.Apply.Seconds(),
			TotalSeconds:  (res.Flush + res.CC).Seconds(),
			BoruvkaRounds: res.Boruvka.Rounds, BoruvkaMerges: res.Boruvka.Merges, BoruvkaFails: res.Boruvka.Fails,
			BoruvkaVertices: res.Boruvka.Vertices, BoruvkaReads: res.Boruvka.Reads,
		}
		for _, pq := range points {
			rec.Points = append(rec.Points, pointAnswer{pq.U, pq.V, res.Connected(pq)})
		}
		run.queries = append(run.queries, rec)
		observe(rec)
		log.Info("query", "updates", res.AfterUpdates, "components", res.Components, "greedy", res.Greedy,
			"flush", res.Flush, "cc", res.CC, "round", res.Boruvka.Rounds)
		if len(positions) > 1 && res.AfterUpdates != total {
			if err := writeOutputs(c, res, "."+strconv.FormatUint(res.AfterUpdates, 10)); err != nil {
				return err
			}
		}
		if res.AfterUpdates == total {
			run.final = res
			return writeOutputs(c, res, "")
		}
		return nil
	}
	sched.At, sched.Answer = positions, answer
	st, err := room.Run(ctx, src, sched)
	if errors.Is(err, cc.ErrTooManyRounds) {
		err = fmt.Errorf("%w; rerun with a larger --sketch-factor", err)
	}
	if err != nil {
		return nil, err
	}
	run.RunStats = st
	return run, nil
}

// kconnErrors returns the problems of the k-connectivity flags: K out of
// range, an output without K >= 2 or where it cannot be written.
func kconnErrors(k cli.KConn) []error {
	errs := []error{cli.CheckWritable("--k-out", k.Out), cli.CheckWritable("--bridges", k.Bridges),
		cli.CheckWritable("--min-cut", k.MinCut), cli.CheckWritable("--forests", k.Forests)}
	switch {
	case k.K < 1:
		errs = append(errs, fmt.Errorf("--k-connectivity=%d, want at least 1", k.K))
	case k.K == 1 && k.Out+k.Bridges+k.MinCut+k.Forests != "":
		errs = append(errs, errors.New("--k-out, --bridges, --min-cut and --forests need --k-connectivity of at least 2"))
	}
	return errs
}
