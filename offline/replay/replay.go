// Package replay applies an edge-update stream to an exact edge set: the
// ground truth that sketch answers are checked against. It can check that a
// stream is well formed (inserts only absent edges, deletes only present
// ones) or apply every update as a toggle, as the XOR-linear sketches do.
//
// Memory is per edge: a bitmap over all vertex pairs (V·(V−1)/16 bytes,
// 64 MiB at V = 2^15, 1 GiB at V = 2^17) when that fits the caller's
// budget, else a hash set of 64-bit edge indices.
//
// Nothing here is safe for concurrent use.
package replay

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"maps"
	"math/bits"
	"slices"

	"sketchcc/dsu"
	"sketchcc/stream"
)

var (
	// ErrInsertPresent is returned in strict mode for an insert of an edge
	// that is already present.
	ErrInsertPresent = errors.New("replay: insert of an edge that is present")
	// ErrDeleteAbsent is returned in strict mode for a delete of an edge
	// that is absent.
	ErrDeleteAbsent = errors.New("replay: delete of an edge that is absent")
)

// DefaultMaxBitmapBytes is the largest pair bitmap EdgeSet uses by default:
// 4 GiB, enough for 185,000 vertices.
const DefaultMaxBitmapBytes = 4 << 30

// EdgeSet is a set of undirected edges over the vertex ids [0, Vertices).
type EdgeSet struct {
	vertices uint32
	bits     []uint64            // row-major upper-triangle bitmap, or nil
	m        map[uint64]struct{} // edge indices min<<32|max, when bits is nil
	n        int64
}

// BitmapBytes returns the size in bytes of the pair bitmap for vertices
// vertices: one bit per unordered pair, rounded up to 8-byte words.
func BitmapBytes(vertices uint32) int64 {
	return int64(pairs(vertices)+63) / 64 * 8
}

func pairs(vertices uint32) uint64 {
	v := uint64(vertices)
	return v * (v - min(v, 1)) / 2
}

// NewEdgeSet returns an empty set over [0, vertices). It uses the pair
// bitmap when BitmapBytes(vertices) <= maxBitmapBytes, else a hash set
// whose memory grows with the number of edges.
func NewEdgeSet(vertices uint32, maxBitmapBytes int64) *EdgeSet {
	s := &EdgeSet{vertices: vertices}
	if BitmapBytes(vertices) <= maxBitmapBytes {
		s.bits = make([]uint64, BitmapBytes(vertices)/8)
	} else {
		s.m = make(map[uint64]struct{})
	}
	return s
}

// Len returns the number of edges in the set.
func (s *EdgeSet) Len() int64 { return s.n }

// rowStart returns the bit index of pair (a, a+1) in the row-major upper
// triangle: rows a = 0.. hold pairs (a, b) for b in (a, V).
func (s *EdgeSet) rowStart(a uint32) uint64 {
	v, x := uint64(s.vertices), uint64(a)
	return x * (2*v - x - 1) / 2
}

func (s *EdgeSet) bit(e stream.Edge) uint64 {
	a, b := min(e.Src, e.Dst), max(e.Src, e.Dst)
	return s.rowStart(a) + uint64(b-a-1)
}

func key(e stream.Edge) uint64 {
	return uint64(min(e.Src, e.Dst))<<32 | uint64(max(e.Src, e.Dst))
}

// Toggle adds e if absent and removes it if present, and reports whether e
// is present afterwards. e must have Src != Dst, both below the set's
// vertex count.
func (s *EdgeSet) Toggle(e stream.Edge) bool {
	if s.bits != nil {
		i := s.bit(e)
		w := &s.bits[i/64]
		*w ^= 1 << (i % 64)
		if *w&(1<<(i%64)) != 0 {
			s.n++
			return true
		}
		s.n--
		return false
	}
	k := key(e)
	if _, ok := s.m[k]; ok {
		delete(s.m, k)
		s.n--
		return false
	}
	s.m[k] = struct{}{}
	s.n++
	return true
}

// All yields the edges of the set with Src < Dst, in ascending (Src, Dst)
// order. The set must not change during the iteration.
func (s *EdgeSet) All() iter.Seq[stream.Edge] {
	return func(yield func(stream.Edge) bool) {
		if s.bits == nil {
			for _, k := range slices.Sorted(maps.Keys(s.m)) {
				if !yield(stream.Edge{Src: uint32(k >> 32), Dst: uint32(k)}) {
					return
				}
			}
			return
		}
		// Walk the set bits; track the row a whose range holds bit i.
		a := uint32(0)
		next := s.rowStart(1)
		for wi, w := range s.bits {
			for w != 0 {
				i := uint64(wi)*64 + uint64(bits.TrailingZeros64(w))
				w &= w - 1
				for i >= next {
					a++
					next = s.rowStart(a + 1)
				}
				b := a + 1 + uint32(i-s.rowStart(a))
				if !yield(stream.Edge{Src: a, Dst: b}) {
					return
				}
			}
		}
	}
}

