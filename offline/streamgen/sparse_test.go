package streamgen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"math"
	"testing"

	"sketchcc/stream"
)

// TestErdosSparse_GNP: a sparse Erdős–Rényi stream (the skip walk) is well
// formed, its summary matches a union-find over its cumulative file, and
// its final graph is G(n, p): the edge count within 5σ of its mean and the
// degree histogram passing a χ² test against Binomial(n−1, p).
func TestErdosSparse_GNP(t *testing.T) {
	const n, p = 20000, 0.0005
	cfg := DefaultErdosConfig(n, p, 11)
	if g := newPairGen(erdosModel(cfg), cfg.Config); g.sparse == nil {
		t.Fatal("density 0.0005 does not take the sparse path")
	}
	var out, cum bytes.Buffer
	s, err := Erdos(context.Background(), cfg, &out, &cum)
	requireNoError(t, err)
	checkGenerated(t, s, out.Bytes(), cum.Bytes())

	pairs := float64(n) * (n - 1) / 2
	mean, sd := pairs*p, math.Sqrt(pairs*p*(1-p))
	if d := math.Abs(float64(s.Edges) - mean); d > 5*sd {
		t.Errorf("%d edges, want %.0f ± %.0f (5σ)", s.Edges, mean, 5*sd)
	}
	// Churn: an edge is churned in at least one of 3 rounds with chance
	// 1 − 0.9³; transient updates are about 2% of the stream.
	if f := float64(s.ChurnedEdges) / float64(s.Edges); math.Abs(f-0.271) > 0.01 {
		t.Errorf("churned share %.4f, want 0.271", f)
	}
	if f := 2 * float64(s.TransientPairs) / float64(s.Updates); math.Abs(f-0.02) > 0.003 {
		t.Errorf("transient share %.4f, want about 0.02", f)
	}

	deg := make([]int, n)
	tr, err := stream.NewTextReader(bytes.NewReader(cum.Bytes()), "cum", false)
	requireNoError(t, err)
	buf := make([]stream.Update, 1024)
	for {
		k, err := tr.Read(buf)
		for _, u := range buf[:k] {
			deg[u.Src]++
			deg[u.Dst]++
		}
		if err != nil {
			break
		}
	}
	// Bins 0..top−1 and a tail bin ≥ top, each expecting at least 20.
	pmf := func(k int) float64 { return binomial(n-1, k, p) }
	top := 0
	for float64(n)*pmf(top) >= 20 || top < 10 {
		top++
	}
	obs := make([]float64, top+1)
	for _, d := range deg {
		obs[min(d, top)]++
	}
	chi2, tail := 0.0, 1.0
	for k := 0; k <= top; k++ {
		want := 1.0
		if k < top {
			want = pmf(k)
			tail -= want
		} else {
			want = tail
		}
		want *= n
		chi2 += (obs[k] - want) * (obs[k] - want) / want
	}
	// Degrees of freedom top; 6σ of a χ² is 6·√(2·df).
	if df := float64(top); chi2 > df+6*math.Sqrt(2*df) {
		t.Errorf("degree histogram %v: χ² = %.1f with %d degrees of freedom", obs, chi2, top)
	}
}

// TestErdosSparse_Deterministic: the sparse path's output depends on the
// seed only, not on the workers or the pass size, and isolated vertices
// stay isolated in the final graph.
func TestErdosSparse_Deterministic(t *testing.T) {
	gen := func(seed uint64, workers, passUpdates int) (Summary, [32]byte, []byte) {
		cfg := DefaultErdosConfig(3000, 0.002, seed)
		cfg.Isolated, cfg.Workers, cfg.PassUpdates = 40, workers, passUpdates
		var out, cum bytes.Buffer
		s, err := Erdos(context.Background(), cfg, &out, &cum)
		requireNoError(t, err)
		checkGenerated(t, s, out.Bytes(), cum.Bytes())
		return s, sha256.Sum256(out.Bytes()), cum.Bytes()
	}
	s1, o1, c1 := gen(5, 1, 0)
	s2, o2, c2 := gen(5, 3, 3000)
	if o1 != o2 || !bytes.Equal(c1, c2) {
		t.Fatal("sparse output depends on workers or pass size")
	}
	if s2.Passes < 3 {
		t.Fatalf("%d passes with a small pass budget, want several", s2.Passes)
	}
	// 40 isolated vertices plus the giant component, at least.
	if s1.Isolated != 40 || s1.Components <= 40 || s1.TransientPairs == 0 {
		t.Fatalf("summary %+v", s1)
	}
	if _, o3, _ := gen(6, 2, 0); o3 == o1 {
		t.Fatal("seed does not change the sparse stream")
	}
}
