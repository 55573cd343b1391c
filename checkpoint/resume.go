package checkpoint

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
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
	// Table holds the sketches (a store out of core writes them range by
	// range), and BatchFactor the run's gutter size (Meta.BatchFactor).
	Table       Sketches
	BatchFactor float64
	// Uncached keeps the checkpoint file out of the page cache while it
	// is written (every 64 MiB written back and dropped), for a run whose
	// sketches are out of core under a memory limit that counts the
	// cache.
	Uncached bool
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
	write := Write
	if t.Uncached {
		write = writeUncached
	}
	n, err := write(t.Dir, m, t.Table)
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
	// Params are the parameters of the checkpoint's sketches.
	Params sketch.Params
	// Table holds the checkpoint's sketches when ReadResume read them
	// into memory, and the resumed run owns it; otherwise it is nil and
	// Load reads them into the run's store.
	Table *sketch.Table
	path  string
	// body is the offset of the table's buckets, and size and crc the
	// file's bytes and checksum when it was checked.
	body, size int64
	crc        uint32
}

// ReadResume reads the checkpoint of dir (Read) and refuses it when it
// was not taken on the stream want.Stream, called name in errors, with
// want's seed and sketch factor where they are set (Meta.Check). It
// returns Read's errors as they are, and Check's after the checkpoint's
// path and name. With inMemory the table is read into Resume.Table;
// without, the file is read once and checked all the same, holding 1 MiB
// and dropping its pages from the page cache afterwards, Table is nil and
// Load reads the sketches into a store, which may keep them on disk (a
// table larger than memory).
func ReadResume(dir, name string, want Params, inMemory bool) (*Resume, error) {
	path := Path(dir)
	r := &Resume{path: path}
	if inMemory {
		m, t, err := Read(dir)
		if err != nil {
			return nil, err
		}
		r.Meta, r.Params, r.Table = m, t.Params(), t
	} else {
		f, err := read(path, false)
		if err != nil {
			return nil, fmt.Errorf("checkpoint %s: %w", path, err)
		}
		r.Meta, r.Params, r.body, r.size, r.crc = f.meta, f.params, f.body, f.size, f.crc
	}
	if err := r.Meta.Check(r.Params, want); err != nil {
		return nil, fmt.Errorf("checkpoint %s, stream %s: %w", path, name, err)
	}
	return r, nil
}

// Load reads the checkpoint's sketches again and hands them to fill as a
// reader of exactly the table's bytes (sketch.Params.TableBytes), every
// vertex's buckets vertex after vertex (store.Store.Load reads that),
// checking the file's checksum over them once fill has read them all:
// what fill read is the checkpoint's only when Load returns nil. It does nothing when Table is
// set (ReadResume read them; the run owns them). Its errors name the file:
// fill's, and that of a file fill did not read to the end; a file that
// changed since it was checked (its size or its checksum, even one
// replaced by another whole checkpoint) is an error wrapping ErrCorrupt.
func (r *Resume) Load(fill func(body io.Reader) error) error {
	if r.Table != nil {
		return nil
	}
	if err := r.load(fill); err != nil {
		return fmt.Errorf("checkpoint %s: %w", r.path, err)
	}
	return nil
}

func (r *Resume) load(fill func(body io.Reader) error) error {
	f, fi, err := openRegular(r.path)
	if err != nil {
		return err
	}
	defer f.Close()
	defer dropCache(f)
	if fi.Size() != r.size {
		return fmt.Errorf("%w: %d bytes, %d when it was checked: changed meanwhile", ErrCorrupt, fi.Size(), r.size)
	}
	crc := crc32.New(castagnoli)
	br := io.TeeReader(bufio.NewReaderSize(f, 1<<20), crc)
	if _, err := io.CopyN(io.Discard, br, r.body); err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	body := &io.LimitedReader{R: br, N: r.Params.TableBytes()}
	if err := fill(body); err != nil {
		return err
	}
	if body.N != 0 {
		return fmt.Errorf("%d bytes of the table were left unread", body.N)
	}
	sum := crc.Sum32()
	var tail [4]byte
	if _, err := io.ReadFull(br, tail[:]); err != nil {
		return fmt.Errorf("%w: no checksum: %w", ErrCorrupt, err)
	}
	if got := binary.LittleEndian.Uint32(tail[:]); got != sum || sum != r.crc {
		return fmt.Errorf("%w: checksum %#08x, content gives %#08x, %#08x when it was checked: changed meanwhile", ErrCorrupt, got, sum, r.crc)
	}
	return nil
}