// Components returns the connected components of the graph of s, over
// the vertex ids of NewEdgeSet, as a DSU built by a plain union-find over
// the edges.
func (s *EdgeSet) Components() *dsu.DSU {
	d := dsu.New(s.vertices)
	for e := range s.All() {
		d.Union(e.Src, e.Dst)
	}
	return d
}

// ComponentCount returns the number of connected components of the graph
// of s, isolated vertices included, as Components().Sets() would. For a
// set kept as a hash set (a vertex count too large for the pair bitmap)
// it unions only the vertices the edges touch, so its memory follows the
// edges, not the vertex count: a 21-byte stream declaring 2^32-1 vertices
// is counted without a 16 GiB union-find.
func (s *EdgeSet) ComponentCount() int {
	if s.bits != nil {
		return s.Components().Sets()
	}
	dense := make(map[uint32]uint32, 2*len(s.m))
	id := func(v uint32) uint32 {
		i, ok := dense[v]
		if !ok {
			i = uint32(len(dense))
			dense[v] = i
		}
		return i
	}
	edges := make([][2]uint32, 0, len(s.m))
	for e := range s.All() {
		edges = append(edges, [2]uint32{id(e.Src), id(e.Dst)})
	}
	d := dsu.New(uint32(len(dense)))
	for _, e := range edges {
		d.Union(e[0], e[1])
	}
	return int(uint64(s.vertices)-uint64(len(dense))) + d.Sets()
}

// Result summarises a replayed stream.
type Result struct {
	// Vertices is the header's vertex count.
	Vertices uint32 `json:"vertices"`
	// Updates is the number of updates applied.
	Updates uint64 `json:"updates"`
	// Inserts and Deletes count updates by their type byte.
	Inserts uint64 `json:"inserts"`
	Deletes uint64 `json:"deletes"`
	// Edges is the number of edges of the final graph.
	Edges int64 `json:"edges"`
	// Components is the number of connected components of the final graph,
	// isolated vertices included.
	Components int `json:"components"`
}

// Config says how to replay.
type Config struct {
	// Strict checks that every insert adds an absent edge and every delete
	// removes a present one; the first violation ends the replay with a
	// *stream.FormatError wrapping ErrInsertPresent or ErrDeleteAbsent.
	// When false, every update toggles its edge whatever its type.
	Strict bool
	// Name names the input in errors.
	Name string
	// MaxBitmapBytes bounds the pair bitmap (see NewEdgeSet). Zero means
	// DefaultMaxBitmapBytes.
	MaxBitmapBytes int64
	// Progress, if not nil, is called after every chunk of updates with the
	// count so far. It is called from the replaying goroutine.
	Progress func(updates uint64)
}

// Run applies every update of src and returns the summary and the final
// edge set. Errors of src (bad records, truncation) are returned as they
// are, after the updates before them were applied; the partial Result says
// how far the replay got. In strict mode a violation is a *stream.FormatError
// whose Offset is the record's byte offset in a binary stream.
func Run(src stream.Source, cfg Config) (Result, *EdgeSet, error) {
	h := src.Header()
	if cfg.MaxBitmapBytes == 0 {
		cfg.MaxBitmapBytes = DefaultMaxBitmapBytes
	}
	set := NewEdgeSet(h.Vertices, cfg.MaxBitmapBytes)
	res := Result{Vertices: h.Vertices}
	buf := make([]stream.Update, 4096)
	for {
		n, err := src.Read(buf)
		for _, u := range buf[:n] {
			present := set.Toggle(u.Edge)
			if cfg.Strict && present != (u.Type == stream.Insert) {
				set.Toggle(u.Edge)
				e := &stream.FormatError{Name: cfg.Name, Index: int64(res.Updates),
					Offset: stream.RecordOffset(res.Updates), Err: ErrDeleteAbsent,
					Detail: fmt.Sprintf("%v (%d,%d)", u.Type, u.Src, u.Dst)}
				if u.Type == stream.Insert {
					e.Err = ErrInsertPresent
				}
				res.Edges = set.Len()
				return res, set, e
			}
			if u.Type == stream.Delete {
				res.Deletes++
			} else {
				res.Inserts++
			}
			res.Updates++
		}
		if cfg.Progress != nil && n > 0 {
			cfg.Progress(res.Updates)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			res.Edges = set.Len()
			return res, set, err
		}
	}
	res.Edges = set.Len()
	res.Components = set.ComponentCount()
	return res, set, nil
}
