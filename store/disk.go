package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"sketchcc/sketch"
)

// DiskConfig configures a Store whose sketches do not fit in memory
// (OpenDisk). A zero field takes its default.
//
// The vertices are split into ranges of consecutive ids whose sketches
// fill ResidentBytes; the table lives in the file "sketches" in Dir, and
// one range at a time is resident. A batch or a merged delta (MergeWith)
// for the resident range is applied in place; one for another range is
// appended to that range's spill file, a delta as its non-zero buckets. When the spill files reach SpillBytes in all, the range with
// the most spilled bytes is brought in (one sequential read), its spill
// applied by Workers goroutines, and it stays resident until the next
// swap writes it back (one sequential write). A query (Columns) first
// applies every spill, then reads the columns it needs range by range, a
// few at a time: the file stores each range column by column (see
// geometry), so a pass reads only those columns.
type DiskConfig struct {
	// Dir is the directory of the sketch and spill files, which the Store
	// creates (over those a killed run left) and Close removes. It must
	// exist, and belong to one Store at a time.
	Dir string
	// ResidentBytes is the memory for the resident range's sketches, and
	// for the columns a query reads, in bytes. It must hold the sketches
	// of one vertex and one column of every vertex
	// (sketch.ColumnSetBuckets(p, 1) buckets).
	ResidentBytes int64
	// SpillBytes is the disk the spill files may take before a range is
	// brought in, in bytes. Zero means half the table's bytes. It trades
	// the rate for the query: a query first applies every spill, so a
	// larger budget leaves it more to apply; a smaller one swaps more often
	// during the stream. On kron15 (one run each, 2 shared cores), twice
	// the table gave 18.2 M updates/s and a 2.8 s final query under ½ of
	// the sketch bytes, half the table 13.3–14.6 M/s and 1.4 s (0.7 s in
	// RAM).
	SpillBytes int64
	// BufferBytes is the write buffer of each range's spill file, in
	// bytes, rounded up to 4 KiB. Zero means 256 KiB.
	BufferBytes int
	// Workers is the number of goroutines that apply a spill. Zero means
	// runtime.GOMAXPROCS(0).
	Workers int
}

// ErrResident is wrapped by OpenDisk when ResidentBytes cannot hold what
// a query needs.
var ErrResident = errors.New("store: resident memory too small")

// DiskLayout is how a DiskConfig splits a table: what OpenDisk allocates.
type DiskLayout struct {
	// Ranges is the number of vertex ranges, and Span the vertices in
	// each (the last may have fewer).
	Ranges int
	Span   uint32
	// ResidentBytes is the resident region (the larger of a range's
	// sketches and one column of every vertex), and BufferBytes the spill
	// buffers and the read buffer, in bytes.
	ResidentBytes, BufferBytes int64
}

// Layout returns how c splits a table of parameters p, or an error
// wrapping ErrResident when c.ResidentBytes cannot hold one vertex's
// sketch and one column of every vertex.
func (c DiskConfig) Layout(p sketch.Params) (DiskLayout, error) {
	c.ensureDefaults()
	bpv := int64(p.BytesPerVertex())
	col := sketch.ColumnSetBuckets(p, 1) * sketch.BucketBytes
	if c.ResidentBytes < max(bpv, col) {
		return DiskLayout{}, fmt.Errorf("%w: %d bytes; one column of every vertex needs %d and one sketch %d",
			ErrResident, c.ResidentBytes, col, bpv)
	}
	span := uint32(min(int64(p.Vertices()), c.ResidentBytes/bpv))
	ranges := int((int64(p.Vertices()) + int64(span) - 1) / int64(span))
	res := max(alignUp(int64(span)*bpv), alignUp(col), c.ResidentBytes&^(ioAlign-1))
	return DiskLayout{Ranges: ranges, Span: span, ResidentBytes: res,
		BufferBytes: int64(ranges)*int64(c.BufferBytes) + ioChunk(p)}, nil
}

func (c *DiskConfig) ensureDefaults() {
	if c.BufferBytes == 0 {
		c.BufferBytes = 256 << 10
	}
	c.BufferBytes = int(alignUp(int64(c.BufferBytes)))
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
}

// ioChunk returns the read buffer's bytes: a multiple of ioAlign, at
// least 256 KiB, and room for two sketches after an aligned start, so that
// a column pass makes progress with every read.
func ioChunk(p sketch.Params) int64 {
	return alignUp(max(256<<10, 2*int64(p.BytesPerVertex())+ioAlign))
}

