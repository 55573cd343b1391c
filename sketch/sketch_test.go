package sketch

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParamsGeometry(t *testing.T) {
	f := func(v uint32, factor float64, rows, cols, bytes int) {
		t.Helper()
		p := mustParams(t, v, factor, 1)
		if p.rows != rows || p.columns != cols || p.BytesPerVertex() != bytes {
			t.Errorf("V=%d f=%v: R=%d S=%d bytes=%d, want R=%d S=%d bytes=%d",
				v, factor, p.rows, p.columns, p.BytesPerVertex(), rows, cols, bytes)
		}
	}
	// DESIGN.md §2: V = 2^17 gives R = 34, S = 24, 817 buckets, 13,072 bytes.
	f(1<<17, 1, 34, 24, 13072)
	// kron15: log2(2^15·(2^15−1)/2) just under 29, so R = 30; S = ceil(15/0.737) = 21.
	f(1<<15, 1, 30, 21, 16*(21*30+1))
	// Small graphs take the floor of 18 columns.
	f(1024, 1, 20, 18, 16*(18*20+1))
	f(2, 1, 1, 18, 16*19)
	f(1<<17, 2, 34, 47, 16*(47*34+1))
	for _, bad := range []struct {
		v uint32
		f float64
	}{{0, 1}, {1, 1}, {10, 0}, {10, -1}, {1 << 20, 1e9}, {1 << 20, 1e30}, {2, 1e300}} {
		if _, err := NewParams(bad.v, bad.f, 1); !errors.Is(err, ErrParams) {
			t.Errorf("NewParams(%d, %v) = %v, want ErrParams", bad.v, bad.f, err)
		}
	}
}

// TestLinearity: sketch(A) XOR sketch(B) == sketch(A △ B), and inserting
// then deleting an edge leaves the zero sketch, which samples Zero.
func TestLinearity(t *testing.T) {
	p := mustParams(t, 5000, 1, 11)
	rng := rand.New(rand.NewPCG(1, 2))
	per := p.BucketsPerVertex()
	for trial := range 50 {
		v := rng.Uint32N(5000)
		a := randomNeighbors(rng, 5000, v, 1+rng.IntN(300))
		b := randomNeighbors(rng, 5000, v, 1+rng.IntN(300))
		sa, sb, sx := make([]Bucket, per), make([]Bucket, per), make([]Bucket, per)
		p.Delta(sa, v, a)
		p.Delta(sb, v, b)
		Merge(sa, sb)
		inA := map[uint32]bool{}
		for _, u := range a {
			inA[u] = true
		}
		var x []uint32
		for _, u := range b {
			if inA[u] {
				delete(inA, u)
			} else {
				x = append(x, u)
			}
		}
		for u := range inA {
			x = append(x, u)
		}
		p.Delta(sx, v, x)
		for i := range sa {
			if sa[i] != sx[i] {
				t.Fatalf("trial %d: bucket %d differs: %+v vs %+v", trial, i, sa[i], sx[i])
			}
		}
		// Insert then delete cancels.
		p.ApplyBatch(sx, v, x)
		if !isZero(sx) {
			t.Fatalf("trial %d: insert then delete left a non-zero sketch", trial)
		}
		if _, r, _ := p.Sample(sx, 0); r != Zero {
			t.Fatalf("trial %d: zero sketch samples %v", trial, r)
		}
	}
}

func TestSampleSingleEdgeIsGood(t *testing.T) {
	p := mustParams(t, 100, 1, 3)
	s := make([]Bucket, p.BucketsPerVertex())
	p.update(s, EdgeIndex(7, 42))
	for c := range p.columns {
		idx, r, _ := p.Sample(s, c)
		if r != Good || idx != EdgeIndex(42, 7) {
			t.Fatalf("column %d: %v %#x", c, r, idx)
		}
	}
}

