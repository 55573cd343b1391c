package gutters

import "fmt"

// partBlock is the number of consecutive vertices that go to one Part: 8
// tails fill one 64-byte line, so two Parts never write one line of tails.
const partBlock = 8

// MaxParts bounds the n of Parts and PartOf.
const MaxParts = 1 << 10

// PartOf returns the index in [0, n) of the Part that owns vertex v when
// the gutters are split into n Parts. Blocks of partBlock vertices are
// spread over the Parts by a multiplicative hash, so that the skewed
// degrees of real graphs (high-degree vertices next to each other) still
// split evenly. n must be in [1, MaxParts].
func PartOf(v uint32, n int) int {
	block := (v / partBlock) * 0x9e3779b1
	return int(uint64(block) * uint64(n) >> 32)
}

// Part is the share of the gutters that one inserting goroutine owns: the
// vertices v with PartOf(v, n) == its index. Parts of one Gutters may
// insert concurrently with each other, never with InsertBatch, Flush,
// FlushLocal or Stats of their Gutters; one Part is for one goroutine at a
// time. The caller's InsertBatch has a share of the same shape, over
// every vertex (Gutters.own).
type Part struct {
	g       *Gutters
	nonEmpt []uint32 // vertices whose gutter this share made non-empty
	stats   Stats    // this share's batches; Updates is unused (see pairs)
	pairs   uint64   // ids inserted: two per edge update over all shares
	sq      spills   // full tail lines not yet in the slab
}

// Parts splits the gutters into n Parts and returns them; a later call
// with the same n returns the same Parts. It returns an error for n
// outside [1, MaxParts] or different from an earlier call's.
func (g *Gutters) Parts(n int) ([]*Part, error) {
	if n < 1 || n > MaxParts {
		return nil, fmt.Errorf("gutters: %d parts, need [1, %d]", n, MaxParts)
	}
	if parts := g.shares[1:]; len(parts) > 0 {
		if len(parts) != n {
			return nil, fmt.Errorf("gutters: split into %d parts already, asked for %d", len(parts), n)
		}
		return parts, nil
	}
	for range n {
		g.shares = append(g.shares, &Part{g: g})
	}
	return g.shares[1:], nil
}

// Insert appends, for each pair p of pairs, the neighbour id p[1] to
// vertex p[0]'s gutter. Every p[0] must belong to this Part (PartOf), and
// the ids must be < Vertices and distinct. Like InsertBatch it emits full
// gutters as batches, blocking while no spare buffer is free (see
// InterruptOn), and allocates nothing once the Part has listed its
// vertices. Settled views taken before become stale.
func (p *Part) Insert(pairs [][2]uint32) {
	p.g.moveOn()
	p.g.insertPairs(pairs, p)
	p.pairs += uint64(len(pairs))
}
