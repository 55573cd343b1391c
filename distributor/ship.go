package distributor

// The writer of a connection: it fills batches frames and sends them
// (distributor.run starts it, labelled stage=ship).

import (
	"fmt"
	"time"
)

// outFrame is the batches frame that the writer fills: its batches, the
// sizes that decide when it goes out, and the FlushDelay timer of a
// partly filled frame. The writer goroutine owns it.
type outFrame struct {
	batches []*pending
	entries []batchEntry
	payload []byte
	bytes   int // the neighbour ids' raw size: FrameBytes counts them
	encoded int // the frame's payload: its batches' encodings
	ids     int // the ids they carry: the worker decodes at most its frame limit's worth, at 4 bytes each
	timer   *time.Timer
	timerC  <-chan time.Time // the timer's channel while it runs, else nil
}

func newOutFrame() *outFrame {
	f := &outFrame{timer: time.NewTimer(time.Hour)}
	f.timer.Stop()
	return f
}

// fits reports whether b can join the frame without taking it past limit,
// the payload the worker reads: by its payload, or by its ids decoded
// (checkBatches; a bitmap carries up to 8 ids a byte).
func (f *outFrame) fits(b *pending, limit int) bool {
	return f.encoded+len(b.enc) <= limit && 4*(f.ids+b.ids) <= limit
}

// add puts b in the frame.
func (f *outFrame) add(b *pending) {
	f.batches = append(f.batches, b)
	f.bytes += 4 * b.raw
	f.encoded += len(b.enc)
	f.ids += b.ids
}

// writeBatches is the writer: it runs until the connection fails or stop
// is asked, and returns why.
func (d *distributor) writeBatches(fw *frameWriter) error {
	p := d.p
	credits := p.cfg.Credits
	f := newOutFrame()
	defer f.timer.Stop()
	for {
		var fresh, again <-chan *pending
		if credits > 0 {
			fresh, again = p.encoded, p.retry
		}
		var b *pending
		select {
		case <-d.failed.c:
			return nil // fail has run; its error is kept
		case <-d.stopped.c:
			return d.sendStop(fw, f)
		case <-d.credit:
			credits++
			continue
		case <-f.timerC:
			if err := d.flush(fw, f); err != nil {
				return err
			}
			continue
		case b = <-again:
		case b = <-fresh:
		}
		if !f.fits(b, d.frame.limit) {
			if err := d.flush(fw, f); err != nil {
				p.requeue([]*pending{b})
				return err
			}
		}
		if !d.admit(b) {
			return nil
		}
		credits--
		f.add(b)
		switch {
		case credits == 0 || f.bytes >= d.frame.send || len(f.batches) == maxFrameBatches:
			// Out of credits, nothing more can join the frame until
			// it has been answered: send it now.
			if err := d.flush(fw, f); err != nil {
				return err
			}
		case f.timerC == nil:
			f.timer.Reset(p.cfg.FlushDelay)
			f.timerC = f.timer.C
		}
	}
}

// flush sends frame f, if it holds any batch, and empties it.
func (d *distributor) flush(fw *frameWriter, f *outFrame) error {
	f.timer.Stop()
	f.timerC = nil
	if len(f.batches) == 0 {
		return nil
	}
	f.entries, f.payload = f.entries[:0], f.payload[:0]
	for _, b := range f.batches {
		f.payload = append(f.payload, b.enc...)
		f.entries = append(f.entries, batchEntry{ID: b.id, Vertex: b.vertex, Updates: uint32(b.ids), Bytes: uint32(len(b.enc))})
	}
	d.conn.SetWriteDeadline(time.Now().Add(d.p.cfg.AnswerTimeout))
	if _, err := fw.write(batchesMsg, f.entries, f.payload); err != nil {
		return fmt.Errorf("cannot send %d batches to %s: %w", len(f.batches), d.addr, err)
	}
	// The deadlines run from now; watch leaves a batch alone until
	// then, as the frame may still be reading its neighbours.
	now := time.Now()
	d.mu.Lock()
	for _, b := range f.batches {
		if d.mu.pending[b.id] == b {
			b.sent = now
		}
	}
	d.mu.Unlock()
	clear(f.batches)
	f.batches, f.bytes, f.encoded, f.ids = f.batches[:0], 0, 0, 0
	return nil
}

// sendStop answers an ask: it sends frame f first for a plain stop, then
// the stop frame, and returns the error the connection ends with.
func (d *distributor) sendStop(fw *frameWriter, f *outFrame) error {
	reason, end := d.stopReason()
	if end == errStopped {
		if err := d.flush(fw, f); err != nil {
			return err
		}
	}
	d.conn.SetWriteDeadline(time.Now().Add(min(d.p.cfg.AnswerTimeout, stopWriteTimeout)))
	if _, err := fw.write(stopMsg, &stop{Reason: reason}); err != nil {
		return fmt.Errorf("cannot send stop to %s: %w", d.addr, err)
	}
	return end
}
