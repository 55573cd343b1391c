package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"sketchcc/cc"
	"sketchcc/checkpoint"
	"sketchcc/ingest"
	"sketchcc/stream"

	"sketchcc/internal/cli"
)

// checkpointConfig holds the flags of checkpoint and resume.
type checkpointConfig struct {
	dir    string        // --checkpoint-dir
	every  time.Duration // --checkpoint-every
	resume string        // --resume
	rate   float64       // --rate-limit, updates per second (0: none)
	// changed records which sketch flags the user set, so that a resume
	// compares only those with the checkpoint.
	seedSet, factorSet, batchSet bool
}

func addCheckpointFlags(fs *pflag.FlagSet, c *checkpointConfig) {
	fs.StringVar(&c.dir, "checkpoint-dir", "", "write a checkpoint (sketches, stream offset, greedy forest, parameters) to DIR/"+checkpoint.FileName+" every --checkpoint-every and on SIGTERM or SIGINT; DIR is made if missing")
	fs.DurationVar(&c.every, "checkpoint-every", 0, "interval between checkpoints, taken at a barrier (gutters flushed, every batch applied); 0: only on SIGTERM or SIGINT")
	fs.StringVar(&c.resume, "resume", "", "continue the run checkpointed in DIR on the same --stream (binary); checkpoints go on into DIR unless --checkpoint-dir says otherwise")
	fs.Float64Var(&c.rate, "rate-limit", 0, "read at most this many updates per second (0: no limit); for tests and soak runs that need a slow stream")
}

func (c *checkpointConfig) validate(fs *pflag.FlagSet, format string) []error {
	c.seedSet, c.factorSet, c.batchSet = fs.Changed("seed"), fs.Changed("sketch-factor"), fs.Changed("batch-factor")
	var errs []error
	dirFlag := "--checkpoint-dir"
	if c.resume != "" {
		if fi, err := os.Stat(c.resume); err != nil {
			errs = append(errs, fmt.Errorf("--resume=%s: %w", c.resume, errors.Unwrap(err)))
		} else if !fi.IsDir() {
			errs = append(errs, fmt.Errorf("--resume=%s: not a directory", c.resume))
		}
		if c.dir == "" {
			c.dir, dirFlag = c.resume, ""
		}
	}
	if c.every < 0 {
		errs = append(errs, fmt.Errorf("--checkpoint-every=%v, want >= 0", c.every))
	}
	if c.every > 0 && c.dir == "" {
		errs = append(errs, errors.New("--checkpoint-every needs --checkpoint-dir"))
	}
	if c.dir != "" && dirFlag != "" {
		// A directory that does not exist yet is made, as for any output.
		if fi, err := os.Stat(c.dir); err == nil && !fi.IsDir() {
			errs = append(errs, fmt.Errorf("--checkpoint-dir=%s: not a directory", c.dir))
		} else if err != nil {
			if err := os.MkdirAll(c.dir, 0o755); err != nil {
				errs = append(errs, fmt.Errorf("--checkpoint-dir=%s: cannot make it: %w", c.dir, errors.Unwrap(err)))
			}
		}
	}
	if (c.dir != "" || c.resume != "") && format != "binary" {
		errs = append(errs, fmt.Errorf("--checkpoint-dir and --resume need a binary stream, not --format=%s", format))
	}
	if c.rate < 0 {
		errs = append(errs, fmt.Errorf("--rate-limit=%v, want >= 0", c.rate))
	}
	return errs
}

// readResume reads the checkpoint of --resume (checkpoint.ReadResume),
// comparing with it only the sketch flags the user set; with --sketch-dir
// it leaves the sketches for the store to read, on disk if they do not fit.
func readResume(c config, id checkpoint.StreamID) (*checkpoint.Resume, error) {
	want := checkpoint.Params{Stream: id, Sets: c.kconn.K}
	if c.checkpoint.seedSet {
		want.Seed = c.engine.Seed
	}
	if c.checkpoint.factorSet {
		want.SketchFactor = c.engine.SketchFactor
	}
	r, err := checkpoint.ReadResume(c.checkpoint.resume, c.stream, want, c.mem.Dir == "")
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	return r, nil
}

// checkPrefix checks the stream's first updates against the checkpoint
// m of --resume (checkpoint.CheckPrefix) and moves cur past them. It runs
// before anything else of the run starts (it reads the whole prefix:
// minutes on a large stream), shows a progress bar as ingestion does, and
// returns when ctx is done, or how long the check took.
func checkPrefix(ctx context.Context, c config, cur *stream.Cursor, m checkpoint.Meta, stderr io.Writer, log *slog.Logger) (time.Duration, error) {
	log.Info("checking the stream prefix", "stream", c.stream, "updates", m.Updates, "checkpoint", checkpoint.Path(c.checkpoint.resume))
	t0 := time.Now()
	var done atomic.Uint64
	stop := cli.StartProgress(c.progress, stderr, "checking the stream prefix", m.Updates, done.Load)
	err := checkpoint.CheckPrefix(ctx, c.checkpoint.resume, c.stream, cur, m, done.Store)
	stop()
	if err != nil {
		return 0, fmt.Errorf("--resume: %w", err)
	}
	d := time.Since(t0)
	log.Info("stream prefix checked", "updates", m.Updates, "duration", d)
	return d, nil
}

// schedule returns the query schedule's checkpoint and resume part and
// the checkpoints' writer, and restores room from --resume's checkpoint.
func schedule(c config, in input, e *ingest.Engine, room *cc.Room, log *slog.Logger) (cc.Schedule, *checkpoint.Taker, error) {
	taker := &checkpoint.Taker{Dir: c.checkpoint.dir, Stream: in.id, Cursor: in.cur, Table: e.Store(),
		BatchFactor: e.Config().BatchFactor, Logger: log, Uncached: e.Store().Table() == nil}
	sched := cc.Schedule{Name: c.stream, From: in.from, CheckpointEvery: c.checkpoint.every}
	if in.res0 != nil {
		m := in.res0.Meta
		if err := room.Restore(cc.State{Updates: m.Updates, GreedyValid: m.GreedyValid, Forest: m.Forest}); err != nil {
			return sched, nil, fmt.Errorf("--resume: checkpoint %s: %w", checkpoint.Path(c.checkpoint.resume), err)
		}
	}
	if c.checkpoint.dir != "" {
		sched.Checkpoint = func(_ context.Context, st cc.State) error { return taker.Take(st.Updates, st.GreedyValid, st.Forest) }
	}
	return sched, taker, nil
}