// DiskStats counts a disk-backed Store's I/O.
type DiskStats struct {
	// Layout is the store's split of the table.
	Layout DiskLayout
	// ReadBytes and WrittenBytes count the bytes read from and written to
	// the sketch and spill files.
	ReadBytes, WrittenBytes int64
	// Swaps counts the ranges brought in (each with its spill applied),
	// and ColumnPasses the passes over the table that queries made.
	Swaps, ColumnPasses int64
	// Direct reports whether the files bypass the page cache (O_DIRECT).
	Direct bool
}

// disk is the out-of-core state of a Store (see DiskConfig).
//
// Lock order: mu, then a spill's mu, then a vertex lock. Appliers and
// mergers hold mu for reading; a swap and a column load hold it for
// writing.
type disk struct {
	p    sketch.Params
	cfg  DiskConfig
	lay  DiskLayout
	geo  geometry
	file struct {
		path   string
		f      *os.File
		direct bool
	}
	mu  sync.RWMutex
	buf struct { // mapped outside the Go heap, aligned for O_DIRECT
		resident []sketch.Bucket // lay.ResidentBytes
		io       []byte          // read buffer, ioChunk bytes
		carry    []uint32        // a batch cut by the end of a read chunk (Go heap)
		// scratch holds *deltaScratch (Go heap): a merge for a range
		// that is not resident lays its delta out in one, one per
		// concurrent merge.
		scratch sync.Pool
	}
	cur    int // the resident range, or -1
	spills []*spill
	cols   *sketch.Columns // the columns last loaded, in buf.resident
	stale  atomic.Bool     // a batch was applied since cols was loaded
	n      struct {
		spilled                            atomic.Int64 // bytes in all spills
		read, written, swaps, columnPasses atomic.Int64
	}
}

// OpenDisk returns a Store for parameters p whose sketches live in a file
// in cfg.Dir (see DiskConfig), all zero. It returns an error wrapping
// ErrResident, or naming the file it could not create, reserve, remove
// (a killed run's spill file past its ranges) or map buffers for. Close
// removes the files.
func OpenDisk(p sketch.Params, cfg DiskConfig) (*Store, error) {
	cfg.ensureDefaults()
	lay, err := cfg.Layout(p)
	if err != nil {
		return nil, err
	}
	d := &disk{p: p, cfg: cfg, lay: lay, cur: -1, geo: newGeometry(p, lay.Span)}
	d.buf.scratch.New = func() any { return &deltaScratch{sketch: make([]sketch.Bucket, p.BucketsPerVertex())} }
	d.file.path = filepath.Join(cfg.Dir, "sketches")
	if err := d.open(); err != nil {
		d.close()
		return nil, err
	}
	s := &Store{p: p, disk: d, locks: make([]sync.Mutex, p.Vertices())}
	s.mu.out = make(map[Ticket]uint32)
	return s, nil
}

func (d *disk) open() error {
	var err error
	if d.file.f, d.file.direct, err = openDirect(d.file.path); err != nil {
		return err
	}
	if err := reserve(d.file.f, d.file.path, d.geo.stride*int64(d.lay.Ranges)); err != nil {
		return err
	}
	res, err := mapAligned(int(d.lay.ResidentBytes))
	if err != nil {
		return err
	}
	d.buf.resident = unsafe.Slice((*sketch.Bucket)(unsafe.Pointer(&res[0])), len(res)/sketch.BucketBytes)
	if d.buf.io, err = mapAligned(int(ioChunk(d.p))); err != nil {
		return err
	}
	for r := range d.lay.Ranges {
		path := filepath.Join(d.cfg.Dir, fmt.Sprintf("spill-%05d", r))
		f, _, err := openDirect(path)
		if err != nil {
			return err
		}
		sp := &spill{path: path, f: f}
		d.spills = append(d.spills, sp)
		b, err := mapAligned(d.cfg.BufferBytes)
		if err != nil {
			return err
		}
		sp.buf = unsafe.Slice((*uint32)(unsafe.Pointer(&b[0])), len(b)/4)
	}
	return d.removeStale()
}

// removeStale removes the spill files of ranges beyond this store's that
// a run killed before its Close left in the directory (a run resumed
// with other ranges truncates the rest as it opens them), so that none
// outlives this store's Close. It returns the error of a removal, naming
// the file.
func (d *disk) removeStale() error {
	old, err := filepath.Glob(filepath.Join(d.cfg.Dir, "spill-[0-9][0-9][0-9][0-9][0-9]"))
	if err != nil {
		return err
	}
	for _, path := range old {
		var r int
		if _, err := fmt.Sscanf(filepath.Base(path), "spill-%05d", &r); err != nil || r < d.lay.Ranges {
			continue
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("store: cannot remove the stale spill file %s: %w", path, err)
		}
	}
	return nil
}

