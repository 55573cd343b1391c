package store

import (
	"errors"
	"fmt"
	"io"

	"sketchcc/sketch"
)

// WriteTo writes the sketches to w as sketch.Table.WriteTo does (its
// header, then every vertex's buckets, vertex after vertex) and returns
// the bytes written: the form a checkpoint holds, the same in memory and
// out of core. Out of core it brings the ranges in one after the other,
// each with its spill applied, and writes each from the resident region,
// so that it holds no more memory than a swap and leaves no spill behind.
// Nobody may apply, merge or queue meanwhile (take it at a barrier, after
// Wait). It returns w's errors, and out of core the I/O error of a swap
// naming the file (remembered for Wait) or the one Wait would return.
func (s *Store) WriteTo(w io.Writer) (int64, error) {
	if s.disk == nil {
		return s.table.WriteTo(w)
	}
	if err := s.failed(); err != nil {
		return 0, err
	}
	n, err := s.disk.writeTo(w)
	var werr *writeError
	if err != nil && !errors.As(err, &werr) {
		s.fail(err)
	}
	return n, err
}

// writeError wraps an error of the writer given to WriteTo, which says
// nothing about the store's files.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }
func (e *writeError) Unwrap() error { return e.err }

// writeTo is WriteTo out of core.
func (d *disk) writeTo(w io.Writer) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n, err := w.Write(sketch.AppendTableHeader(make([]byte, 0, sketch.TableHeaderBytes), d.p))
	total := int64(n)
	if err != nil {
		return total, &writeError{fmt.Errorf("store: cannot write the table header: %w", err)}
	}
	for r := range d.lay.Ranges {
		if err := d.swapIn(r); err != nil {
			return total, err
		}
		n, err := w.Write(d.rangeBytes(r))
		total += int64(n)
		if err != nil {
			return total, &writeError{fmt.Errorf("store: cannot write the sketches of range %d: %w", r, err)}
		}
	}
	return total, nil
}

// rangeBytes returns the bytes of the sketches of range r, which must be
// resident, vertex after vertex.
func (d *disk) rangeBytes(r int) []byte {
	lo, hi := d.rangeOf(r)
	n := int(hi-lo) * d.p.BytesPerVertex()
	return sketch.AsBytes(d.buf.resident)[:n]
}

// Load reads every vertex's sketch from r, vertex after vertex, in
// BucketsPerVertex little-endian buckets of 16 bytes (the body that
// sketch.Table.WriteTo writes after its header, TableBytes bytes), into a
// Store that has not queued or applied a batch yet: a resumed run fills a
// Store from its checkpoint. Out of core it reads one range at a time
// into the resident region and writes it to the sketch file, so that a
// table larger than memory loads in the memory of a swap. It returns r's
// error, io.ErrUnexpectedEOF wrapped when r ends early, the I/O error of
// the sketch file naming it, or an error for a Store already in use; it
// reads nothing past the table.
func (s *Store) Load(r io.Reader) error {
	if s.queued.Load() != 0 || s.applied.Load() != 0 {
		return errors.New("store: cannot load sketches into a store that has applied batches")
	}
	if s.disk == nil {
		if err := s.table.ReadBuckets(r); err != nil {
			return fmt.Errorf("store: cannot read the sketches: %w", noEOF(err))
		}
		return nil
	}
	err := s.disk.load(r)
	if err != nil {
		s.fail(err)
	}
	return err
}

// noEOF turns io.EOF, a reader ended before a sketch, into
// io.ErrUnexpectedEOF: the sketches were promised.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// load is Load out of core: every range is read into the resident region
// and written back to the file, but the last, which stays resident.
func (d *disk) load(r io.Reader) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.stale.Store(true)
	d.cols = nil
	for k := range d.lay.Ranges {
		if err := d.writeBack(); err != nil {
			return err
		}
		if _, err := io.ReadFull(r, d.rangeBytes(k)); err != nil {
			lo, _ := d.rangeOf(k)
			return fmt.Errorf("store: cannot read the sketches of range %d (from vertex %d): %w", k, lo, noEOF(err))
		}
		d.cur = k
	}
	return nil
}
