package gutters

import (
	"math/bits"

	"sketchcc/stream"
)

// stageMinVertices is the vertex count from which InsertBatch stages: below
// it the gutters' tails fit in the caches and staging only adds copies.
// stageUpdates is the staging buffer, in updates (12 MiB, plus 16 MiB of
// sorted pairs): with 2^17 vertices a vertex gets about 16 appends per
// staged run, so an append mostly hits a line the previous one brought in.
// stageBuckets is the number of vertex ranges the pairs are grouped by.
const (
	stageMinVertices = 1 << 16
	stageUpdates     = 1 << 20
	stageBuckets     = 256
)

// stage collects updates before they reach the gutters and hands them out
// as (vertex, neighbour) pairs grouped by vertex range, so that the appends
// of one range share cache lines. It is not safe for concurrent use.
type stage struct {
	updates []stream.Update // staged, at most stageUpdates
	pairs   [][2]uint32     // the sorted pairs of a full stage
	shift   uint            // vertex >> shift is its range, < stageBuckets
}

func newStage(vertices uint32) *stage {
	return &stage{
		updates: make([]stream.Update, 0, stageUpdates),
		pairs:   make([][2]uint32, 2*stageUpdates),
		shift:   uint(max(0, bits.Len32(vertices-1)-8)),
	}
}

// add stages a prefix of us and returns the rest, and whether the stage is
// now full (take it before adding more).
func (s *stage) add(us []stream.Update) (rest []stream.Update, full bool) {
	k := copy(s.updates[len(s.updates):cap(s.updates)], us)
	s.updates = s.updates[:len(s.updates)+k]
	return us[k:], len(s.updates) == cap(s.updates)
}

// take empties the stage and returns its updates' pairs, both directions,
// grouped by vertex range with a counting sort. The result is valid until
// the next add.
func (s *stage) take() [][2]uint32 {
	if len(s.updates) == 0 {
		return nil
	}
	var pos [stageBuckets + 1]int
	shift := s.shift
	for i := range s.updates {
		pos[s.updates[i].Src>>shift+1]++
		pos[s.updates[i].Dst>>shift+1]++
	}
	for b := 1; b <= stageBuckets; b++ {
		pos[b] += pos[b-1]
	}
	pairs := s.pairs[:2*len(s.updates)]
	for i := range s.updates {
		src, dst := s.updates[i].Src, s.updates[i].Dst
		p := &pos[src>>shift]
		pairs[*p] = [2]uint32{src, dst}
		*p++
		p = &pos[dst>>shift]
		pairs[*p] = [2]uint32{dst, src}
		*p++
	}
	s.updates = s.updates[:0]
	return pairs
}
