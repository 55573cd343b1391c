package store

import (
	"fmt"
	"unsafe"

	"sketchcc/sketch"
)

// geometry is the layout of the sketch file. Each range of Span vertices
// takes stride bytes: a block of their deterministic buckets, then one
// block per column holding the column's rows of every vertex of the
// range, vertex after vertex; each block starts on an ioAlign boundary.
// Memory holds a range vertex after vertex (as a sketch.Table does), so a
// swap gathers or scatters it block by block through the read buffer,
// still one sequential pass over the range's region; a query's pass reads
// only the blocks of the columns it loads, 1/Columns of the file each.
type geometry struct {
	stride     int64 // bytes per range
	det, col   int64 // bytes of the deterministic block and of a column block
	rows, cols int
}

func newGeometry(p sketch.Params, span uint32) geometry {
	g := geometry{rows: p.Rows(), cols: p.Columns(),
		det: alignUp(int64(span) * sketch.BucketBytes), col: alignUp(int64(span) * int64(p.Rows()) * sketch.BucketBytes)}
	g.stride = g.det + int64(g.cols)*g.col
	return g
}

// block returns the file offset of block b of range r (0: the
// deterministic buckets; 1+c: column c) and its buckets per vertex.
func (g geometry) block(r, b int) (off int64, width int) {
	off = int64(r) * g.stride
	if b == 0 {
		return off, 1
	}
	return off + g.det + int64(b-1)*g.col, g.rows
}

// transfer writes (out) or reads the resident range r to or from its
// region of the file, block by block in chunks of the read buffer. The
// caller holds mu for writing.
func (d *disk) transfer(r int, out bool) error {
	lo, hi := d.rangeOf(r)
	per := d.p.BucketsPerVertex()
	for b := 0; b <= d.geo.cols; b++ {
		first := 0 // the block's first bucket in a vertex's sketch
		if b > 0 {
			first = 1 + (b-1)*d.geo.rows
		}
		err := d.chunks(r, b, hi-lo, out, func(k int, bk []sketch.Bucket) {
			_, w := d.geo.block(r, b)
			for i := range bk {
				v, row := (k+i)/w, (k+i)%w
				if out {
					bk[i] = d.buf.resident[v*per+first+row]
				} else {
					d.buf.resident[v*per+first+row] = bk[i]
				}
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// chunks runs block b of range r (n vertices) through the read buffer in
// aligned chunks: for a read it reads each chunk and calls f with the
// index in the block of its first bucket and its buckets; for a write
// (out) it calls f to fill each chunk, then writes it.
func (d *disk) chunks(r, b int, n uint32, out bool, f func(k int, bk []sketch.Bucket)) error {
	off, w := d.geo.block(r, b)
	total := int64(n) * int64(w) * sketch.BucketBytes
	for at := int64(0); at < total; at += int64(len(d.buf.io)) {
		size := min(int64(len(d.buf.io)), total-at)
		buf := d.buf.io[:alignUp(size)]
		bk := unsafe.Slice((*sketch.Bucket)(unsafe.Pointer(&buf[0])), size/sketch.BucketBytes)
		k := int(at / sketch.BucketBytes)
		if out {
			f(k, bk)
			if _, err := d.file.f.WriteAt(buf, off+at); err != nil {
				return fmt.Errorf("store: cannot write the sketches of range %d to %s at offset %d: %w", r, d.file.path, off+at, err)
			}
			d.n.written.Add(int64(len(buf)))
			continue
		}
		if _, err := d.file.f.ReadAt(buf, off+at); err != nil {
			return fmt.Errorf("store: cannot read the sketches of range %d from %s at offset %d: %w", r, d.file.path, off+at, err)
		}
		d.n.read.Add(int64(len(buf)))
		f(k, bk)
	}
	return nil
}

// fillColumns copies the deterministic buckets and the columns of cs
// from range r's blocks in the file.
func (d *disk) fillColumns(cs *sketch.Columns, r int) error {
	lo, hi := d.rangeOf(r)
	for b := 0; b <= d.geo.cols; b++ {
		c := b - 1
		if b > 0 && !cs.Holds(c) {
			continue
		}
		_, w := d.geo.block(r, b)
		err := d.chunks(r, b, hi-lo, false, func(k int, bk []sketch.Bucket) {
			for i := range bk {
				cs.Put(lo+uint32((k+i)/w), c, (k+i)%w, bk[i])
			}
		})
		if err != nil {
			return err
		}
	}
	return nil
}
