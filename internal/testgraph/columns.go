package testgraph

import (
	"slices"
	"testing"

	"sketchcc/sketch"
)

// SameSketches fails tb, naming the first difference, unless the
// sketches that a's and b's Columns give hold the same buckets for every
// vertex and column (both of p's geometry): a store kept on disk against
// one in memory. columns returns the sketches holding column c from a (0)
// or b (1), or an error that fails tb.
func SameSketches(tb testing.TB, name string, p sketch.Params, columns func(side, c int) (*sketch.Columns, error)) {
	tb.Helper()
	for c := range p.Columns() {
		a, err := columns(0, c)
		if err != nil {
			tb.Fatal(err)
		}
		b, err := columns(1, c)
		if err != nil {
			tb.Fatal(err)
		}
		for v := range p.Vertices() {
			da, ra := a.Column(v, c)
			db, rb := b.Column(v, c)
			if da != db || !slices.Equal(ra, rb) {
				tb.Fatalf("%s: vertex %d column %d differs", name, v, c)
			}
		}
	}
}
