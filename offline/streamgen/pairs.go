package streamgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// Config holds the settings both synthetic generators share.
type Config struct {
	// Seed selects the graph, the labels and the order; the output is a
	// pure function of the seed and the other settings, not of Workers or
	// PassUpdates.
	Seed uint64
	// Rounds is the number of churn rounds. In each round every final edge
	// is deleted and re-inserted with probability Churn, and every non-edge
	// is inserted and deleted again with the probability that makes
	// transient updates a share Transient of the stream. Zero means 1.
	Rounds int
	// Churn is the per-round probability, in [0, 1], that a final edge is
	// deleted and re-inserted. Zero means no churn.
	Churn float64
	// Transient is the expected share of all updates, in [0, 1), that
	// insert and then delete a non-edge. Zero means none.
	Transient float64
	// Isolated is the number of vertices, chosen at random, none of whose
	// pairs is a final edge (transient pairs may still touch them). It must
	// be < the number of vertices.
	Isolated int
	// PassUpdates bounds the updates held in memory at once, 8 bytes each.
	// Zero means 1<<27 (1 GiB). Fewer means more passes over the pairs.
	PassUpdates int
	// Workers is the number of goroutines scanning pairs. Zero means
	// GOMAXPROCS.
	Workers int
	// Logger receives progress at Info level. Nil discards.
	Logger *slog.Logger
}

// maxRounds bounds Config.Rounds; a pair then has at most 2·maxRounds+1
// updates.
const maxRounds = 16

// minTimeBits is the fewest bits a record keeps for the update time, which
// limits vertex ids to (64 − 1 − minTimeBits)/2 = 21 bits.
const minTimeBits = 21

// MaxVertices is the largest vertex count the synthetic generators accept:
// 2^21 (their pair scans are quadratic long before that).
const MaxVertices = 1 << ((64 - 1 - minTimeBits) / 2)

// Summary describes a generated stream.
type Summary struct {
	// Model names the generator: "kron" or "erdos".
	Model string `json:"model"`
	// Seed is the seed used.
	Seed uint64 `json:"seed"`
	// Vertices is the number of vertices (the header's count).
	Vertices uint32 `json:"vertices"`
	// Updates is the number of updates written; Inserts + Deletes.
	Updates uint64 `json:"updates"`
	Inserts uint64 `json:"inserts"`
	Deletes uint64 `json:"deletes"`
	// Edges is the number of edges of the final graph.
	Edges uint64 `json:"edges"`
	// Components is the exact number of connected components of the final
	// graph (isolated vertices included), by union-find.
	Components int `json:"components"`
	// Isolated is the number of deliberately isolated vertices.
	Isolated int `json:"isolated_vertices"`
	// ChurnedEdges is the number of final edges deleted and re-inserted at
	// least once; TransientPairs the number of non-edges inserted and
	// deleted at least once.
	ChurnedEdges   uint64 `json:"churned_edges"`
	TransientPairs uint64 `json:"transient_pairs"`
	// Passes is the number of window passes that wrote the stream.
	Passes int `json:"passes"`
	// Scale and Drops describe a Kronecker graph: 2^Scale vertices and the
	// expected number of R-MAT drops of the Poisson model.
	Scale int     `json:"scale,omitempty"`
	Drops float64 `json:"drops,omitempty"`
	// Density is the edge probability of an Erdős–Rényi graph, or the
	// target share of pairs that are edges of a Kronecker graph.
	Density float64 `json:"density"`
}

// pairGen decides the updates of every pair. It is read-only after
// construction and safe for concurrent use.
type pairGen struct {
	vertices  uint32
	idBits    uint // bits of a vertex id in a record
	timeBits  uint // bits of the time in a record
	sliceBits uint // time slices: the top sliceBits bits of the time
	classes   []uint64
	isolated  []bool
	perm      []uint32
	rounds    int
	churn     uint64 // 63-bit thresholds: hash>>1 < threshold
	transient uint64
	keyEdge   uint64
	keyChurn  [maxRounds]uint64
	keyTrans  [maxRounds]uint64
	keyTime   uint64
	chunks    []rowRange
	workers   int
	pass      int
	log       *slog.Logger
}

type rowRange struct{ lo, hi uint32 }

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

