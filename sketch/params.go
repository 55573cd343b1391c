package sketch

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// DefaultFactor is the sketch factor f that DESIGN.md §2 defaults to.
const DefaultFactor = 1.0

// MaxColumns bounds Params.Columns() (sketch factor up to about 22 at V = 2^32).
const MaxColumns = 1024

// minColumns is the floor on S, and columnDivisor the 0.737 of
// S = max(18, ceil(f·log2(V)/0.737)): the expected share of supernodes that
// a Boruvka round merges, so that S columns leave rounds to spare (DESIGN.md
// §2; GraphZeppelin, SIGMOD 2022, §4).
const (
	minColumns    = 18
	columnDivisor = 0.737
)

// keySeed is the index in Params.seeds of the seed of the index key (see
// columnHash), past every column's seed.
const keySeed = MaxColumns + 1

// ErrParams is wrapped by NewParams for a vertex count or factor it cannot use.
var ErrParams = errors.New("sketch: bad parameters")

// Params fixes the geometry and hash seeds shared by all sketches of one
// graph. It is an immutable value: build it with NewParams, copy it
// freely, and share it between goroutines. The zero Params is not usable.
type Params struct {
	vertices uint32
	factor   float64
	seed     uint64
	rows     int
	columns  int
	sets     int // WithSets' k; columns = sets · the columns of one set

	// seeds[0] seeds the checksum hash, seeds[1+c] column c's hash and
	// seeds[keySeed] the index key that every column hash starts from.
	seeds *[keySeed + 1]uint64
	// lanes describes the columns to the AVX-512 kernel (see laneLayout).
	lanes *lanes
}

// lanes is the column layout of the AVX-512 kernel: ceil(columns/8)
// records of laneRecord words.
type lanes struct {
	words []uint64
}

// laneRecord is the number of words per group of 8 columns in
// Params.lanes: 8 column seeds, 8 bucket byte offsets and 8 row masks.
const laneRecord = 24

// prefetchMinBatch is the batch size from which the kernel prefetches the
// whole sketch first: a batch this large touches most of the rows that
// hold more than a few buckets' worth of lines.
const prefetchMinBatch = 512

// laneLayout builds Params.lanes: for group k and lane j (column
// c = 8k + j), word 24k+j is seed_c, word 24k+8+j is 16·(1 + c·R + 63),
// the byte offset of bucket (c, 63 − lzcnt) for lzcnt = 0, and word
// 24k+16+j is the row mask 2^R − 1: depth = ctz(h) < R exactly when h has
// one of those bits set. Padding lanes past the last column have mask 0,
// so the kernel discards them.
func (p Params) laneLayout() *lanes {
	groups := (p.columns + 7) / 8
	lay := make([]uint64, groups*laneRecord)
	rowMask := uint64(1)<<p.rows - 1 // rows <= 64; 1<<64 is 0 in Go
	for c := range p.columns {
		k, j := c/8, c%8
		lay[k*laneRecord+j] = p.seeds[1+c]
		lay[k*laneRecord+8+j] = uint64(BucketBytes * (1 + c*p.rows + 63))
		lay[k*laneRecord+16+j] = rowMask
	}
	return &lanes{words: lay}
}

