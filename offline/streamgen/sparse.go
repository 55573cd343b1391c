package streamgen

import (
	"math"
	"math/rand/v2"
	"slices"
)

// sparseCutoff is the largest chance that a pair has any update at all
// (final edge, or transient in some round) for which a uniform model
// (Erdős–Rényi) walks each row by geometric skips instead of deciding
// every pair. The dense scan spends about 80 ns of one core per pair
// (BenchmarkKron: 12.5 M pairs/s on the 2-core Intel Xeon), the walk
// about 40 ns per pair with an update, so the walk would win up to q
// near 1/2; the cut-off stays far below that so that the streams denser
// than 1/64 keep their pair-by-pair output.
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
	// anyIsolated says whether isolated fates may apply: without it the
	// walk never reads the isolated flags (a cache miss per pair at 2^20
	// vertices).
	anyIsolated bool
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
func newSparseModel(seed uint64, p, churn, trans float64, rounds int, q float64, anyIsolated bool) *sparseModel {
	s := &sparseModel{invRate: -1 / math.Log1p(-q), rowKey: mix(seed ^ 0x726f7773), // "rows"
		anyIsolated: anyIsolated}
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

// rowWalk walks one row's pairs (a, b), b > a, that have at least one
// update, in increasing b: every pair for a dense model, by skips for a
// sparse one. Passes call next in a plain loop: a static call per pair
// with updates, not an iterator's indirect yield.
type rowWalk struct {
	g    *pairGen
	a    uint32
	isoA bool
	b    int64      // the pair last returned, or a
	rng  *rand.Rand // the row's generator (sparse)
	// A sparse walk with window set skips the pairs with no update in
	// times [lo, hi) before it sorts their times; a dense one returns
	// them anyway.
	window bool
	lo, hi uint64
}

// walk starts the walk of row a.
func (g *pairGen) walk(a uint32) rowWalk {
	w := rowWalk{g: g, a: a, isoA: g.isolated[a], b: int64(a)}
	if g.sparse != nil {
		src := rowSource(mix(g.sparse.rowKey + uint64(a)*golden))
		w.rng = rand.New(&src)
	}
	return w
}

// next returns the row's next pair with updates, (a, b), and its update
// count n (odd for a final edge, even for a transient non-edge), with the
// times of the updates in t[:n]; n = 0 at the end of the row.
func (w *rowWalk) next(t *[maxPairUpdates]uint64) (b uint32, n int) {
	g := w.g
	if g.sparse == nil {
		for b := uint32(w.b) + 1; b < g.vertices; b++ {
			if _, n := g.updates(w.a, b, w.isoA, t); n > 0 {
				w.b = int64(b)
				return b, n
			}
		}
		w.b = int64(g.vertices)
		return 0, 0
	}
	sp := g.sparse
	if len(sp.plain.below) == 0 {
		return 0, 0 // no pair has an update
	}
	for {
		// The number of pairs without an update before the next one
		// with is geometric: P(skip ≥ k) = P(E ≥ k·ln(1/(1−q))) =
		// (1−q)^k for E exponential, drawn by the ziggurat method (4 ns;
		// −ln of a uniform costs 10).
		skip := w.rng.ExpFloat64() * sp.invRate
		if skip >= float64(g.vertices) {
			return 0, 0
		}
		w.b += 1 + int64(skip)
		if w.b >= int64(g.vertices) {
			return 0, 0
		}
		b := uint32(w.b)
		f := &sp.plain
		if sp.anyIsolated && (w.isoA || g.isolated[b]) {
			f = &sp.isolated
		}
		// The fate comes from the pair's own hash, independent of the
		// row generator that selected it.
		x := pairHash(w.a, b)
		n := f.draw(mix(x+g.keys.edge) >> 1)
		if n == 0 || (w.window && !g.mayHit(x, n, w.lo, w.hi)) {
			continue
		}
		g.times(x, n, t)
		return b, n
	}
}

// mayHit reports whether the pair of pairHash x with n updates may have an
// update in times [lo, hi): false only when the first draw of its times
// (times' attempt 0) is n distinct times, none in [lo, hi). A window pass
// skips most pairs so, without sorting their times.
func (g *pairModel) mayHit(x uint64, n int, lo, hi uint64) bool {
	shift := 64 - g.timeBits
	base := mix(x + g.keys.time)
	if n == 1 {
		t := base >> shift
		return t >= lo && t < hi
	}
	var t [maxPairUpdates]uint64
	for i := range n {
		t[i] = mix(base+uint64(i)*golden) >> shift
		if t[i] >= lo && t[i] < hi || slices.Contains(t[:i], t[i]) {
			return true
		}
	}
	return false
}

// rowSource is a row's generator: splitmix64 from a per-row seed.
type rowSource uint64

// Uint64 returns the next value.
func (s *rowSource) Uint64() uint64 {
	*s += golden
	return mix(uint64(*s))
}