// class returns the index of pair (a, b) in classes: Kronecker edge
// probabilities depend only on how many bit positions are (1,1) and how
// many differ.
func (g *pairGen) class(a, b uint32) int {
	return bits.OnesCount32(a&b)*int(g.idBits+1) + bits.OnesCount32(a^b)
}

// maxPairUpdates is the most updates one pair can have.
const maxPairUpdates = 2*maxRounds + 1

// updates decides pair (a, b), a < b: whether it is a final edge, and the
// times of its updates, strictly increasing, into t. Update i is an insert
// when i is even and a delete when i is odd.
func (g *pairGen) updates(a, b uint32, isoA bool, t *[maxPairUpdates]uint64) (edge bool, n int) {
	x := (uint64(a)<<32 | uint64(b)) * golden
	if !isoA && !g.isolated[b] {
		edge = mix(x+g.keyEdge)>>1 < g.classes[g.class(a, b)]
	}
	k := 0
	if edge {
		for r := range g.rounds {
			if mix(x+g.keyChurn[r])>>1 < g.churn {
				k++
			}
		}
		n = 2*k + 1
	} else {
		if g.transient == 0 {
			return false, 0
		}
		for r := range g.rounds {
			if mix(x+g.keyTrans[r])>>1 < g.transient {
				k++
			}
		}
		n = 2 * k
		if n == 0 {
			return false, 0
		}
	}
	shift := 64 - g.timeBits
	base := mix(x + g.keyTime)
	if n == 1 {
		t[0] = base >> shift
		return edge, 1
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
			return edge, n
		}
	}
}

// record packs one update of pair (a, b) at time t.
func (g *pairGen) record(a, b uint32, t uint64, typ int) uint64 {
	return t<<(2*g.idBits+1) | uint64(g.perm[a])<<(g.idBits+1) | uint64(g.perm[b])<<1 | uint64(typ)
}

// decode unpacks a record into an update.
func (g *pairGen) decode(r uint64) stream.Update {
	mask := uint64(1)<<g.idBits - 1
	return stream.Update{
		Type: stream.UpdateType(r & 1),
		Edge: stream.Edge{Src: uint32(r >> (g.idBits + 1) & mask), Dst: uint32(r >> 1 & mask)},
	}
}

// slice returns the time slice of time t.
func (g *pairGen) slice(t uint64) int { return int(t >> (g.timeBits - g.sliceBits)) }

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
}

// chunkPairs is the target number of pairs per unit of work: small enough
// to balance two to a few dozen workers and to keep a chunk's cumulative
// text (about 12 bytes per edge) near 12 MiB, large enough that the
// per-chunk overhead vanishes.
const chunkPairs = 1 << 21

// sliceUpdates is the target number of updates per time slice: each slice
// is sorted on its own (16 MiB of records).
const sliceUpdates = 1 << 21