func TestApplyBatchAllocatesNothing(t *testing.T) {
	p := mustParams(t, 1<<17, 1, 3)
	tab := NewTable(mustParams(t, 1<<10, 1, 3))
	s := make([]Bucket, p.BucketsPerVertex())
	nb := randomNeighbors(rand.New(rand.NewPCG(1, 1)), 1<<17, 5, 1000)
	if n := testing.AllocsPerRun(20, func() { p.ApplyBatch(s, 5, nb) }); n != 0 {
		t.Errorf("ApplyBatch allocates %v times per call", n)
	}
	if n := testing.AllocsPerRun(20, func() { tab.ApplyBatch(5, nb[:10]) }); n != 0 {
		t.Errorf("Table.ApplyBatch allocates %v times per call", n)
	}
}

// TestUpdateColumnBatch: the column view UpdateColumnBatch builds is the
// deterministic bucket and column c of the sketch ApplyBatch builds.
func TestUpdateColumnBatch(t *testing.T) {
	p, err := NewParams(5000, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	var neighbors []uint32
	for range 3000 {
		if u := rng.Uint32N(5000); u != 17 {
			neighbors = append(neighbors, u)
		}
	}
	s := make([]Bucket, p.BucketsPerVertex())
	p.ApplyBatch(s, 17, neighbors)
	for c := range p.Columns() {
		view := make([]Bucket, p.Rows()+1)
		p.UpdateColumnBatch(view, c, 17, neighbors[:1000])
		p.UpdateColumnBatch(view, c, 17, neighbors[1000:])
		want := append([]Bucket{s[0]}, s[1+c*p.Rows():1+(c+1)*p.Rows()]...)
		if !slices.Equal(view, want) {
			t.Fatalf("column %d: view differs from ApplyBatch's sketch", c)
		}
	}
}

// TestSample_OutOfColumns checks that a column past the last, a negative
// one, or a slice of the wrong length is an error, not a panic.
func TestSample_OutOfColumns(t *testing.T) {
	p, err := NewParams(1024, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	s := make([]Bucket, p.BucketsPerVertex())
	p.update(s, EdgeIndex(1, 2))
	p.update(s, EdgeIndex(1, 3))
	for _, c := range []int{p.columns, p.columns + 5, -1} {
		_, r, err := p.Sample(s, c)
		if !errors.Is(err, ErrTooManyRounds) || r != Fail ||
			!strings.Contains(err.Error(), fmt.Sprintf("column %d of a sketch with %d columns", c, p.columns)) {
			t.Errorf("column %d: %v, %v; want Fail and ErrTooManyRounds", c, r, err)
		}
	}
	for _, n := range []int{0, 1, p.rows, p.BucketsPerVertex() - 1} {
		if _, _, err := p.Sample(s[:n], 0); !errors.Is(err, ErrParams) {
			t.Errorf("%d buckets: %v, want ErrParams", n, err)
		}
	}
	if _, r, err := p.Sample(s, p.columns-1); err != nil || r == Zero {
		t.Errorf("last column: %v, %v", r, err)
	}
}

// TestTablePrefetch: PrefetchBuckets reads and writes nothing, for every
// vertex up to the last one of the table and every range up to its last
// bucket.
func TestTablePrefetch(t *testing.T) {
	p, err := NewParams(1000, 1, 9)
	if err != nil {
		t.Fatal(err)
	}
	tab := NewTable(p)
	tab.ApplyBatch(999, []uint32{1, 2, 3})
	before := slices.Clone(tab.Sketch(999))
	per := p.BucketsPerVertex()
	for v := range uint32(1000) {
		tab.PrefetchBuckets(v, 0, per)
		tab.PrefetchBuckets(v, per-1, 1)
		tab.PrefetchBuckets(v, per, 0)
	}
	if !slices.Equal(tab.Sketch(999), before) {
		t.Error("PrefetchBuckets changed the last vertex's sketch")
	}
}
