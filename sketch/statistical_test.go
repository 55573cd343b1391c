package sketch

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// These tests check the ℓ0 samplers statistically, with bounds tight
// enough to catch a bad hash: `go test -tags weakhash -run Statistical`
// swaps in a multiplicative hash without mixing, and they fail.

// idealFail returns the probability that one column fails for a vector of k
// >= 2 indices when depths are truly independent and geometric: no row
// d < rows holds exactly one index. An index that reached row d lands there
// with probability 1/2, so f(m, d) = Σ_{j≠1} C(m,j) 2^−m f(m−j, d+1) with
// f(·, rows) = 1 and f(0, ·) = 1.
func idealFail(k, rows int) float64 {
	f := make([]float64, k+1) // f[m] for the current d, built from d = rows down
	for m := range f {
		f[m] = 1
	}
	for d := rows - 1; d >= 0; d-- {
		g := make([]float64, k+1)
		for m := 0; m <= k; m++ {
			sum := 0.0
			for j := 0; j <= m; j++ {
				if j == 1 {
					continue
				}
				sum += math.Exp(lchoose(m, j)-float64(m)*math.Ln2) * f[m-j]
			}
			g[m] = sum
		}
		f = g
	}
	return f[k]
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// TestStatisticalSampleFailRate builds sketches of k-edge vectors, random
// and structured, and samples every column. Wrong samples (Good with an
// index not in the vector) must not occur; the share of failed samples must
// be within 5 standard deviations of the ideal rate for the geometry.
func TestStatisticalSampleFailRate(t *testing.T) {
	const vertices = 1 << 17
	for _, k := range []int{2, 3, 5, 16, 100, 1000} {
		for _, structured := range []bool{false, true} {
			p := mustParams(t, vertices, 1, 0xfeed+uint64(k))
			trials := max(40, 24000/k) // sketches; each gives p.columns samples
			if testing.Short() {
				trials = max(20, trials/8)
			}
			rng := rand.New(rand.NewPCG(uint64(k), 7))
			s := make([]Bucket, p.BucketsPerVertex())
			fails, wrong, samples := 0, 0, 0
			for trial := range trials {
				v := rng.Uint32N(vertices - uint32(k) - 1)
				var nb []uint32
				if structured {
					// Consecutive neighbours: low bits of the indices are
					// structured, which a hash without mixing betrays.
					nb = make([]uint32, k)
					for i := range nb {
						nb[i] = v + 1 + uint32(i)
					}
				} else {
					nb = randomNeighbors(rng, vertices, v, k)
				}
				in := make(map[uint64]bool, k)
				for _, u := range nb {
					in[EdgeIndex(v, u)] = true
				}
				p.Delta(s, v, nb)
				for c := range p.columns {
					idx, r, _ := p.Sample(s, c)
					samples++
					switch r {
					case Fail:
						fails++
					case Zero:
						t.Fatalf("k=%d trial %d: Zero for a non-zero vector", k, trial)
					case Good:
						if !in[idx] {
							wrong++
						}
					}
				}
			}
			want := idealFail(k, p.rows)
			got := float64(fails) / float64(samples)
			sd := math.Sqrt(want * (1 - want) / float64(samples))
			t.Logf("k=%d structured=%v: fail rate %.4f, ideal %.4f ± %.4f (%d samples), wrong %d",
				k, structured, got, want, sd, samples, wrong)
			if wrong != 0 {
				t.Errorf("k=%d structured=%v: %d wrong samples in %d (seed %#x); expected 0",
					k, structured, wrong, samples, p.seed)
			}
			if math.Abs(got-want) > 5*sd+1e-9 {
				t.Errorf("k=%d structured=%v: fail rate %.4f, ideal %.4f; off by %.1f sd (seed %#x)",
					k, structured, got, want, math.Abs(got-want)/sd, p.seed)
			}
		}
	}
}

// TestStatisticalDepthIndependence checks that column depths are geometric
// (P(depth = d) = 2^−(d+1)) and pairwise independent, across every pair of
// columns (they all start from one index key) and between the checksum
// hash and every column (a shared seed there is a known weakness of one
// public implementation). It uses a chi-square test on depths capped at 4
// (25 cells, 24 degrees of freedom) with a threshold of 80, whose
// false-alarm probability is below 1e-7 per pair (below 1e-4 over the 300
// pairs of 24 columns).
func TestStatisticalDepthIndependence(t *testing.T) {
	const cap_, n = 4, 200000
	p := mustParams(t, 1<<17, 1, 99)
	prob := func(d int) float64 {
		if d == cap_ {
			return math.Ldexp(1, -cap_)
		}
		return math.Ldexp(1, -(d + 1))
	}
	capd := func(h uint64) uint8 { return uint8(min(bits.TrailingZeros64(h), cap_)) }
	// Indices of a structured workload: every edge of consecutive vertices.
	idxs := make([]uint64, 0, n)
	for u := uint32(1); len(idxs) < n; u++ {
		for w := u + 1; w < u+40 && len(idxs) < n; w++ {
			idxs = append(idxs, EdgeIndex(u, w))
		}
	}
	// depths[0] holds the checksum's capped depths, depths[1+c] column c's.
	depths := make([][]uint8, 1+p.columns)
	for i := range depths {
		depths[i] = make([]uint8, n)
	}
	for j, idx := range idxs {
		depths[0][j] = capd(hash(idx, p.seeds[0]))
		k := hash(idx, p.seeds[keySeed])
		for c := range p.columns {
			depths[1+c][j] = capd(columnHash(k, p.seeds[1+c]))
		}
	}
	chi2 := func(a, b []uint8) float64 {
		var cnt [cap_ + 1][cap_ + 1]float64
		for j := range a {
			cnt[a[j]][b[j]]++
		}
		x := 0.0
		for a := range cnt {
			for b := range cnt[a] {
				e := float64(n) * prob(a) * prob(b)
				x += (cnt[a][b] - e) * (cnt[a][b] - e) / e
			}
		}
		return x
	}
	const threshold = 80
	for c := range p.columns {
		if x := chi2(depths[0], depths[1+c]); x > threshold {
			t.Errorf("checksum and column %d: chi-square %.1f > %d", c, x, threshold)
		}
		for d := c + 1; d < p.columns; d++ {
			if x := chi2(depths[1+c], depths[1+d]); x > threshold {
				t.Errorf("columns %d and %d: chi-square %.1f > %d: depths not independent/geometric", c, d, x, threshold)
			}
		}
	}
}

// TestStatisticalChecksum checks that merged buckets holding several
// indices are never taken for good: over many sketches of large vectors,
// every bucket with 2 or more indices must fail the checksum test.
func TestStatisticalChecksum(t *testing.T) {
	p := mustParams(t, 1<<12, 1, 5)
	rng := rand.New(rand.NewPCG(3, 4))
	s := make([]Bucket, p.BucketsPerVertex())
	checked, false_ := 0, 0
	for range 300 {
		v := rng.Uint32N(1 << 12)
		nb := randomNeighbors(rng, 1<<12, v, 2+rng.IntN(500))
		p.Delta(s, v, nb)
		// Count the indices in each bucket by replaying the depths.
		count := make([]int, len(s))
		for _, u := range nb {
			idx := EdgeIndex(v, u)
			k := hash(idx, p.seeds[keySeed])
			for c := range p.columns {
				if d := depth(columnHash(k, p.seeds[1+c])); d < p.rows {
					count[1+c*p.rows+d]++
				}
			}
		}
		count[0] = len(nb)
		for i, b := range s {
			if count[i] >= 2 {
				checked++
				if p.Good(b) {
					false_++
				}
			}
		}
	}
	t.Logf("%d multi-index buckets checked, %d taken for good", checked, false_)
	if false_ != 0 {
		t.Errorf("%d of %d multi-index buckets pass the checksum test; expected 0", false_, checked)
	}
}
