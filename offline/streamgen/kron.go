package streamgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
)

// Initiator is the Graph500 2×2 Kronecker initiator: the probability that
// one R-MAT drop picks quadrant (0,0), (0,1), (1,0), (1,1) at each level.
var Initiator = [2][2]float64{{0.57, 0.19}, {0.19, 0.05}}

// MaxKronScale is the largest scale Kron accepts. Scale 17 has 2^33 pairs;
// each pass over them takes minutes on a few cores.
const MaxKronScale = 20

// KronConfig configures Kron.
type KronConfig struct {
	// Scale N gives 2^N vertices, in [2, MaxKronScale].
	Scale int
	// Density is the expected share of vertex pairs that are edges before
	// isolation, in (0, 1). The published kron13 stream has 16.7 M edges on
	// 8,192 vertices, about 0.5.
	Density float64
	Config
}

// DefaultKronConfig returns the settings that reproduce the shape of the
// field's published kronN streams: density 0.5, one churn round deleting
// and re-inserting 1.6% of the edges, 2% transient updates, and
// DefaultIsolated(scale) isolated vertices. For scale 13 that is about
// 16.7 M edges and 17.6 M updates; for scale 15 about 268 M edges and
// 281 M updates.
func DefaultKronConfig(scale int, seed uint64) KronConfig {
	return KronConfig{Scale: scale, Density: 0.5, Config: Config{
		Seed: seed, Rounds: 1, Churn: 0.016, Transient: 0.02, Isolated: DefaultIsolated(scale),
	}}
}

// DefaultIsolated returns the number of deliberately isolated vertices for
// a Kronecker graph of the given scale: 25·2^((scale−13)/2), rounded, so
// that kron13, kron15 and kron17 get 25, 50 and 100, matching the 26, 51
// and 101 components of the published streams.
func DefaultIsolated(scale int) int {
	return int(math.Round(25 * math.Pow(2, float64(scale-13)/2)))
}

// Kron writes a dynamic stream whose final graph is a stochastic Kronecker
// graph to out (in cfg.Format: binary or packed) and, if cum is not nil, the final edge set
// to cum (untyped text format: "vertices edges", then "src dst" lines).
//
// The graph follows the Poisson model of repeated R-MAT drops: with M drops,
// pair {a, b} is an edge with probability 1 − exp(−2·M·p(a,b)), where
// p(a,b) is the product of Initiator[a_i][b_i] over the Scale bits of a and
// b and the factor 2 sums both orientations. M is solved for so that the
// expected number of edges is Density·V·(V−1)/2. Vertex labels are then
// randomly permuted. See the package doc for the stream's shape.
//
// It returns the summary, cfg.Validate's error, an error from the writers,
// or ctx.Err() if ctx is cancelled.
func Kron(ctx context.Context, cfg KronConfig, out, cum io.Writer) (Summary, error) {
	if err := cfg.Validate(); err != nil {
		return Summary{}, err
	}
	m := kronModel(cfg.Scale, cfg.Density)
	g := newPairGen(m.modelParams, cfg.Config)
	s, err := g.generate(ctx, "kron", out, cum)
	s.Seed, s.Scale, s.Drops, s.Density = cfg.Seed, cfg.Scale, uint64(math.Round(m.drops)), cfg.Density
	return s, err
}

// Validate reports every problem of c at once: a *FieldError for each
// field out of range, joined by errors.Join.
func (c KronConfig) Validate() error {
	var errs []error
	vertices := uint32(0) // unknown
	if c.Scale < 2 || c.Scale > MaxKronScale {
		errs = append(errs, &FieldError{"Scale", c.Scale, fmt.Sprintf("[2, %d]", MaxKronScale)})
	} else {
		vertices = 1 << c.Scale
	}
	errs = append(errs, c.check(vertices)...)
	if !(c.Density > 0 && c.Density < 1) {
		errs = append(errs, &FieldError{"Density", c.Density, "(0, 1)"})
	}
	return errors.Join(errs...)
}

type kron struct {
	modelParams
	drops float64
}

// kronModel computes the edge probability of every class of pairs and
// solves for the number of drops.
func kronModel(scale int, density float64) kron {
	n := scale
	type class struct {
		pairs float64 // unordered pairs a != b in the class
		p     float64 // drop probability of one orientation
	}
	var cls []class
	idx := make([]int, (n+1)*(n+1))
	fact := make([]float64, n+1)
	fact[0] = 1
	for i := 1; i <= n; i++ {
		fact[i] = fact[i-1] * float64(i)
	}
	for k11 := 0; k11 <= n; k11++ {
		for kd := 0; kd <= n-k11; kd++ {
			k00 := n - k11 - kd
			idx[k11*(n+1)+kd] = -1
			if kd == 0 {
				continue // a == b
			}
			ordered := fact[n] / (fact[k00] * fact[kd] * fact[k11]) * math.Pow(2, float64(kd))
			p := math.Pow(Initiator[0][0], float64(k00)) * math.Pow(Initiator[0][1], float64(kd)) *
				math.Pow(Initiator[1][1], float64(k11))
			idx[k11*(n+1)+kd] = len(cls)
			cls = append(cls, class{pairs: ordered / 2, p: p})
		}
	}
	expected := func(drops float64) float64 {
		e := 0.0
		for _, c := range cls {
			e += c.pairs * -math.Expm1(-2*drops*c.p)
		}
		return e
	}
	v := math.Ldexp(1, n)
	target := density * v * (v - 1) / 2
	lo, hi := 0.0, 200.0 // ln(drops)
	for range 200 {
		mid := (lo + hi) / 2
		if expected(math.Exp(mid)) < target {
			lo = mid
		} else {
			hi = mid
		}
	}
	drops := math.Exp((lo + hi) / 2)
	probs := make([]float64, len(idx))
	for i, j := range idx {
		if j >= 0 {
			probs[i] = -math.Expm1(-2 * drops * cls[j].p)
		}
	}
	return kron{
		modelParams: modelParams{name: "kron", vertices: uint32(1) << n, idBits: uint(n),
			classes: probs, expectedEdges: expected(drops)},
		drops: drops,
	}
}
