package dsu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNew(t *testing.T) {
	for _, n := range []uint32{0, 1, 5} {
		d := New(n)
		checkAgainst(t, d, newNaive(int(n)))
	}
}

func TestUnion_Basic(t *testing.T) {
	d := New(6)
	f := func(a, b uint32, wantMerged bool) {
		t.Helper()
		root, merged := d.Union(a, b)
		if merged != wantMerged {
			t.Fatalf("Union(%d, %d) merged = %v, want %v", a, b, merged, wantMerged)
		}
		if root != d.Find(a) || root != d.Find(b) {
			t.Fatalf("Union(%d, %d) returned root %d; Find gives %d and %d", a, b, root, d.Find(a), d.Find(b))
		}
	}
	f(0, 1, true)
	f(1, 0, false)
	f(2, 2, false)
	f(4, 5, true)
	f(3, 5, true)
	f(0, 4, true)
	f(1, 3, false)
	if d.Sets() != 2 || d.Size(5) != 5 || d.Size(2) != 1 {
		t.Errorf("Sets = %d, Size(5) = %d, Size(2) = %d; want 2, 5, 1", d.Sets(), d.Size(5), d.Size(2))
	}
	if got, want := d.Labels(), []uint32{0, 0, 1, 0, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("Labels = %v, want %v", got, want)
	}
}

// TestRandom checks random union sequences, with fixed seeds, against the
// naive labelling after every step.
func TestRandom(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		n := 1 + rng.IntN(60)
		t.Run(fmt.Sprintf("seed=%d/n=%d", seed, n), func(t *testing.T) {
			d, o := New(uint32(n)), newNaive(n)
			for range 2 * n {
				a, b := rng.Uint32N(uint32(n)), rng.Uint32N(uint32(n))
				_, merged := d.Union(a, b)
				if want := o.union(a, b); merged != want {
					t.Fatalf("Union(%d, %d) merged = %v, want %v", a, b, merged, want)
				}
				checkAgainst(t, d, o)
			}
		})
	}
}

// TestLabels_Large checks Labels on a larger random DSU: dense, numbered by
// the smallest id of each set, and consistent with Find.
func TestLabels_Large(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(7, 7))
	d := New(n)
	for range n / 2 {
		d.Union(rng.Uint32N(n), rng.Uint32N(n))
	}
	labels := d.Labels()
	next := uint32(0)
	first := map[uint32]uint32{} // label -> smallest id
	for v, l := range labels {
		if l > next {
			t.Fatalf("Labels[%d] = %d before label %d was used", v, l, next)
		}
		if l == next {
			first[l] = uint32(v)
			next++
		}
		if !same(d, uint32(v), first[l]) {
			t.Fatalf("Labels[%d] = Labels[%d] = %d, but they are in different sets", v, first[l], l)
		}
	}
	if int(next) != d.Sets() {
		t.Fatalf("%d labels, %d sets", next, d.Sets())
	}
	// Two sets with different labels are different sets.
	for range 1000 {
		a, b := rng.Uint32N(n), rng.Uint32N(n)
		if (labels[a] == labels[b]) != same(d, a, b) {
			t.Fatalf("Labels and Find disagree on %d, %d", a, b)
		}
	}
}

func TestReset(t *testing.T) {
	d := New(10)
	for v := range uint32(9) {
		d.Union(v, v+1)
	}
	d.Reset()
	checkAgainst(t, d, newNaive(10))
	d.Union(3, 4)
	o := newNaive(10)
	o.union(3, 4)
	checkAgainst(t, d, o)
}

// TestFind_Deep builds the deepest trees union by size allows, merging
// equal sizes level by level (binomial trees), and checks that no id ends
// more than log2 n links from its root, so Find never takes linear time.
// Chains in both argument orders catch linking that ignores sizes.
func TestFind_Deep(t *testing.T) {
	const n = 1 << 16
	for _, build := range []func(d *DSU){
		func(d *DSU) {
			for step := uint32(1); step < n; step *= 2 {
				for v := uint32(0); v < n; v += 2 * step {
					d.Union(v+step, v)
				}
			}
		},
		func(d *DSU) {
			for v := uint32(1); v < n; v++ {
				d.Union(v-1, v)
			}
		},
		func(d *DSU) {
			for v := uint32(1); v < n; v++ {
				d.Union(v, v-1)
			}
		},
	} {
		d := New(n)
		build(d)
		checkDepth(t, d)
	}
}

func checkDepth(t *testing.T, d *DSU) {
	t.Helper()
	n := d.Len()
	depth := func(v uint32) int {
		k := 0
		for d.parent[v] != v {
			v = d.parent[v]
			k++
		}
		return k
	}
	for v := range n {
		if k := depth(v); k > 16 {
			t.Fatalf("vertex %d is %d links from its root, more than log2 n = 16", v, k)
		}
	}
	if d.Sets() != 1 || d.Size(0) != n {
		t.Errorf("Sets = %d, Size = %d", d.Sets(), d.Size(0))
	}
}
