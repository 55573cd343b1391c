package sketch

import "fmt"

// Columns is what a connected-components query reads of the sketches: a
// vertex's deterministic bucket and the rows of one column (Boruvka's
// round r reads column r only, DESIGN.md §2). It views either a whole
// Table (Table.Columns) or a few columns of every vertex copied out of a
// table kept on disk (NewColumns, Put), with one layout: per vertex, the
// deterministic bucket, then the rows of each column held. It is a
// concrete type so that Column inlines into Boruvka's loops. Column may
// be called concurrently; nobody may write the sketches meanwhile; Put of
// distinct vertices may run concurrently.
type Columns struct {
	p        Params
	buckets  []Bucket
	per      int // buckets per vertex
	first, n int // columns [first, first+n) held
}

// Columns views every column of the table's sketches.
func (t *Table) Columns() *Columns {
	return &Columns{p: t.p, buckets: t.buckets, per: t.per, first: 0, n: t.p.columns}
}

// ColumnSetBuckets returns the buckets that n columns of every vertex of
// p's take (NewColumns), deterministic buckets included.
func ColumnSetBuckets(p Params, n int) int64 {
	return int64(p.vertices) * int64(1+n*p.rows)
}

// NewColumns returns a set of columns [first, first+n) of every vertex,
// zero until filled (Put), over buckets, which must hold at least
// ColumnSetBuckets(p, n) buckets; the caller keeps ownership of them. A
// range outside [0, Columns) or a short buffer is an error wrapping
// ErrParams.
func NewColumns(p Params, first, n int, buckets []Bucket) (*Columns, error) {
	if first < 0 || n < 1 || first+n > p.columns {
		return nil, fmt.Errorf("%w: columns [%d, %d) of %d", ErrParams, first, first+n, p.columns)
	}
	need := ColumnSetBuckets(p, n)
	if int64(len(buckets)) < need {
		return nil, fmt.Errorf("%w: %d columns of %d vertices need %d buckets, have %d", ErrParams, n, p.vertices, need, len(buckets))
	}
	return &Columns{p: p, first: first, n: n, per: 1 + n*p.rows, buckets: buckets[:need]}, nil
}

// Params returns the sketch parameters.
func (cs *Columns) Params() Params { return cs.p }

// Holds reports whether column c is in the set.
func (cs *Columns) Holds(c int) bool { return c >= cs.first && c < cs.first+cs.n }

// Put sets bucket row of column c of vertex v's in the set to b, or, with
// c < 0, v's deterministic bucket. c must be held (Holds) or negative.
func (cs *Columns) Put(v uint32, c, row int, b Bucket) {
	i := int(v) * cs.per
	if c >= 0 {
		i += 1 + (c-cs.first)*cs.p.rows + row
	}
	cs.buckets[i] = b
}

// Column returns v's deterministic bucket and the Rows buckets of column
// c, aliasing the sketches: the caller must not write them. c must be
// held (Holds); another column is a bug and panics.
func (cs *Columns) Column(v uint32, c int) (Bucket, []Bucket) {
	if uint(c-cs.first) >= uint(cs.n) {
		panic(fmt.Sprintf("BUG: sketch: column %d read from a set of columns [%d, %d)", c, cs.first, cs.first+cs.n))
	}
	i := int(v) * cs.per
	lo := i + 1 + (c-cs.first)*cs.p.rows
	return cs.buckets[i], cs.buckets[lo : lo+cs.p.rows : lo+cs.p.rows]
}

// SampleParts is SampleColumn for a deterministic bucket and the rows of
// one column held apart (Columns.Column's results).
func (p Params) SampleParts(det Bucket, rows []Bucket) (uint64, Result) { return p.sample(det, rows) }