// NewParams computes the geometry of DESIGN.md §2 for vertices and sketch
// factor f, with hash seeds derived from seed. It returns an error wrapping
// ErrParams for vertices < 2 or a factor that is not positive and finite or
// that needs more than MaxColumns columns.
func NewParams(vertices uint32, factor float64, seed uint64) (Params, error) {
	if vertices < 2 {
		return Params{}, fmt.Errorf("%w: %d vertices, need at least 2", ErrParams, vertices)
	}
	if !(factor > 0) || math.IsInf(factor, 0) {
		return Params{}, fmt.Errorf("%w: sketch factor %v, need > 0", ErrParams, factor)
	}
	v := float64(vertices)
	rows := int(math.Ceil(math.Log2(v*(v-1)/2))) + 1
	// Compare in floating point: a huge factor would overflow int.
	need := math.Ceil(factor * math.Log2(v) / columnDivisor)
	if need > MaxColumns {
		return Params{}, fmt.Errorf("%w: sketch factor %v needs %.0f columns, at most %d",
			ErrParams, factor, need, MaxColumns)
	}
	cols := max(minColumns, int(need))
	p := Params{vertices: vertices, factor: factor, seed: seed, rows: rows, columns: cols, sets: 1,
		seeds: new([keySeed + 1]uint64)}
	// Seeds are a splitmix64 sequence from seed: distinct and independent
	// looking, so the checksum never shares a seed with a column.
	s := seed
	for i := range p.seeds {
		s += 0x9e3779b97f4a7c15
		p.seeds[i] = mix64(s)
	}
	p.lanes = p.laneLayout()
	return p, nil
}

// WithSets returns p with k >= 1 independent sketch sets: k·Columns()
// columns, set i being columns [i·S, (i+1)·S) for S = p.Columns(), each
// column of its own seed, with one deterministic bucket for all. A k-forest
// query samples set i's columns only (Ahn, Guha, McGregor, SODA 2012,
// §3.2: the sets must be independent, and columns are). Every update
// hashes the index once for all sets and writes one sketch, not k. It
// returns an error wrapping ErrParams for k < 1 or more than MaxColumns
// columns in all; p must have one set.
func (p Params) WithSets(k int) (Params, error) {
	if k < 1 || p.sets != 1 || k*p.columns > MaxColumns {
		return Params{}, fmt.Errorf("%w: %d sketch sets of %d columns (at most %d columns in all)",
			ErrParams, k, p.columns, MaxColumns)
	}
	p.columns *= k
	p.sets = k
	p.lanes = p.laneLayout()
	return p, nil
}

// Sets returns the number of sketch sets (WithSets), 1 for NewParams'.
func (p Params) Sets() int { return p.sets }

// SetColumns returns the columns of one set: the Boruvka rounds a query
// over one set may run.
func (p Params) SetColumns() int { return p.columns / p.sets }

// Vertices returns the number of vertices, in [2, 2^32).
func (p Params) Vertices() uint32 { return p.vertices }

// Factor returns the sketch factor f: columns scale with it.
func (p Params) Factor() float64 { return p.factor }

// Seed returns the seed of the checksum and column hashes.
func (p Params) Seed() uint64 { return p.seed }

// Rows returns R, the buckets per column.
func (p Params) Rows() int { return p.rows }

// Columns returns S, the ℓ0 samplers per vertex, of every set
// (SetColumns per set).
func (p Params) Columns() int { return p.columns }

// BucketsPerVertex returns S·R + 1.
func (p Params) BucketsPerVertex() int { return p.columns*p.rows + 1 }

// BytesPerVertex returns the sketch memory of one vertex in bytes:
// 16·(S·R + 1).
func (p Params) BytesPerVertex() int { return BucketBytes * p.BucketsPerVertex() }

// TableBytes returns the memory of all vertices' sketches in bytes.
func (p Params) TableBytes() int64 { return int64(p.vertices) * int64(p.BytesPerVertex()) }

// mix64 is the splitmix64 finalizer (Steele, Lea, Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014): a bijection on uint64 in
// which every output bit depends on every input bit.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// EdgeIndex returns the position of the undirected edge {u,v} in a vertex's
// incidence vector: min(u,v)<<32 | max(u,v). It is never 0 for u != v.
func EdgeIndex(u, v uint32) uint64 {
	if u > v {
		u, v = v, u
	}
	return uint64(u)<<32 | uint64(v)
}

// EdgeOf inverts EdgeIndex: it returns (min, max).
func EdgeOf(idx uint64) (u, v uint32) { return uint32(idx >> 32), uint32(idx) }

// depth returns the bucket row of hash value h, which is R or more when the
// index goes into no bucket of that column.
func depth(h uint64) int { return bits.TrailingZeros64(h) }
