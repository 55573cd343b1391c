package sketch

import "fmt"

// Sample draws an index from sketch s (BucketsPerVertex buckets) using
// column c (one column per Boruvka round). It returns Zero if the
// deterministic bucket is empty, Good with the index if the deterministic
// bucket or any bucket of column c (from row 0 upward) is good, and Fail
// otherwise. A column outside [0, Columns) is an error wrapping
// ErrTooManyRounds, and an s of another length one wrapping ErrParams; the
// result is then Fail.
func (p Params) Sample(s []Bucket, c int) (idx uint64, r Result, err error) {
	if c < 0 || c >= p.columns {
		return 0, Fail, fmt.Errorf("%w: column %d of a sketch with %d columns (sketch factor %v)",
			ErrTooManyRounds, c, p.columns, p.factor)
	}
	if full := p.BucketsPerVertex(); len(s) != full {
		return 0, Fail, fmt.Errorf("%w: sample from %d buckets, want a sketch of %d", ErrParams, len(s), full)
	}
	idx, r = p.sample(s[0], s[1+c*p.rows:1+(c+1)*p.rows])
	return idx, r, nil
}
