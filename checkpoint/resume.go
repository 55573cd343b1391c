package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"sketchcc/sketch"
	"sketchcc/stream"
)

// Claim takes the lock of checkpoint directory dir (LockDir) and then
// removes the temporaries that a run killed while writing a checkpoint
// left there (RemoveTemps), returning their paths even on an error and
// logging each to log (a warning) when log is not nil. It returns LockDir's errors (ErrLocked's with the advice to give each run
// a directory of its own), and RemoveTemps' with the lock released.
func Claim(dir string, log *slog.Logger) (*Lock, []string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	l, err := LockDir(dir)
	if errors.Is(err, ErrLocked) {
		return nil, nil, fmt.Errorf("%w; give each main node a directory of its own", err)
	}
	if err != nil {
		return nil, nil, err
	}
	removed, err := RemoveTemps(dir)
	for _, p := range removed {
		log.Warn("removed a stale checkpoint temporary, left by a run killed while writing it", "path", p)
	}
	if err != nil {
		l.Unlock()
		return nil, removed, err
	}
	return l, removed, nil
}

// CheckPrefix hashes the first m.Updates records of the stream file cur
// reads and refuses a stream whose digest differs from m.Prefix, which an
// edit anywhere in them makes it; on a match it moves cur to m.Updates
// with that digest, so that the resumed run's checkpoints can be checked
// in turn. progress, when not nil, gets the records hashed so far (see
// File.Digest). Its errors name the stream as name and the checkpoint of
// dir, and say how far it got when ctx is done; a nil cur (a stream that
// is not a binary stream file) is refused.
func CheckPrefix(ctx context.Context, dir, name string, cur *stream.Cursor, m Meta, progress func(records uint64)) error {
	path := Path(dir)
	if cur == nil {
		return fmt.Errorf("checkpoint %s: the stream %s is not a binary stream file", path, name)
	}
	n := m.Updates
	d, err := cur.File().Digest(ctx, 0, n, progress)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted after checking %s of %d against checkpoint %s; nothing ingested",
				stream.UpdateCount(d.Records), n, path)
		}
		return fmt.Errorf("cannot check the stream against checkpoint %s: %w", path, err)
	}
	if d != m.Prefix {
		return fmt.Errorf("stream %s differs from the one checkpoint %s was taken on: its first %s hash to %#08x, the checkpoint's to %#08x",
			name, path, stream.UpdateCount(n), d.CRC, m.Prefix.CRC)
	}
	return cur.SeekDigest(m.Prefix)
}

// Taker writes the checkpoints of one run into Dir. Its fields are set
// before the first Take, which alone writes Bytes and Writing; it is not
// safe for concurrent use.
type Taker struct {
	// Dir is the checkpoint directory, and Stream the stream's StreamID.
	Dir    string
	Stream StreamID
	// Cursor reads the stream; its digest must cover exactly the
	// updates in Table when Take is called.
	Cursor *stream.Cursor
	// Table holds the sketches, and BatchFactor the run's gutter size
	// (Meta.BatchFactor).
	Table       *sketch.Table
	BatchFactor float64
	// Logger, when not nil, gets an info record for each checkpoint
	// written.
	Logger *slog.Logger
	// Bytes is the size of the last checkpoint written, and Writing the
	// time spent writing them all.
	Bytes   int64
	Writing time.Duration
}

// Take writes the checkpoint of Table after updates stream updates, with
// the greedy shortcut's forest when greedyValid (Meta). A checkpoint that
// a resume could not check, because Cursor's digest is not known or does
// not cover exactly updates, is refused with an error instead; other
// errors are Write's. A checkpoint written is logged to Logger.
func (t *Taker) Take(updates uint64, greedyValid bool, forest []stream.Edge) error {
	t0 := time.Now()
	prefix, ok := t.Cursor.Digest()
	switch {
	case !ok:
		return fmt.Errorf("not written: the digest of the stream's first %s is not known (the stream was read past an error), so a resume could not check them",
			stream.UpdateCount(updates))
	case prefix.Records != updates:
		return fmt.Errorf("not written: the stream digest covers %s, the sketches hold %s",
			stream.UpdateCount(prefix.Records), stream.UpdateCount(updates))
	}
	m := Meta{Stream: t.Stream, Updates: updates, Prefix: prefix, BatchFactor: t.BatchFactor,
		GreedyValid: greedyValid, Forest: forest}
	n, err := Write(t.Dir, m, t.Table)
	if err != nil {
		return err
	}
	t.Bytes = n
	t.Writing += time.Since(t0)
	if t.Logger != nil {
		t.Logger.Info("checkpoint", "updates", updates, "bytes", n, "greedy", greedyValid,
			"duration", time.Since(t0), "path", Path(t.Dir))
	}
	return nil
}

// Resume is a checkpoint read to continue its run.
type Resume struct {
	Meta Meta
	// Table holds the checkpoint's sketches; the resumed run owns it.
	Table *sketch.Table
}

// ReadResume reads the checkpoint of dir (Read) and refuses it when it
// was not taken on the stream want.Stream, called name in errors, with
// want's seed and sketch factor where they are set (Meta.Check). It
// returns Read's errors as they are, and Check's after the checkpoint's
// path and name.
func ReadResume(dir, name string, want Params) (*Resume, error) {
	m, t, err := Read(dir)
	if err != nil {
		return nil, err
	}
	if err := m.Check(t.Params(), want); err != nil {
		return nil, fmt.Errorf("checkpoint %s, stream %s: %w", Path(dir), name, err)
	}
	return &Resume{Meta: m, Table: t}, nil
}
