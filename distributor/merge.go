package distributor

// The reader of a connection: it reads deltas frames and merges their
// deltas exactly once (distributor.run starts it, labelled stage=merge).

import (
	"errors"
	"fmt"
	"io"

	"sketchcc/sketch"
)

// readDeltas is the reader: it merges deltas until the connection fails,
// and returns why.
func (d *distributor) readDeltas(fr *frameReader) error {
	dc := newDeltaCodec(d.p.st.Params())
	xor := dc.xorInto // one method value for the connection, not one per delta
	var ids []uint64
	var payload []byte
	for {
		t, h, n, err := fr.next()
		if err != nil {
			return d.readError(err)
		}
		if t != deltasMsg {
			return d.control(fr, t, h, n)
		}
		// The payload first: nothing of a frame is used before its
		// check, the header included.
		if payload, err = fr.payload(payload, n); err != nil {
			if errors.Is(err, ErrIntegrity) {
				d.st.badFrames.Add(1)
				return d.protocol(err)
			}
			return fmt.Errorf("cannot read deltas from %s: %w", d.addr, err)
		}
		if err := fr.dec.decode(h, &ids, maxFrameBatches); err != nil {
			return d.protocol(fmt.Errorf("%w: bad deltas header: %v", ErrFrame, err))
		}
		if err := checkDeltas(ids, n, dc); err != nil {
			return d.protocol(err)
		}
		if err := d.mergeDeltas(dc, xor, ids, payload); err != nil {
			return err
		}
	}
}

// protocol wraps err, a bad frame from the worker, as a *ProtocolError.
func (d *distributor) protocol(err error) error { return &ProtocolError{Worker: d.name, Err: err} }

// readError returns why the reader ends after err, an error reading the
// next frame's header.
func (d *distributor) readError(err error) error {
	if errors.Is(err, ErrIntegrity) {
		d.st.badFrames.Add(1)
	}
	if errors.Is(err, ErrFrame) || errors.Is(err, ErrIntegrity) {
		return d.protocol(err)
	}
	select {
	case <-d.failed.c:
		return err
	case <-d.stopped.c:
		if errors.Is(err, io.EOF) {
			_, end := d.stopReason() // the worker closed after our stop
			return end
		}
	default:
	}
	return fmt.Errorf("cannot read deltas from %s: %w", d.addr, err)
}

// control returns why the reader ends on a frame of type t, header h and
// payload n bytes, which is not a deltas frame: the worker's error or
// goodbye, or a protocol error.
func (d *distributor) control(fr *frameReader, t messageType, h []byte, n int) error {
	switch t {
	case errorMsg:
		var f failure
		if err := fr.dec.decode(h, &f, 0); err != nil || n != 0 {
			return d.protocol(fmt.Errorf("%w: bad error frame", ErrFrame))
		}
		return &PeerError{Reason: f.Reason}
	case goodbyeMsg:
		var g goodbye
		if err := fr.dec.decode(h, &g, 0); err != nil || n != 0 {
			return d.protocol(fmt.Errorf("%w: bad goodbye frame", ErrFrame))
		}
		return errWorkerLeft
	}
	return d.protocol(fmt.Errorf("%w: unexpected %s frame", ErrFrame, t))
}

// mergeDeltas merges the deltas of one checked frame, payload, answering
// batches ids in order, each exactly once, and gives a credit back for
// each.
func (d *distributor) mergeDeltas(dc *deltaCodec, xor func([]sketch.Bucket), ids []uint64, payload []byte) error {
	p := d.p
	// Each delta's lines of its sketch are prefetched while the delta
	// before it merges, so that a merge no longer waits for a cold
	// sketch one line at a time (BenchmarkWire op=delta-merge). Out of
	// core there is no table to prefetch from: the store merges a delta
	// into its resident range or spills it.
	table := p.st.Table()
	if w, ok := dc.nextRows(payload); table != nil && ok {
		dc.prefetchRows(table, w)
	}
	rest := payload
	for _, id := range ids {
		v, r, err := dc.parse(rest)
		if err != nil {
			return d.protocol(fmt.Errorf("delta for batch %d: %w", id, err))
		}
		rest = r
		if w, ok := dc.nextRows(rest); table != nil && ok {
			dc.prefetchRows(table, w)
		}
		b, err := d.answered(id, v)
		if err != nil {
			return err
		}
		if b == nil {
			// Answered already, or never sent here: merging it would
			// cancel a delta (doc.go).
			d.st.duplicates.Add(1)
			continue
		}
		// Counted before the store sees it: a flush that the merge
		// completes then finds the counters already adding up.
		d.st.merged.Add(1)
		if err := p.st.MergeWith(id, v, xor); err != nil {
			p.refusedBy(err)
		}
		p.done(b)
		d.credit <- struct{}{}
	}
	if len(rest) != 0 {
		return d.protocol(fmt.Errorf("%w: %d bytes after the %d deltas of a frame", ErrFrame, len(rest), len(ids)))
	}
	return nil
}

// answered takes batch id out of the batches in flight and returns it,
// or nil if it is not in flight here; a delta for a vertex other than the
// batch's is a protocol error.
func (d *distributor) answered(id uint64, v uint32) (*pending, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	b := d.mu.pending[id]
	if b != nil && b.vertex != v {
		return nil, d.protocol(fmt.Errorf("%w: delta for batch %d is for vertex %d, the batch for vertex %d",
			ErrFrame, id, v, b.vertex))
	}
	delete(d.mu.pending, id)
	return b, nil
}
