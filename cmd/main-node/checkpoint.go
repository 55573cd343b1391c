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
	"sketchcc/sketch"
	"sketchcc/stream"
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

// lockCheckpointDir takes the lock of the run's checkpoint directory,
// held until the returned func is called (or the process ends), and then
// removes the temporaries a run killed while writing a checkpoint left
// there, logging each. A directory another main node holds is an error
// naming the holder.
func lockCheckpointDir(dir string, log *slog.Logger) (unlock func(), err error) {
	l, err := checkpoint.LockDir(dir)
	if errors.Is(err, checkpoint.ErrLocked) {
		return nil, fmt.Errorf("--checkpoint-dir=%s: %w; give each main node a directory of its own", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--checkpoint-dir=%s: %w", dir, err)
	}
	removed, err := checkpoint.RemoveTemps(dir)
	for _, p := range removed {
		log.Warn("removed a stale checkpoint temporary, left by a run killed while writing it", "path", p)
	}
	if err != nil {
		l.Unlock()
		return nil, err
	}
	return func() { l.Unlock() }, nil
}

// resumed is a checkpoint read for --resume and checked against the run.
type resumed struct {
	meta  checkpoint.Meta
	table *sketch.Table
}

// readResume reads the checkpoint of --resume and refuses it when it was
// not taken on this stream with the parameters the user set.
func readResume(c config, id checkpoint.StreamID) (*resumed, error) {
	m, t, err := checkpoint.Read(c.checkpoint.resume)
	if err != nil {
		return nil, fmt.Errorf("--resume: %w", err)
	}
	want := checkpoint.Params{Stream: id}
	if c.checkpoint.seedSet {
		want.Seed = c.seed
	}
	if c.checkpoint.factorSet {
		want.SketchFactor = c.sketchFactor
	}
	if err := m.Check(t.Params(), want); err != nil {
		return nil, fmt.Errorf("--resume: checkpoint %s, stream %s: %w", checkpoint.Path(c.checkpoint.resume), c.stream, err)
	}
	return &resumed{meta: m, table: t}, nil
}

// apply makes cfg start from the checkpoint's sketches and parameters.
func (r *resumed) apply(c config, cfg *ingest.Config) {
	p := r.table.Params()
	cfg.SketchFactor, cfg.Seed, cfg.Sketches = p.Factor(), p.Seed(), r.table
	if !c.checkpoint.batchSet {
		cfg.BatchFactor = r.meta.BatchFactor
	}
}

// state is the Room state the checkpoint holds.
func (r *resumed) state() cc.State {
	return cc.State{Updates: r.meta.Updates, GreedyValid: r.meta.GreedyValid, Forest: r.meta.Forest}
}

// checkpointWrites counts what checkpointer wrote: the bytes of the last
// checkpoint and the time spent writing (the barrier before excluded).
type checkpointWrites struct {
	bytes int64
	write time.Duration
}

// checkPrefix hashes the first m.Updates records of the stream cur reads
// and refuses a stream whose digest differs from the checkpoint m's, which
// an edit anywhere in them makes it; on a match it moves cur to m.Updates
// with that digest, so that the resumed run's checkpoints can be checked
// in turn. It runs before anything else of the run starts (it reads the
// whole prefix: minutes on a large stream), shows a progress bar as
// ingestion does, and returns when ctx is done.
func checkPrefix(ctx context.Context, c config, cur *stream.Cursor, m checkpoint.Meta, stderr io.Writer, log *slog.Logger) error {
	path := checkpoint.Path(c.checkpoint.resume)
	if cur == nil {
		return fmt.Errorf("--resume: checkpoint %s: the stream %s is not a binary stream file", path, c.stream)
	}
	n := m.Updates
	log.Info("checking the stream prefix", "stream", c.stream, "updates", n, "checkpoint", path)
	t0 := time.Now()
	var done atomic.Uint64
	stop := startProgress(c.progress, stderr, "checking the stream prefix", n, done.Load)
	d, err := cur.File().Digest(ctx, 0, n, done.Store)
	stop()
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("--resume: interrupted after checking %s of %d against checkpoint %s; nothing ingested",
				stream.UpdateCount(d.Records), n, path)
		}
		return fmt.Errorf("--resume: cannot check the stream against checkpoint %s: %w", path, err)
	}
	if d != m.Prefix {
		return fmt.Errorf("--resume: stream %s differs from the one checkpoint %s was taken on: its first %s hash to %#08x, the checkpoint's to %#08x",
			c.stream, path, stream.UpdateCount(n), d.CRC, m.Prefix.CRC)
	}
	log.Info("stream prefix checked", "updates", n, "duration", time.Since(t0))
	return cur.SeekDigest(m.Prefix)
}

// checkpointer returns the Schedule's Checkpoint func writing into dir,
// counting into w. The digest of the stream prefix it writes is cur's,
// which must cover exactly the updates in the sketches: a checkpoint a
// resume could not check is refused with an error instead.
func checkpointer(dir string, id checkpoint.StreamID, cur *stream.Cursor, e *ingest.Engine, w *checkpointWrites, log *slog.Logger) func(context.Context, cc.State) error {
	return func(_ context.Context, st cc.State) error {
		t0 := time.Now()
		prefix, ok := cur.Digest()
		switch {
		case !ok:
			return fmt.Errorf("not written: the digest of the stream's first %s is not known (the stream was read past an error), so a resume could not check them",
				stream.UpdateCount(st.Updates))
		case prefix.Records != st.Updates:
			return fmt.Errorf("not written: the stream digest covers %s, the sketches hold %s",
				stream.UpdateCount(prefix.Records), stream.UpdateCount(st.Updates))
		}
		m := checkpoint.Meta{Stream: id, Updates: st.Updates, Prefix: prefix, BatchFactor: e.Config().BatchFactor,
			GreedyValid: st.GreedyValid, Forest: st.Forest}
		n, err := checkpoint.Write(dir, m, e.Store().Table())
		if err != nil {
			return err
		}
		w.bytes = n
		w.write += time.Since(t0)
		log.Info("checkpoint", "updates", st.Updates, "bytes", n, "greedy", st.GreedyValid,
			"duration", time.Since(t0), "path", checkpoint.Path(dir))
		return nil
	}
}

// throttled is a stream.Source that reads at most rate updates per second.
type throttled struct {
	stream.Source
	rate  float64
	start time.Time
	read  uint64
}

func (t *throttled) Read(dst []stream.Update) (int, error) {
	if t.start.IsZero() {
		t.start = time.Now()
	}
	// Reading in pieces of a tenth of a second keeps the pace even.
	dst = dst[:min(len(dst), max(1, int(t.rate/10)))]
	if ahead := time.Duration(float64(t.read)/t.rate*float64(time.Second)) - time.Since(t.start); ahead > 0 {
		time.Sleep(ahead)
	}
	n, err := t.Source.Read(dst)
	t.read += uint64(n)
	return n, err
}
