package store

import (
	"fmt"
	"sync"
	"unsafe"

	"sketchcc/sketch"
)

// writeBack writes the resident range to the file, in one sequential
// pass over its region, and marks none resident. The caller holds mu for
// writing.
func (d *disk) writeBack() error {
	if d.cur < 0 {
		return nil
	}
	r := d.cur
	d.cur = -1
	return d.transfer(r, true)
}

// swapIn makes range r resident: it writes the resident range back, reads
// r's sketches in one sequential pass and applies r's spill. The caller
// holds mu for writing.
func (d *disk) swapIn(r int) error {
	if d.cur == r {
		return nil
	}
	if err := d.writeBack(); err != nil {
		return err
	}
	d.cols = nil // the region now holds a range
	if err := d.transfer(r, false); err != nil {
		return err
	}
	d.cur = r
	d.n.swaps.Add(1)
	return d.drain(r)
}

// drain applies range r's spill, which must be resident, and empties it.
// The caller holds mu for writing.
func (d *disk) drain(r int) error {
	sp := d.spills[r]
	d.buf.carry = d.buf.carry[:0]
	for off := int64(0); off < sp.off; off += int64(len(d.buf.io)) {
		buf := d.buf.io[:min(int64(len(d.buf.io)), sp.off-off)]
		if _, err := sp.f.ReadAt(buf, off); err != nil {
			return fmt.Errorf("store: cannot read the spill of range %d from %s at offset %d: %w", r, sp.path, off, err)
		}
		d.n.read.Add(int64(len(buf)))
		if err := d.applyWords(r, unsafe.Slice((*uint32)(unsafe.Pointer(&buf[0])), len(buf)/4)); err != nil {
			return err
		}
	}
	if err := d.applyWords(r, sp.buf[:sp.n]); err != nil {
		return err
	}
	if len(d.buf.carry) > 0 {
		return fmt.Errorf("store: spill %s ends inside a batch (%d words left)", sp.path, len(d.buf.carry))
	}
	d.n.spilled.Add(-sp.bytes())
	sp.reset()
	return nil
}

// batch is one spill record: a vertex and its neighbour ids, or, for a
// delta, the words of its non-zero buckets.
type batch struct {
	v     uint32
	ids   []uint32
	delta bool
}

// applyWords applies the batches in w, spill words of range r that follow
// d.buf.carry, and keeps a batch that w cuts short in d.buf.carry (a copy: w is
// the read buffer, which the next read overwrites).
func (d *disk) applyWords(r int, w []uint32) error {
	if len(d.buf.carry) > 0 {
		for len(w) > 0 {
			need := 2 - len(d.buf.carry)
			if need <= 0 {
				need = 2 + recordWords(d.buf.carry[1]) - len(d.buf.carry)
			}
			if need == 0 {
				break
			}
			k := min(need, len(w))
			d.buf.carry = append(d.buf.carry, w[:k]...)
			w = w[k:]
		}
		if len(d.buf.carry) < 2 || len(d.buf.carry) < 2+recordWords(d.buf.carry[1]) {
			return nil // w ended first
		}
		c := d.buf.carry
		if err := d.applyChecked(r, []batch{{c[0], c[2:], c[1]&deltaFlag != 0}}); err != nil {
			return err
		}
		d.buf.carry = d.buf.carry[:0]
	}
	var bs []batch
	for len(w) > 0 {
		if len(w) < 2 || len(w) < 2+recordWords(w[1]) {
			d.buf.carry = append(d.buf.carry[:0], w...)
			break
		}
		n := 2 + recordWords(w[1])
		bs = append(bs, batch{w[0], w[2:n], w[1]&deltaFlag != 0})
		w = w[n:]
	}
	return d.applyChecked(r, bs)
}

// applyChecked applies bs, batches of range r's spill, or returns an error
// naming the spill file if one is for a vertex outside the range or is a
// delta that is not whole buckets of a sketch.
func (d *disk) applyChecked(r int, bs []batch) error {
	lo, hi := d.rangeOf(r)
	for _, b := range bs {
		if b.v < lo || b.v >= hi {
			return fmt.Errorf("store: spill %s holds a batch for vertex %d outside its range [%d, %d)", d.spills[r].path, b.v, lo, hi)
		}
		if b.delta && !checkDeltaWords(b.ids, d.p.BucketsPerVertex()) {
			return fmt.Errorf("store: spill %s holds a delta for vertex %d that is not whole buckets of a sketch (%d words)",
				d.spills[r].path, b.v, len(b.ids))
		}
	}
	d.applyBatches(bs)
	return nil
}

// applyBatches sketches bs (or XORs the deltas among them) into the resident sketches with up to
// cfg.Workers goroutines, each taking the vertices of one residue, so that
// two goroutines never write one sketch.
func (d *disk) applyBatches(bs []batch) {
	w := min(d.cfg.Workers, max(1, len(bs)/16))
	work := func(k int) {
		for _, b := range bs {
			switch {
			case int(b.v)%w != k:
			case b.delta:
				xorDeltaWords(d.sketchOf(b.v), b.ids)
			default:
				d.p.ApplyBatch(d.sketchOf(b.v), b.v, b.ids)
			}
		}
	}
	if w == 1 {
		work(0)
		return
	}
	var wg sync.WaitGroup
	for k := range w {
		wg.Go(func() { work(k) })
	}
	wg.Wait()
}

// sync applies every spill and writes the resident range back, so that
// the file holds every batch applied. The caller holds mu for writing.
func (d *disk) sync() error {
	for r, sp := range d.spills {
		if sp.bytes() > 0 {
			if err := d.swapIn(r); err != nil {
				return err
			}
		}
	}
	return d.writeBack()
}

// columns returns the columns from c on that fit in the resident region,
// every spill applied first, in one pass over the file; the last set is
// kept while no batch is applied. The caller must not apply meanwhile.
func (d *disk) columns(c int) (*sketch.Columns, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cols != nil && !d.stale.Load() && d.cols.Holds(c) {
		return d.cols, nil
	}
	d.cols = nil
	if err := d.sync(); err != nil {
		return nil, err
	}
	rows := d.p.Rows()
	fit := int((int64(len(d.buf.resident))/int64(d.p.Vertices()) - 1) / int64(rows))
	cs, err := sketch.NewColumns(d.p, c, min(fit, d.p.Columns()-c), d.buf.resident)
	if err != nil {
		return nil, fmt.Errorf("store: columns from %d: %w", c, err)
	}
	for r := range d.lay.Ranges {
		if err := d.fillColumns(cs, r); err != nil {
			return nil, err
		}
	}
	d.n.columnPasses.Add(1)
	d.stale.Store(false)
	d.cols = cs
	return cs, nil
}

// stats returns the counters.
func (d *disk) stats() DiskStats {
	return DiskStats{Layout: d.lay, ReadBytes: d.n.read.Load(), WrittenBytes: d.n.written.Load(),
		Swaps: d.n.swaps.Load(), ColumnPasses: d.n.columnPasses.Load(), Direct: d.file.direct}
}