func newPairGen(m modelParams, cfg Config) (*pairGen, error) {
	if cfg.Rounds == 0 {
		cfg.Rounds = 1
	}
	var errs []error
	if cfg.Rounds < 0 || cfg.Rounds > maxRounds {
		errs = append(errs, fmt.Errorf("streamgen: rounds %d, want [1, %d]", cfg.Rounds, maxRounds))
	}
	if !(cfg.Churn >= 0 && cfg.Churn <= 1) {
		errs = append(errs, fmt.Errorf("streamgen: churn %v, want [0, 1]", cfg.Churn))
	}
	if !(cfg.Transient >= 0 && cfg.Transient < 1) {
		errs = append(errs, fmt.Errorf("streamgen: transient share %v, want [0, 1)", cfg.Transient))
	}
	if cfg.Isolated < 0 || int64(cfg.Isolated) >= int64(m.vertices) {
		errs = append(errs, fmt.Errorf("streamgen: %d isolated vertices, want [0, %d)", cfg.Isolated, m.vertices))
	}
	if cfg.PassUpdates < 0 || cfg.Workers < 0 {
		errs = append(errs, fmt.Errorf("streamgen: negative pass updates %d or workers %d", cfg.PassUpdates, cfg.Workers))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if cfg.PassUpdates == 0 {
		cfg.PassUpdates = 1 << 27
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v := m.vertices
	g := &pairGen{
		vertices: v,
		idBits:   m.idBits,
		timeBits: 64 - 2*m.idBits - 1,
		rounds:   cfg.Rounds,
		churn:    threshold63(cfg.Churn),
		workers:  cfg.Workers,
		pass:     cfg.PassUpdates,
		log:      log,
	}
	g.classes = make([]uint64, len(m.classes))
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
	g.keyEdge, g.keyTime = next(), next()
	for r := range maxRounds {
		g.keyChurn[r], g.keyTrans[r] = next(), next()
	}

	// Transient probability per round for a non-edge, from the expected
	// sizes: transient updates = Transient/(1−Transient) · other updates.
	pairs := float64(v) * float64(v-1) / 2
	keep := 1.0
	if cfg.Isolated > 0 {
		f := 1 - float64(cfg.Isolated)/float64(v)
		keep = f * f
	}
	edges := m.expectedEdges * keep
	nonEdges := pairs - edges
	other := edges * (1 + 2*float64(cfg.Rounds)*cfg.Churn)
	trans := 0.0
	if cfg.Transient > 0 && nonEdges >= 1 {
		trans = min(1, cfg.Transient/(1-cfg.Transient)*other/(2*float64(cfg.Rounds)*nonEdges))
	}
	g.transient = threshold63(trans)
	expected := other + 2*float64(cfg.Rounds)*trans*nonEdges

	// Enough slices that each holds about sliceUpdates updates, and at
	// least 64 so that even a small stream can be written in several passes.
	g.sliceBits = 6
	for g.sliceBits < 16 && expected/float64(uint64(1)<<g.sliceBits) > sliceUpdates {
		g.sliceBits++
	}

	// Chunks of whole rows; row a holds pairs (a, b) for b > a.
	var acc uint64
	lo := uint32(0)
	for a := uint32(0); a < v; a++ {
		acc += uint64(v - 1 - a)
		if acc >= chunkPairs || a == v-1 {
			g.chunks = append(g.chunks, rowRange{lo, a + 1})
			lo, acc = a+1, 0
		}
	}
	log.Info("streamgen: plan", "model", m.name, "vertices", v, "expected_edges", int64(edges),
		"expected_updates", int64(expected), "slices", 1<<g.sliceBits, "chunks", len(g.chunks),
		"workers", g.workers)
	return g, nil
}

// ordered runs produce(w, i) for i in [0, n) on workers goroutines (w is
// the worker's index, for per-worker state) and calls consume(i, v) in
// order of i on the calling goroutine. At most about 3·workers results
// wait at once. It returns the first error of produce, consume or ctx, after
// all goroutines have stopped.
func ordered[T any](ctx context.Context, n, workers int, produce func(w, i int) (T, error), consume func(i int, v T) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	type job struct {
		i   int
		out chan result
	}
	jobs := make(chan job)
	// queue holds jobs in order; its capacity bounds the results that
	// wait for a slow earlier one.
	queue := make(chan job, 2*workers)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(queue)
		defer close(jobs)
		for i := range n {
			j := job{i: i, out: make(chan result, 1)}
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	})
	for w := range workers {
		wg.Go(func() {
			for j := range jobs {
				v, err := produce(w, j.i)
				j.out <- result{v, err}
			}
		})
	}
	var err error
	for j := range queue {
		select {
		case r := <-j.out:
			err = r.err
			if err == nil {
				err = consume(j.i, r.v)
			}
		case <-ctx.Done():
			err = ctx.Err()
		}
		if err != nil {
			break
		}
	}
	cancel()
	wg.Wait()
	return err
}

// counts is one worker's tally in the counting pass.
type counts struct {
	edges, inserts, deletes, churned, transient uint64
	slices                                      []uint64
	d                                           *dsu.DSU
}

// count scans every pair once and returns the totals, the updates per time
// slice and the final graph's components.
func (g *pairGen) count(ctx context.Context) (counts, int, error) {
	per := make([]counts, g.workers)
	for w := range per {
		per[w] = counts{slices: make([]uint64, 1<<g.sliceBits), d: dsu.New(g.vertices)}
	}
	err := ordered(ctx, len(g.chunks), g.workers, func(w, i int) (struct{}, error) {
		c := &per[w]
		var t [maxPairUpdates]uint64
		rr := g.chunks[i]
		for a := rr.lo; a < rr.hi; a++ {
			isoA := g.isolated[a]
			for b := a + 1; b < g.vertices; b++ {
				edge, n := g.updates(a, b, isoA, &t)
				if n == 0 {
					continue
				}
				if edge {
					c.edges++
					c.d.Union(a, b)
					if n > 1 {
						c.churned++
					}
				} else {
					c.transient++
				}
				c.inserts += uint64(n+1) / 2
				c.deletes += uint64(n) / 2
				for _, x := range t[:n] {
					c.slices[g.slice(x)]++
				}
			}
		}
		return struct{}{}, nil
	}, func(int, struct{}) error { return nil })
	if err != nil {
		return counts{}, 0, err
	}
	total := per[0]
	for _, c := range per[1:] {
		total.edges += c.edges
		total.inserts += c.inserts
		total.deletes += c.deletes
		total.churned += c.churned
		total.transient += c.transient
		for s, n := range c.slices {
			total.slices[s] += n
		}
		for v := range g.vertices {
			total.d.Union(v, c.d.Find(v))
		}
	}
	return total, total.d.Sets(), nil
}

// writeCumulative writes the final edges as "src dst" lines, in the
// permuted labels, after a "vertices edges" line.
func (g *pairGen) writeCumulative(ctx context.Context, w io.Writer, edges uint64) error {
	head := fmt.Appendf(nil, "%d %d\n", g.vertices, edges)
	if _, err := w.Write(head); err != nil {
		return fmt.Errorf("streamgen: cannot write cumulative file: %w", err)
	}
	// Chunk buffers are recycled; about 3·workers are alive at once.
	free := make(chan []byte, 3*g.workers)
	err := ordered(ctx, len(g.chunks), g.workers, func(w, i int) ([]byte, error) {
		var buf []byte
		select {
		case buf = <-free:
		default:
		}
		buf = buf[:0]
		var t [maxPairUpdates]uint64
		rr := g.chunks[i]
		for a := rr.lo; a < rr.hi; a++ {
			isoA := g.isolated[a]
			pa := uint64(g.perm[a])
			for b := a + 1; b < g.vertices; b++ {
				if edge, _ := g.updates(a, b, isoA, &t); edge {
					buf = strconv.AppendUint(buf, pa, 10)
					buf = append(buf, ' ')
					buf = strconv.AppendUint(buf, uint64(g.perm[b]), 10)
					buf = append(buf, '\n')
				}
			}
		}
		return buf, nil
	}, func(i int, buf []byte) error {
		if _, err := w.Write(buf); err != nil {
			return fmt.Errorf("streamgen: cannot write cumulative file: %w", err)
		}
		select {
		case free <- buf:
		default:
		}
		return nil
	})
	return err
}

// writePass collects the updates of time slices [s0, s1), whose counts are
// known, sorts them by time and writes them to sw. slab must have room for
// all of them; it is reused from pass to pass so that the garbage collector
// never holds two passes' records at once.
func (g *pairGen) writePass(ctx context.Context, sw *stream.Writer, s0, s1 int, sliceCounts []uint64, slab []uint64) error {
	// Slice s owns slab[off[s-s0] : off[s-s0+1]].
	off := make([]uint64, s1-s0+1)
	for s := s0; s < s1; s++ {
		off[s-s0+1] = off[s-s0] + sliceCounts[s]
	}
	slab = slab[:off[s1-s0]]
	fill := make([]atomic.Uint64, s1-s0)
	local := make([][][]uint64, g.workers)
	for w := range local {
		local[w] = make([][]uint64, s1-s0)
	}
	lo := uint64(s0) << (g.timeBits - g.sliceBits)
	hi := uint64(s1) << (g.timeBits - g.sliceBits)
	var overflow atomic.Bool
	err := ordered(ctx, len(g.chunks), g.workers, func(w, i int) (struct{}, error) {
		loc := local[w]
		var t [maxPairUpdates]uint64
		rr := g.chunks[i]
		for a := rr.lo; a < rr.hi; a++ {
			isoA := g.isolated[a]
			for b := a + 1; b < g.vertices; b++ {
				_, n := g.updates(a, b, isoA, &t)
				for j, x := range t[:n] {
					if x >= lo && x < hi {
						s := g.slice(x) - s0
						loc[s] = append(loc[s], g.record(a, b, x, j&1))
					}
				}
			}
		}
		for s, recs := range loc {
			if len(recs) == 0 {
				continue
			}
			end := fill[s].Add(uint64(len(recs)))
			if end > off[s+1]-off[s] {
				overflow.Store(true)
			} else {
				copy(slab[off[s]+end-uint64(len(recs)):], recs)
			}
			loc[s] = recs[:0]
		}
		return struct{}{}, nil
	}, func(int, struct{}) error { return nil })
	if err != nil {
		return err
	}
	for s := range fill {
		if overflow.Load() || fill[s].Load() != off[s+1]-off[s] {
			return fmt.Errorf("streamgen: BUG: slice %d has %d updates, the counting pass found %d",
				s0+s, fill[s].Load(), off[s+1]-off[s])
		}
	}
	local = nil
	// Sort slices in parallel, each worker with its own scratch buffer;
	// write them in order.
	var largest uint64
	for s := range fill {
		largest = max(largest, off[s+1]-off[s])
	}
	scratch := make([][]uint64, g.workers)
	return ordered(ctx, s1-s0, g.workers, func(w, s int) ([]uint64, error) {
		if scratch[w] == nil {
			scratch[w] = make([]uint64, largest)
		}
		recs := slab[off[s]:off[s+1]]
		radixSort(recs, scratch[w])
		return recs, nil
	}, func(s int, recs []uint64) error {
		for _, r := range recs {
			if err := sw.Write(g.decode(r)); err != nil {
				return err
			}
		}
		return nil
	})
}

// generate runs the passes: count, cumulative file, then window passes.
func (g *pairGen) generate(ctx context.Context, name string, out, cum io.Writer) (Summary, error) {
	t0 := time.Now()
	c, comps, err := g.count(ctx)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{
		Model: name, Vertices: g.vertices, Updates: c.inserts + c.deletes, Inserts: c.inserts,
		Deletes: c.deletes, Edges: c.edges, Components: comps, ChurnedEdges: c.churned,
		TransientPairs: c.transient,
	}
	for _, iso := range g.isolated {
		if iso {
			s.Isolated++
		}
	}
	g.log.Info("streamgen: counted", "updates", s.Updates, "edges", s.Edges, "components", comps,
		"duration", time.Since(t0).Round(time.Millisecond))
	if s.Updates == 0 {
		return s, errors.New("streamgen: the stream would have no updates; raise the density")
	}
	if cum != nil {
		t0 = time.Now()
		if err := g.writeCumulative(ctx, cum, s.Edges); err != nil {
			return s, err
		}
		g.log.Info("streamgen: wrote cumulative file", "edges", s.Edges, "duration", time.Since(t0).Round(time.Millisecond))
	}
	sw, err := stream.NewWriter(out, stream.Header{Vertices: g.vertices, Updates: s.Updates})
	if err != nil {
		return s, err
	}
	// Passes: runs of consecutive slices holding at most g.pass updates
	// (or one slice, if it alone holds more).
	var passes [][2]int
	var largest uint64
	for s0 := 0; s0 < len(c.slices); {
		s1, n := s0+1, c.slices[s0]
		for s1 < len(c.slices) && n+c.slices[s1] <= uint64(g.pass) {
			n += c.slices[s1]
			s1++
		}
		passes = append(passes, [2]int{s0, s1})
		largest = max(largest, n)
		s0 = s1
	}
	slab := make([]uint64, largest)
	var done uint64
	for _, p := range passes {
		s0, s1 := p[0], p[1]
		var n uint64
		for _, k := range c.slices[s0:s1] {
			n += k
		}
		t0 = time.Now()
		if err := g.writePass(ctx, sw, s0, s1, c.slices, slab); err != nil {
			return s, err
		}
		s.Passes++
		done += n
		g.log.Info("streamgen: wrote pass", "pass", s.Passes, "of_passes", len(passes), "updates", n,
			"done", done, "of", s.Updates, "duration", time.Since(t0).Round(time.Millisecond))
	}
	if err := sw.Close(); err != nil {
		return s, err
	}
	return s, nil
}

// idBitsFor returns the bits needed for vertex ids in [0, v).
func idBitsFor(v uint32) uint {
	return uint(max(1, bits.Len32(v-1)))
}
