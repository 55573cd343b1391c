package replay

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

func requireNoError(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// contains reports whether e is in s. e must have Src != Dst, both below
// the set's vertex count.
func (s *EdgeSet) contains(e stream.Edge) bool {
	if s.bits != nil {
		i := s.bit(e)
		return s.bits[i/64]&(1<<(i%64)) != 0
	}
	_, ok := s.m[key(e)]
	return ok
}

// edges returns the edges of s as a new slice in the order of All.
func (s *EdgeSet) edges() []stream.Edge {
	return slices.Collect(s.All())
}

func ins(a, b uint32) stream.Update {
	return stream.Update{Type: stream.Insert, Edge: stream.Edge{Src: a, Dst: b}}
}
func del(a, b uint32) stream.Update {
	return stream.Update{Type: stream.Delete, Edge: stream.Edge{Src: a, Dst: b}}
}

func run(t *testing.T, data []byte, cfg Config) (Result, *EdgeSet, error) {
	t.Helper()
	r, err := stream.NewReader(bytes.NewReader(data))
	requireNoError(t, err)
	return Run(r, cfg)
}

func TestRun_Strict(t *testing.T) {
	data := testgraph.Encode(t, 5, []stream.Update{ins(0, 1), ins(2, 1), del(1, 0), ins(3, 4), ins(0, 1)})
	res, set, err := run(t, data, Config{Strict: true})
	requireNoError(t, err)
	want := Result{Vertices: 5, Updates: 5, Inserts: 4, Deletes: 1, Edges: 3, Components: 2}
	if res != want {
		t.Fatalf("got %+v, want %+v", res, want)
	}
	if got := set.edges(); !slices.Equal(got, []stream.Edge{{Src: 0, Dst: 1}, {Src: 1, Dst: 2}, {Src: 3, Dst: 4}}) {
		t.Fatalf("edges %v", got)
	}
}

func TestRun_StrictViolations(t *testing.T) {
	f := func(us []stream.Update, index int64, sentinel error) {
		t.Helper()
		_, _, err := run(t, testgraph.Encode(t, 4, us), Config{Strict: true, Name: "s.bin"})
		var fe *stream.FormatError
		if !errors.As(err, &fe) || !errors.Is(err, sentinel) {
			t.Fatalf("got %v, want a *stream.FormatError wrapping %v", err, sentinel)
		}
		if fe.Index != index || fe.Offset != stream.RecordOffset(uint64(index)) || fe.Name != "s.bin" {
			t.Fatalf("got index %d offset %d name %q, want %d %d", fe.Index, fe.Offset, fe.Name,
				index, stream.RecordOffset(uint64(index)))
		}
	}
	f([]stream.Update{ins(0, 1), ins(1, 2), ins(1, 0)}, 2, ErrInsertPresent)
	f([]stream.Update{ins(0, 1), del(2, 3)}, 1, ErrDeleteAbsent)
	f([]stream.Update{del(0, 1)}, 0, ErrDeleteAbsent)
}

func TestRun_Toggle(t *testing.T) {
	// A duplicate insert deletes, as in the XOR sketches.
	data := testgraph.Encode(t, 4, []stream.Update{ins(0, 1), ins(1, 2), ins(0, 1), del(2, 3)})
	res, _, err := run(t, data, Config{})
	requireNoError(t, err)
	if res.Edges != 2 || res.Components != 2 || res.Updates != 4 {
		t.Fatalf("got %+v", res)
	}
}

func TestRun_Truncated(t *testing.T) {
	data := testgraph.Encode(t, 4, []stream.Update{ins(0, 1), ins(1, 2), ins(2, 3)})
	_, _, err := run(t, data[:len(data)-4], Config{Strict: true})
	if !errors.Is(err, stream.ErrTruncated) {
		t.Fatalf("got %v, want ErrTruncated", err)
	}
}

// TestEdgeSet_BitmapMatchesMap toggles the same random edges in both
// representations.
func TestEdgeSet_BitmapMatchesMap(t *testing.T) {
	for _, v := range []uint32{2, 3, 64, 65, 200} {
		r := rand.New(rand.NewPCG(uint64(v), 1))
		a, b := NewEdgeSet(v, 1<<40), NewEdgeSet(v, 0)
		if a.bits == nil || b.m == nil {
			t.Fatal("wrong representation chosen")
		}
		for range 5000 {
			x, y := r.Uint32N(v), r.Uint32N(v)
			if x == y {
				continue
			}
			e := stream.Edge{Src: x, Dst: y}
			if a.Toggle(e) != b.Toggle(e) {
				t.Fatalf("V=%d: toggles disagree on %v", v, e)
			}
		}
		ea, eb := a.edges(), b.edges()
		if !slices.Equal(ea, eb) || a.Len() != int64(len(ea)) {
			t.Fatalf("V=%d: bitmap %d edges, map %d", v, len(ea), len(eb))
		}
		for _, e := range ea {
			if !a.contains(e) || !a.contains(stream.Edge{Src: e.Dst, Dst: e.Src}) {
				t.Fatalf("V=%d: %v listed but not contained", v, e)
			}
		}
	}
}

// TestRun_Multiples replays GraphZeppelin's multiples stream; the counts
// are those of the data README (78 components, 5,206 final edges, 6,867
// inserts, 1,661 deletes, well formed).
func TestRun_Multiples(t *testing.T) {
	f, err := stream.Open("testdata/multiples_graph_1024_stream.data")
	requireNoError(t, err)
	defer f.Close()
	res, set, err := Run(f.Reader(0, f.Header().Updates), Config{Strict: true})
	requireNoError(t, err)
	want := Result{Vertices: 1024, Updates: 8528, Inserts: 6867, Deletes: 1661, Edges: 5206, Components: 78}
	if res != want {
		t.Fatalf("got %+v, want %+v", res, want)
	}
	// The final graph is {a, k·a} for 2 <= a < k·a < 1024 (DESIGN.md §6).
	n := 0
	for a := uint32(2); a < 1024; a++ {
		for b := 2 * a; b < 1024; b += a {
			if !set.contains(stream.Edge{Src: a, Dst: b}) {
				t.Fatalf("edge (%d,%d) missing", a, b)
			}
			n++
		}
	}
	if int64(n) != set.Len() {
		t.Fatalf("%d multiples edges, set has %d", n, set.Len())
	}
}

// TestEdgeSet_ComponentCount: the count over the touched vertices of a
// hash set equals a union-find over every vertex, for sparse and dense
// random graphs, and a set over 2^32-1 vertices is counted without a
// union-find over all of them.
func TestEdgeSet_ComponentCount(t *testing.T) {
	for _, v := range []uint32{2, 3, 64, 200, 1000} {
		for _, n := range []int{0, 1, 10, 300, 5000} {
			r := rand.New(rand.NewPCG(uint64(v), uint64(n)))
			a, b := NewEdgeSet(v, 1<<40), NewEdgeSet(v, 0)
			for range n {
				x, y := r.Uint32N(v), r.Uint32N(v)
				if x != y {
					a.Toggle(stream.Edge{Src: x, Dst: y})
					b.Toggle(stream.Edge{Src: x, Dst: y})
				}
			}
			want := a.Components().Sets()
			if got := b.ComponentCount(); got != want {
				t.Errorf("V=%d, %d toggles: hash set counts %d components, union-find %d", v, n, got, want)
			}
			if got := a.ComponentCount(); got != want {
				t.Errorf("V=%d, %d toggles: bitmap set counts %d components, union-find %d", v, n, got, want)
			}
		}
	}
	huge := NewEdgeSet(math.MaxUint32, DefaultMaxBitmapBytes)
	huge.Toggle(stream.Edge{Src: 1, Dst: 2})
	huge.Toggle(stream.Edge{Src: 2, Dst: math.MaxUint32 - 1})
	if got, want := huge.ComponentCount(), math.MaxUint32-2; got != want {
		t.Errorf("2^32-1 vertices, a path of 3: %d components, want %d", got, want)
	}
}
