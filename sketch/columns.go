package sketch

import "fmt"

// Columns is what a connected-components query reads of the sketches: a
// vertex's deterministic bucket and the rows of one column (Boruvka's
// round r reads column r only, DESIGN.md §2). *Table is one; a ColumnSet,
// a few columns of every vertex copied out of a table kept on disk, is
// another. Column may be called concurrently; nobody may write the
// sketches meanwhile.
type Columns interface {
	// Params returns the sketch parameters.
	Params() Params
	// Column returns v's deterministic bucket and the Rows buckets of
	// column c, aliasing the sketches: the caller must not write them.
	Column(v uint32, c int) (det Bucket, rows []Bucket)
}

// Column returns v's deterministic bucket and the rows of column c, which
// must be in [0, Columns).
func (t *Table) Column(v uint32, c int) (Bucket, []Bucket) {
	s := t.Sketch(v)
	lo := 1 + c*t.p.rows
	return s[0], s[lo : lo+t.p.rows : lo+t.p.rows]
}

// SampleParts is SampleColumn for a deterministic bucket and the rows of
// one column held apart (Columns.Column's results).
func (p Params) SampleParts(det Bucket, rows []Bucket) (uint64, Result) { return p.sample(det, rows) }

// ColumnSet holds columns [First, First+N) of every vertex's sketch, with
// the deterministic buckets, in 1 + N·Rows buckets per vertex: what a
// query needs of the sketches for N Boruvka rounds, about 1/Columns·N of
// the table. It is filled by Fill, one vertex at a time, and read through
// Columns. Fill of distinct vertices may run concurrently.
type ColumnSet struct {
	p        Params
	first, n int
	per      int // 1 + n·rows
	buckets  []Bucket
}

// ColumnSetBuckets returns the buckets a ColumnSet of n columns needs for
// p's vertices.
func ColumnSetBuckets(p Params, n int) int64 {
	return int64(p.vertices) * int64(1+n*p.rows)
}

// NewColumnSet returns a set of columns [first, first+n) over buckets,
// which must hold at least ColumnSetBuckets(p, n) buckets; the caller
// keeps ownership of them. A range outside [0, Columns) or a short buffer
// is an error wrapping ErrParams.
func NewColumnSet(p Params, first, n int, buckets []Bucket) (*ColumnSet, error) {
	if first < 0 || n < 1 || first+n > p.columns {
		return nil, fmt.Errorf("%w: columns [%d, %d) of %d", ErrParams, first, first+n, p.columns)
	}
	need := ColumnSetBuckets(p, n)
	if int64(len(buckets)) < need {
		return nil, fmt.Errorf("%w: %d columns of %d vertices need %d buckets, have %d", ErrParams, n, p.vertices, need, len(buckets))
	}
	return &ColumnSet{p: p, first: first, n: n, per: 1 + n*p.rows, buckets: buckets[:need]}, nil
}

// Params returns the sketch parameters.
func (cs *ColumnSet) Params() Params { return cs.p }

// Holds reports whether column c is in the set.
func (cs *ColumnSet) Holds(c int) bool { return c >= cs.first && c < cs.first+cs.n }

// Fill copies the set's columns of sketch s (BucketsPerVertex buckets,
// vertex v's) into the set.
func (cs *ColumnSet) Fill(v uint32, s []Bucket) {
	dst := cs.buckets[int(v)*cs.per : (int(v)+1)*cs.per]
	dst[0] = s[0]
	copy(dst[1:], s[1+cs.first*cs.p.rows:1+(cs.first+cs.n)*cs.p.rows])
}

// Column returns v's deterministic bucket and the rows of column c, which
// must be held (Holds); another column is a bug and panics.
func (cs *ColumnSet) Column(v uint32, c int) (Bucket, []Bucket) {
	if !cs.Holds(c) {
		panic(fmt.Sprintf("BUG: sketch: column %d read from a set of columns [%d, %d)", c, cs.first, cs.first+cs.n))
	}
	s := cs.buckets[int(v)*cs.per : (int(v)+1)*cs.per]
	lo := 1 + (c-cs.first)*cs.p.rows
	return s[0], s[lo : lo+cs.p.rows : lo+cs.p.rows]
}
