package sketch

import (
	"fmt"
	"unsafe"

	"sketchcc/internal/hugepage"
)

// BucketBytes is the size of one bucket.
const BucketBytes = 16

// Bucket is one cell of an ℓ0 sampler: the XOR of the edge indices hashed
// into it (Alpha) and the XOR of their checksums hc(index) (Gamma).
type Bucket struct {
	Alpha, Gamma uint64
}

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

// Update XORs edge index idx into the sketch s, which holds
// BucketsPerVertex buckets: into the deterministic bucket and into one
// bucket of each column. Inserting and deleting are the same toggle.
func (p *Params) Update(s []Bucket, idx uint64) {
	p.updateIndex(s[:p.BucketsPerVertex()], idx)
}

func (p *Params) updateIndex(s []Bucket, idx uint64) {
	seeds := p.seeds
	rows := p.Rows
	g := hash(idx, seeds[0])
	k := hash(idx, seeds[keySeed])
	s[0].Alpha ^= idx
	s[0].Gamma ^= g
	colSeeds := seeds[1 : 1+p.Columns]
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
func (p *Params) ApplyBatch(s []Bucket, v uint32, neighbors []uint32) {
	s = s[:p.BucketsPerVertex()]
	if p.applyBatchFast(s, v, neighbors) {
		return
	}
	for _, u := range neighbors {
		p.updateIndex(s, EdgeIndex(v, u))
	}
}

// Good reports whether b holds exactly one index (with probability
// 1 − 2^−64 when it does not).
func (p *Params) Good(b Bucket) bool {
	return b.Alpha != 0 && b.Gamma == hash(b.Alpha, p.seeds[0])
}

// Sample draws an index from sketch s using column c (one column per
// Boruvka round). It returns Zero if the deterministic bucket is empty,
// Good with the index if the deterministic bucket or any bucket of column c
// (from row 0 upward) is good, and Fail otherwise. s may be a full sketch
// or a column view from ColumnView. A column outside [0, Columns) is an
// error wrapping ErrTooManyRounds, and an s of neither length one wrapping
// ErrParams; the result is then Fail.
func (p *Params) Sample(s []Bucket, c int) (idx uint64, r Result, err error) {
	if c < 0 || c >= p.Columns {
		return 0, Fail, fmt.Errorf("%w: column %d of a sketch with %d columns (sketch factor %v)",
			ErrTooManyRounds, c, p.Columns, p.Factor)
	}
	full := 1 + p.Columns*p.Rows
	if len(s) != p.Rows+1 && len(s) != full {
		return 0, Fail, fmt.Errorf("%w: sample from %d buckets, want a sketch of %d or a column view of %d",
			ErrParams, len(s), full, p.Rows+1)
	}
	det := s[0]
	if det.Alpha == 0 && det.Gamma == 0 {
		return 0, Zero, nil
	}
	if p.Good(det) {
		return det.Alpha, Good, nil
	}
	var col []Bucket
	if len(s) == p.Rows+1 {
		col = s[1:]
	} else {
		col = s[1+c*p.Rows : 1+(c+1)*p.Rows]
	}
	for _, b := range col {
		if p.Good(b) {
			return b.Alpha, Good, nil
		}
	}
	return 0, Fail, nil
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

// Clear sets every bucket of s to zero.
func Clear(s []Bucket) { clear(s) }

// IsZero reports whether every bucket of s is zero.
func IsZero(s []Bucket) bool {
	for _, b := range s {
		if b != (Bucket{}) {
			return false
		}
	}
	return true
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
	return &Table{p: p, per: per, buckets: make([]Bucket, int(p.Vertices)*per)}
}

// Params returns the table's parameters.
func (t *Table) Params() *Params { return &t.p }

// Bytes returns the table's sketch memory in bytes.
func (t *Table) Bytes() int64 { return int64(len(t.buckets)) * BucketBytes }

// Sketch returns vertex v's sketch, BucketsPerVertex buckets aliasing the
// table. v must be < Vertices.
func (t *Table) Sketch(v uint32) []Bucket {
	i := int(v) * t.per
	return t.buckets[i : i+t.per : i+t.per]
}

// ApplyBatch XORs the edges {v, u}, u in neighbors, into v's sketch in
// place. The caller must hold v exclusively.
func (t *Table) ApplyBatch(v uint32, neighbors []uint32) {
	t.p.ApplyBatch(t.Sketch(v), v, neighbors)
}

// AdviseHugePages asks the kernel to back the table with transparent huge
// pages and reports whether it accepted (see internal/hugepage). Call it
// before the first update. It pays when most vertices get updates; a sparse
// stream then makes every touched 2 MiB resident instead of every touched
// sketch.
func (t *Table) AdviseHugePages() bool { return hugepage.Advise(t.buckets) }

// Reset zeroes every sketch.
func (t *Table) Reset() { clear(t.buckets) }

// Delta computes into dst (BucketsPerVertex buckets, overwritten) the
// sketch of vertex v's batch: the delta a worker returns and the main node
// merges into v's sketch with Merge. Deltas commute.
func (p *Params) Delta(dst []Bucket, v uint32, neighbors []uint32) {
	dst = dst[:p.BucketsPerVertex()]
	clear(dst)
	p.ApplyBatch(dst, v, neighbors)
}

// bucketBytes views buckets as their little-endian bytes (the platform is
// little-endian; see endian_check.go).
func bucketBytes(s []Bucket) []byte {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*BucketBytes)
}
