package streamgen

import (
	"iter"
	"math"
	"math/rand/v2"
)

// sparseCutoff is the largest chance that a pair has any update at all
// (final edge, or transient in some round) for which a uniform model
// (Erdős–Rényi) walks each row by geometric skips instead of deciding
// every pair. At 1/64 a skip (a logarithm and two hashes) costs about as
// much as the 64 pair decisions it replaces; below it the walk wins by a
// factor that grows as the chance shrinks (≈ 800 at the 1.2·10⁻³ of a
// 1 G-update stream on 2^20 vertices).
const sparseCutoff = 1.0 / 64

// sparseModel is the sparse form of a uniform pairModel. Row a's pairs
// (a, b), b > a, that have at least one update are found by geometric
// skips drawn from a generator seeded by (seed, a); each such pair's fate
// (an edge churned in k rounds, or a non-edge transient in k ≥ 1 rounds)
// is drawn from the same generator, from the distribution of the dense
// model conditioned on "has an update"; the times of its updates are the
// dense model's, hashed from the pair. Each pass walks each row from its
// seed again, so every pass sees the same pairs and the output is a pure
// function of the seed, whatever the workers. Read-only after
// construction.
type sparseModel struct {
	// invRate is −1/ln(1−q) for q the chance that a pair has an update:
	// an exponential variate times invRate, rounded down, is a geometric
	// skip.
	invRate float64
	// rowKey seeds the per-row generators.
	rowKey uint64
	// plain and isolated list the fates of a selected pair with neither
	// or at least one endpoint isolated: a 63-bit draw below below[i]
	// (and not below an earlier one) gives n[i] updates. isolated's
	// last threshold is below 2^63: a draw above it means the pair has
	// no update after all (an isolated endpoint forbids the edge).
	plain, isolated fates
}

// fates is a cumulative distribution over update counts.
type fates struct {
	below []uint64
	n     []int
}

// binomial returns the chance of k successes in r trials of chance p.
func binomial(r, k int, p float64) float64 {
	c := 1.0
	for i := range k {
		c = c * float64(r-i) / float64(i+1)
	}
	return c * math.Pow(p, float64(k)) * math.Pow(1-p, float64(r-k))
}

// anyUpdate returns the chance that a pair of edge chance p, with
// per-round transient chance trans over rounds rounds, has an update.
func anyUpdate(p, trans float64, rounds int) float64 {
	return p + (1-p)*-math.Expm1(float64(rounds)*math.Log1p(-trans))
}

// newSparseModel returns the sparse form of a model whose pairs are edges
// with chance p, churned with chance churn and transient with chance
// trans per round over rounds rounds; q = anyUpdate(p, trans, rounds).
// With q = 0 no row has a pair.
func newSparseModel(seed uint64, p, churn, trans float64, rounds int, q float64) *sparseModel {
	s := &sparseModel{invRate: -1 / math.Log1p(-q), rowKey: mix(seed ^ 0x726f7773)} // "rows"
	add := func(f *fates, cum *float64, pr float64, n int) {
		if pr <= 0 {
			return
		}
		*cum += pr
		f.below = append(f.below, threshold63(*cum/q))
		f.n = append(f.n, n)
	}
	var cum, cumIso float64
	for k := 0; k <= rounds; k++ {
		add(&s.plain, &cum, p*binomial(rounds, k, churn), 2*k+1)
	}
	for k := 1; k <= rounds; k++ {
		pr := binomial(rounds, k, trans)
		add(&s.plain, &cum, (1-p)*pr, 2*k)
		add(&s.isolated, &cumIso, pr, 2*k)
	}
	// The plain fates cover every selected pair, whatever the rounding.
	if len(s.plain.below) > 0 {
		s.plain.below[len(s.plain.below)-1] = 1 << 63
	}
	return s
}

// draw returns the update count of a selected pair for the 63-bit draw
// r, or 0.
func (f *fates) draw(r uint64) int {
	for i, b := range f.below {
		if r < b {
			return f.n[i]
		}
	}
	return 0
}

// row yields the pairs (a, b), b > a, with at least one update, in
// increasing b, with their update count n (odd for a final edge, even for
// a transient non-edge); the times of the updates are in t[:n] when b is
// yielded. It walks every pair for a dense model and skips for a sparse
// one.
func (g *pairGen) row(a uint32, t *[maxPairUpdates]uint64) iter.Seq2[uint32, int] {
	if g.sparse != nil {
		return func(yield func(uint32, int) bool) { g.sparseRow(a, t, yield) }
	}
	return func(yield func(uint32, int) bool) {
		isoA := g.isolated[a]
		for b := a + 1; b < g.vertices; b++ {
			if _, n := g.updates(a, b, isoA, t); n > 0 && !yield(b, n) {
				return
			}
		}
	}
}

// sparseRow is row for a sparse model.
func (g *pairGen) sparseRow(a uint32, t *[maxPairUpdates]uint64, yield func(uint32, int) bool) {
	sp := g.sparse
	if len(sp.plain.below) == 0 {
		return // no pair has an update
	}
	src := rowSource(mix(sp.rowKey + uint64(a)*golden))
	rng := rand.New(&src)
	isoA := g.isolated[a]
	limit := float64(g.vertices)
	b := int64(a)
	for {
		// The number of pairs without an update before the next one
		// with is geometric: P(skip ≥ k) = P(E ≥ k·ln(1/(1−q))) =
		// (1−q)^k for E exponential, drawn by the ziggurat method (a
		// logarithm per pair was a quarter of the generator's time).
		skip := math.Floor(rng.ExpFloat64() * sp.invRate)
		if skip >= limit {
			return
		}
		b += 1 + int64(skip)
		if b >= int64(g.vertices) {
			return
		}
		f := &sp.plain
		if isoA || g.isolated[b] {
			f = &sp.isolated
		}
		n := f.draw(rng.Uint64() >> 1)
		if n == 0 {
			continue
		}
		g.times(pairHash(a, uint32(b)), n, t)
		if !yield(uint32(b), n) {
			return
		}
	}
}

// rowSource is a row's generator: splitmix64 from a per-row seed.
type rowSource uint64

// Uint64 returns the next value.
func (s *rowSource) Uint64() uint64 {
	*s += golden
	return mix(uint64(*s))
}