// close releases the buffers and removes the files, returning the first
// error of closing or removing one.
func (d *disk) close() error {
	var errs []error
	rm := func(f *os.File, path string) {
		if f != nil {
			errs = append(errs, f.Close(), os.Remove(path))
		}
	}
	rm(d.file.f, d.file.path)
	for _, sp := range d.spills {
		rm(sp.f, sp.path)
		if sp.buf != nil {
			unmapAligned(wordBytes(sp.buf[:cap(sp.buf)]))
		}
	}
	if d.buf.resident != nil {
		unmapAligned(sketch.AsBytes(d.buf.resident))
	}
	unmapAligned(d.buf.io)
	d.file.f, d.spills, d.buf.resident, d.buf.io = nil, nil, nil, nil
	return errors.Join(errs...)
}

// rangeOf returns the bounds [lo, hi) of its vertices.
func (d *disk) rangeOf(r int) (lo, hi uint32) {
	lo = uint32(r) * d.lay.Span
	return lo, uint32(min(int64(lo)+int64(d.lay.Span), int64(d.p.Vertices())))
}

// sketchOf returns v's sketch in the resident region; v's range must be
// resident.
func (d *disk) sketchOf(v uint32) []sketch.Bucket {
	per := d.p.BucketsPerVertex()
	i := int(v-uint32(d.cur)*d.lay.Span) * per
	return d.buf.resident[i : i+per : i+per]
}

// apply sketches the batch {v, u}, u in ids, into v's sketch if its range
// is resident (under v's lock, l), or appends it to the range's spill;
// then, if the spills reached their budget, brings in the range with the
// most. It returns the I/O error of either, naming the file.
func (d *disk) apply(v uint32, ids []uint32, l *sync.Mutex) error {
	r := int(v / d.lay.Span)
	d.mu.RLock()
	d.stale.Store(true)
	if r == d.cur {
		l.Lock()
		d.p.ApplyBatch(d.sketchOf(v), v, ids)
		l.Unlock()
		d.mu.RUnlock()
		return nil
	}
	total, err := d.spillLocked(r, v, uint32(len(ids)), ids)
	d.mu.RUnlock()
	return d.settle(total, err)
}

// merge calls f, which XORs a delta into the sketch it is given, with v's
// sketch under v's lock (l) if v's range is resident. Otherwise it calls
// f with a zeroed scratch sketch and appends the delta's non-zero buckets
// to the range's spill (deltaWords), applied when the range comes in, as
// a spilled batch is; then, if the spills reached their budget, it brings
// in the range with the most. It returns the I/O error of either, naming
// the file.
func (d *disk) merge(v uint32, f func([]sketch.Bucket), l *sync.Mutex) error {
	r := int(v / d.lay.Span)
	d.mu.RLock()
	d.stale.Store(true)
	if r == d.cur {
		l.Lock()
		f(d.sketchOf(v))
		l.Unlock()
		d.mu.RUnlock()
		return nil
	}
	sc := d.buf.scratch.Get().(*deltaScratch)
	clear(sc.sketch)
	f(sc.sketch)
	sc.words = appendDeltaWords(sc.words[:0], sc.sketch)
	total, err := d.spillLocked(r, v, deltaFlag|uint32(len(sc.words)), sc.words)
	d.mu.RUnlock()
	d.buf.scratch.Put(sc)
	return d.settle(total, err)
}

// spillLocked appends the record v, count, words to range r's spill and
// returns the bytes in all spills after it, or the write's error naming
// the file. The caller holds mu for reading.
func (d *disk) spillLocked(r int, v, count uint32, words []uint32) (int64, error) {
	sp := d.spills[r]
	sp.mu.Lock()
	hdr := [2]uint32{v, count}
	w1, err := sp.put(hdr[:])
	w2, err2 := sp.put(words)
	total := d.n.spilled.Add(int64(len(words)+2) * 4)
	sp.mu.Unlock()
	d.n.written.Add(w1 + w2)
	return total, errors.Join(err, err2)
}

// settle returns err, a spill's error, if any; else, when the spills
// (total bytes) reached their budget, brings in the range with the most
// and returns the I/O error of that. The caller holds no lock of d.
func (d *disk) settle(total int64, err error) error {
	if err != nil {
		return err
	}
	if total < d.budget() {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n.spilled.Load() < d.budget() {
		return nil // another applier swapped meanwhile
	}
	return d.swapIn(d.largestSpill())
}

func (d *disk) budget() int64 {
	if d.cfg.SpillBytes > 0 {
		return d.cfg.SpillBytes
	}
	return d.p.TableBytes() / 2
}

// largestSpill returns the range with the most spilled bytes. The caller
// holds mu for writing.
func (d *disk) largestSpill() int {
	best := 0
	for r, sp := range d.spills {
		if sp.bytes() > d.spills[best].bytes() {
			best = r
		}
	}
	return best
}
