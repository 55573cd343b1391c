package sketch

import (
	"errors"
	"fmt"
	"unsafe"

	"sketchcc/hugepage"
)

// BucketBytes is the size of one bucket.
const BucketBytes = 16

// Bucket is one cell of an ℓ0 sampler: the XOR of the edge indices hashed
// into it (Alpha) and the XOR of their checksums hc(index) (Gamma).
type Bucket struct {
	Alpha, Gamma uint64
}

// ErrTooManyRounds is wrapped by a connected-components query that needs
// more Boruvka rounds than the sketch has columns.
var ErrTooManyRounds = errors.New("sketch: Boruvka ran out of sketch columns")

// Result is the outcome of a sample.
type Result uint8

const (
	// Zero means the sketched vector is zero: no edge crosses the cut.
	Zero Result = iota
	// Good means the sample returned one index of the vector.
	Good
	// Fail means no bucket of the column held exactly one index. A Fail is
	// not an error; Boruvka retries the supernode in a later round with a
	// fresh column.
	Fail
)

func (r Result) String() string {
	switch r {
	case Zero:
		return "zero"
	case Good:
		return "good"
	case Fail:
		return "fail"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// update XORs edge index idx into the sketch s, which holds
// BucketsPerVertex buckets: into the deterministic bucket and into one
// bucket of each column. Inserting and deleting are the same toggle. The
// product sketches through ApplyBatch; the tests check samples of single
// indices with it.
func (p Params) update(s []Bucket, idx uint64) {
	updateIndex(p.seeds, p.rows, p.columns, s[:p.BucketsPerVertex()], idx)
}

// updateIndex XORs idx into s, a sketch of columns columns of rows rows
// hashed with seeds (Params' fields).
func updateIndex(seeds *[keySeed + 1]uint64, rows, columns int, s []Bucket, idx uint64) {
	g := hash(idx, seeds[0])
	k := hash(idx, seeds[keySeed])
	s[0].Alpha ^= idx
	s[0].Gamma ^= g
	colSeeds := seeds[1 : 1+columns]
	base := 1
	for _, cs := range colSeeds {
		if d := depth(columnHash(k, cs)); d < rows {
			b := &s[base+d]
			b.Alpha ^= idx
			b.Gamma ^= g
		}
		base += rows
	}
}

// ApplyBatch XORs into s, vertex v's sketch of BucketsPerVertex buckets,
// the edge {v, u} for every u in neighbors. It allocates nothing. Each u
// must be a vertex other than v; the caller checks (the stream readers do).
// On amd64 it runs an assembly kernel, AVX-512 (8 columns per
// instruction) or AVX2 (4), chosen at start-up from the CPU's features or
// forced with SetKernel; every kernel writes the same buckets as the
// portable Go loop, bit for bit (apply_amd64.s; -tags purego leaves only
// the Go loop).
func (p Params) ApplyBatch(s []Bucket, v uint32, neighbors []uint32) {
	s = s[:p.BucketsPerVertex()]
	if p.applyBatchFast(s, v, neighbors) {
		return
	}
	seeds, rows, columns := p.seeds, p.rows, p.columns
	for _, u := range neighbors {
		updateIndex(seeds, rows, columns, s, EdgeIndex(v, u))
	}
}

// UpdateColumnBatch XORs the edges {v, u}, u in neighbors, into view, a
// column view of column c (Rows+1 buckets: the deterministic bucket, then
// the rows of column c), exactly as ApplyBatch changes those buckets of
// v's sketch. A query uses it to add updates that are not yet in the
// sketches to the one column its round reads, at two hashes per edge
// and a column hash per edge instead of ApplyBatch's Columns.
func (p Params) UpdateColumnBatch(view []Bucket, c int, v uint32, neighbors []uint32) {
	view = view[:1+p.rows]
	det := view[0]
	checkSeed, keyS, colSeed, rows := p.seeds[0], p.seeds[keySeed], p.seeds[1+c], p.rows
	for _, u := range neighbors {
		idx := EdgeIndex(v, u)
		g := hash(idx, checkSeed)
		det.Alpha ^= idx
		det.Gamma ^= g
		if d := depth(columnHash(hash(idx, keyS), colSeed)); d < rows {
			view[1+d].Alpha ^= idx
			view[1+d].Gamma ^= g
		}
	}
	view[0] = det
}

// Good reports whether b holds exactly one index (with probability
// 1 − 2^−64 when it does not).
func (p Params) Good(b Bucket) bool {
	return b.Alpha != 0 && b.Gamma == hash(b.Alpha, p.seeds[0])
}

// SampleColumn draws an index from a column view: Rows+1 buckets, the
// deterministic bucket and then the rows of one column, as a query builds
// when it merges only the column of its round. It returns Zero if the
// deterministic bucket is empty, Good with the index if the deterministic
// bucket or any bucket of the column (from row 0 upward) is good, and
// Fail otherwise. A view of another length is an error wrapping
// ErrParams; the result is then Fail.
func (p Params) SampleColumn(view []Bucket) (idx uint64, r Result, err error) {
	if len(view) != p.rows+1 {
		return 0, Fail, fmt.Errorf("%w: sample from %d buckets, want a column view of %d", ErrParams, len(view), p.rows+1)
	}
	idx, r = p.sample(view[0], view[1:])
	return idx, r, nil
}

func (p Params) sample(det Bucket, col []Bucket) (idx uint64, r Result) {
	if det.Alpha == 0 && det.Gamma == 0 {
		return 0, Zero
	}
	if p.Good(det) {
		return det.Alpha, Good
	}
	for _, b := range col {
		if p.Good(b) {
			return b.Alpha, Good
		}
	}
	return 0, Fail
}

// Merge XORs src into dst bucket by bucket: dst becomes the sketch of the
// symmetric difference of the two vectors. len(src) must be <= len(dst).
func Merge(dst, src []Bucket) {
	dst = dst[:len(src)]
	for i := range src {
		dst[i].Alpha ^= src[i].Alpha
		dst[i].Gamma ^= src[i].Gamma
	}
}

// Table holds the sketches of all vertices in one contiguous, pointer-free
// slab of Vertices·BucketsPerVertex buckets, so the garbage collector never
// scans it. The slab is allocated zero and is backed by memory only as
// vertices are touched.
//
// Table is not safe for concurrent use on one vertex; distinct vertices'
// sketches may be updated concurrently.
type Table struct {
	p       Params
	per     int
	buckets []Bucket
}

// NewTable returns a Table of zero sketches for p.
func NewTable(p Params) *Table {
	per := p.BucketsPerVertex()
	return &Table{p: p, per: per, buckets: make([]Bucket, int(p.vertices)*per)}
}

// Params returns the table's parameters.
func (t *Table) Params() Params { return t.p }

// Sketch returns vertex v's sketch, BucketsPerVertex buckets aliasing the
// table. v must be < Vertices.
func (t *Table) Sketch(v uint32) []Bucket {
	i := int(v) * t.per
	return t.buckets[i : i+t.per : i+t.per]
}

// PrefetchBuckets asks the CPU to start loading buckets [i, i+n) of vertex
// v's sketch into its caches, one request per 64-byte line they touch, and
// returns at once: a caller about to merge into them after other work (the
// next delta of a frame, which touches the low rows of each column) finds
// them there instead of waiting for each line in turn. It is a hint: it
// reads and writes nothing, so any goroutine may call it at any time.
// i+n must be at most BucketsPerVertex. Elsewhere than on amd64, and with
// -tags purego, it does nothing.
func (t *Table) PrefetchBuckets(v uint32, i, n int) {
	s := t.Sketch(v)[i : i+n]
	if n > 0 {
		// The lines from s[0]'s on, to the one holding the last bucket
		// even when s[0] does not start a line.
		prefetch(&s[0], n*BucketBytes+64-BucketBytes)
	}
}

// ApplyBatch XORs the edges {v, u}, u in neighbors, into v's sketch in
// place. The caller must hold v exclusively.
func (t *Table) ApplyBatch(v uint32, neighbors []uint32) {
	t.p.ApplyBatch(t.Sketch(v), v, neighbors)
}

// AdviseHugePages asks the kernel to back the table with transparent huge
// pages and reports whether it accepted (see package hugepage). Call it
// before the first update. It pays when most vertices get updates; a sparse
// stream then makes every touched 2 MiB resident instead of every touched
// sketch.
func (t *Table) AdviseHugePages() bool { return hugepage.Advise(t.buckets) }

// Delta computes into dst (BucketsPerVertex buckets, overwritten) the
// sketch of vertex v's batch: the delta a worker returns and the main node
// merges into v's sketch with Merge. Deltas commute.
func (p Params) Delta(dst []Bucket, v uint32, neighbors []uint32) {
	dst = dst[:p.BucketsPerVertex()]
	clear(dst)
	p.ApplyBatch(dst, v, neighbors)
}

// AsBytes views buckets as their little-endian bytes, BucketBytes a
// bucket, without a copy (the platform is little-endian; see
// endian_check.go): what a checkpoint, a sketch file or the wire holds.
func AsBytes(s []Bucket) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*BucketBytes)
}
