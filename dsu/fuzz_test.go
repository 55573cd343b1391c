package dsu

import "testing"

// FuzzUnion reads pairs of bytes as unions over up to 64 ids (the first
// byte sets the count) and compares every query with the naive labelling.
func FuzzUnion(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{1, 0, 0})
	f.Add([]byte{10, 0, 1, 1, 2, 2, 3, 5, 6, 9, 0, 3, 0})
	f.Add([]byte{64, 63, 62, 61, 60, 0, 63, 1, 62, 31, 32, 32, 31})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) == 0 {
			return
		}
		n := int(ops[0]%64) + 1
		d, o := New(uint32(n)), newNaive(n)
		ops = ops[1:]
		for i := 0; i+1 < len(ops); i += 2 {
			a, b := uint32(ops[i])%uint32(n), uint32(ops[i+1])%uint32(n)
			root, merged := d.Union(a, b)
			if want := o.union(a, b); merged != want {
				t.Fatalf("Union(%d, %d) merged = %v, want %v", a, b, merged, want)
			}
			if root != d.Find(a) || root != d.Find(b) {
				t.Fatalf("Union(%d, %d) returned %d, not the root", a, b, root)
			}
		}
		checkAgainst(t, d, o)
		d.Reset()
		checkAgainst(t, d, newNaive(n))
	})
}
