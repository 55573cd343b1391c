package streamgen

import (
	"math/bits"
	"math/rand/v2"

	"sketchcc/stream"
)

// pairModel decides the updates of every pair, a pure function of the
// seed and the pair. It is read-only after construction and safe for
// concurrent use.
type pairModel struct {
	vertices uint32
	idBits   uint // bits of a vertex id in a record
	timeBits uint // bits of the time in a record
	// classes[class(a, b)] is the 63-bit edge threshold of the pairs of a
	// class; churn and transient are the per-round thresholds: a pair
	// takes a chance when hash>>1 < its threshold.
	classes   []uint64
	churn     uint64
	transient uint64
	rounds    int
	isolated  []bool
	perm      []uint32 // the labels vertices get in the stream
	keys      pairKeys
}

// pairKeys are the hash keys of a pair's decisions.
type pairKeys struct {
	edge, time   uint64
	churn, trans [maxRounds]uint64
}

// golden is 2^64 / φ, the splitmix64 increment.
const golden = 0x9e3779b97f4a7c15

// mix is the splitmix64 finaliser: a bijective, well-mixed 64-bit hash.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// threshold63 turns a probability into a 63-bit threshold t such that
// hash>>1 < t holds with probability p for a uniform hash.
func threshold63(p float64) uint64 {
	switch {
	case !(p > 0):
		return 0
	case p >= 1:
		return 1 << 63
	}
	t := p * 0x1p63
	if t >= 0x1p63 {
		return 1 << 63
	}
	return uint64(t)
}

// newPairModel returns the model of m's pairs under cfg, whose Rounds is
// set, with the per-round transient probability trans.
func newPairModel(m modelParams, cfg Config, trans float64) pairModel {
	v := m.vertices
	g := pairModel{
		vertices:  v,
		idBits:    m.idBits,
		timeBits:  64 - 2*m.idBits - 1,
		rounds:    cfg.Rounds,
		churn:     threshold63(cfg.Churn),
		transient: threshold63(trans),
		classes:   make([]uint64, len(m.classes)),
	}
	for i, p := range m.classes {
		g.classes[i] = threshold63(p)
	}
	// Labels and isolated vertices come from their own PCG streams.
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x6c6162656c73)) // "labels"
	g.perm = make([]uint32, v)
	for i, p := range rng.Perm(int(v)) {
		g.perm[i] = uint32(p)
	}
	g.isolated = make([]bool, v)
	rng = rand.New(rand.NewPCG(cfg.Seed, 0x69736f6c61746564)) // "isolated"
	for _, x := range rng.Perm(int(v))[:cfg.Isolated] {
		g.isolated[x] = true
	}
	k := mix(cfg.Seed ^ 0x70616972) // "pair"
	next := func() uint64 { k = mix(k + golden); return k }
	g.keys.edge, g.keys.time = next(), next()
	for r := range maxRounds {
		g.keys.churn[r], g.keys.trans[r] = next(), next()
	}
	return g
}

// class returns the index of pair (a, b) in classes: Kronecker edge
// probabilities depend only on how many bit positions are (1,1) and how
// many differ.
func (g *pairModel) class(a, b uint32) int {
	return bits.OnesCount32(a&b)*int(g.idBits+1) + bits.OnesCount32(a^b)
}

// maxPairUpdates is the most updates one pair can have.
const maxPairUpdates = 2*maxRounds + 1

// updates decides pair (a, b), a < b: whether it is a final edge, and the
// times of its updates, strictly increasing, into t. Update i is an insert
// when i is even and a delete when i is odd.
func (g *pairModel) updates(a, b uint32, isoA bool, t *[maxPairUpdates]uint64) (edge bool, n int) {
	x := pairHash(a, b)
	if !isoA && !g.isolated[b] {
		edge = mix(x+g.keys.edge)>>1 < g.classes[g.class(a, b)]
	}
	k := 0
	if edge {
		for r := range g.rounds {
			if mix(x+g.keys.churn[r])>>1 < g.churn {
				k++
			}
		}
		n = 2*k + 1
	} else {
		if g.transient == 0 {
			return false, 0
		}
		for r := range g.rounds {
			if mix(x+g.keys.trans[r])>>1 < g.transient {
				k++
			}
		}
		n = 2 * k
		if n == 0 {
			return false, 0
		}
	}
	g.times(x, n, t)
	return edge, n
}

// pairHash returns the hash input of pair (a, b), a < b, that every
// decision about the pair mixes with its own key.
func pairHash(a, b uint32) uint64 { return (uint64(a)<<32 | uint64(b)) * golden }

// times draws the n distinct times of the updates of the pair whose
// pairHash is x into t[:n], strictly increasing.
func (g *pairModel) times(x uint64, n int, t *[maxPairUpdates]uint64) {
	shift := 64 - g.timeBits
	base := mix(x + g.keys.time)
	if n == 1 {
		t[0] = base >> shift
		return
	}
	for attempt := uint64(0); ; attempt++ {
		for i := range n {
			t[i] = mix(base+(attempt*maxPairUpdates+uint64(i))*golden) >> shift
		}
		// Insertion sort: n is at most 33 and usually 2 or 3.
		for i := 1; i < n; i++ {
			for j := i; j > 0 && t[j] < t[j-1]; j-- {
				t[j], t[j-1] = t[j-1], t[j]
			}
		}
		distinct := true
		for i := 1; i < n; i++ {
			if t[i] == t[i-1] {
				distinct = false
				break
			}
		}
		if distinct {
			return
		}
	}
}

// record packs one update of pair (a, b) at time t.
func (g *pairModel) record(a, b uint32, t uint64, typ int) uint64 {
	return t<<(2*g.idBits+1) | uint64(g.perm[a])<<(g.idBits+1) | uint64(g.perm[b])<<1 | uint64(typ)
}

// decode unpacks a record into an update.
func (g *pairModel) decode(r uint64) stream.Update {
	mask := uint64(1)<<g.idBits - 1
	return stream.Update{
		Type: stream.UpdateType(r & 1),
		Edge: stream.Edge{Src: uint32(r >> (g.idBits + 1) & mask), Dst: uint32(r >> 1 & mask)},
	}
}

// modelParams is what a model gives the common generator.
type modelParams struct {
	name     string
	vertices uint32
	idBits   uint
	// classes[k11·(idBits+1)+kd] is the edge probability of a pair with
	// k11 common one bits and kd differing bits.
	classes []float64
	// expectedEdges is the expected number of final edges before isolation.
	expectedEdges float64
	// uniform says that every class has the same probability, which a
	// sparse model may then walk by skips (Erdős–Rényi).
	uniform bool
}

// idBitsFor returns the bits needed for vertex ids in [0, v).
func idBitsFor(v uint32) uint {
	return uint(max(1, bits.Len32(v-1)))
}
