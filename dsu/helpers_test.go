package dsu

import "testing"

// naive is the oracle: an explicit label per id, relabelling a whole set
// on every union.
type naive struct{ label []int }

func newNaive(n int) *naive {
	l := make([]int, n)
	for i := range l {
		l[i] = i
	}
	return &naive{l}
}

func (n *naive) union(a, b uint32) bool {
	la, lb := n.label[a], n.label[b]
	if la == lb {
		return false
	}
	for i, l := range n.label {
		if l == lb {
			n.label[i] = la
		}
	}
	return true
}

func (n *naive) sets() int {
	seen := map[int]bool{}
	for _, l := range n.label {
		seen[l] = true
	}
	return len(seen)
}

func (n *naive) size(v uint32) uint32 {
	s := uint32(0)
	for _, l := range n.label {
		if l == n.label[v] {
			s++
		}
	}
	return s
}

// labels numbers the sets by their smallest id, as DSU.Labels does.
func (n *naive) labels() []uint32 {
	dense := map[int]uint32{}
	out := make([]uint32, len(n.label))
	for i, l := range n.label {
		if _, ok := dense[l]; !ok {
			dense[l] = uint32(len(dense))
		}
		out[i] = dense[l]
	}
	return out
}

// checkAgainst compares every query of d with the oracle.
func checkAgainst(t *testing.T, d *DSU, o *naive) {
	t.Helper()
	n := uint32(len(o.label))
	if d.Len() != n {
		t.Fatalf("Len = %d, want %d", d.Len(), n)
	}
	if got, want := d.Sets(), o.sets(); got != want {
		t.Fatalf("Sets = %d, want %d", got, want)
	}
	labels := d.Labels()
	want := o.labels()
	for v := range n {
		if labels[v] != want[v] {
			t.Fatalf("Labels[%d] = %d, want %d", v, labels[v], want[v])
		}
		if got, want := d.Size(v), o.size(v); got != want {
			t.Fatalf("Size(%d) = %d, want %d", v, got, want)
		}
		root := d.Find(v)
		if d.Find(root) != root || !same(d, v, root) {
			t.Fatalf("Find(%d) = %d is not a root of v's set", v, root)
		}
	}
	for a := range min(n, 64) {
		for b := range min(n, 64) {
			if got, want := same(d, a, b), o.label[a] == o.label[b]; got != want {
				t.Fatalf("same(%d, %d) = %v, want %v", a, b, got, want)
			}
		}
	}
}

// same reports whether a and b are in one set of d.
func same(d *DSU, a, b uint32) bool { return d.Find(a) == d.Find(b) }
