package streamgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// pairGen writes the stream of a pairModel in passes over its pairs, on
// workers goroutines: see the package doc.
type pairGen struct {
	pairModel
	sparse    *sparseModel // nil: decide every pair
	sliceBits uint         // time slices: the top sliceBits bits of the time
	chunks    []rowRange
	workers   int
	pass      int // the most updates one pass holds
	log       *slog.Logger
	format    stream.Format // of the stream written
}

type rowRange struct{ lo, hi uint32 }

// slice returns the time slice of time t.
func (g *pairGen) slice(t uint64) int { return int(t >> (g.timeBits - g.sliceBits)) }

// chunkPairs is the target number of pairs per unit of work: small enough
// to balance two to a few dozen workers and to keep a chunk's cumulative
// text (about 12 bytes per edge) near 12 MiB, large enough that the
// per-chunk overhead vanishes.
const chunkPairs = 1 << 21

// sliceUpdates is the target number of updates per time slice: each slice
// is sorted on its own (16 MiB of records).
const sliceUpdates = 1 << 17

// newPairGen plans the passes over m's pairs under cfg, which a Validate
// has accepted.
func newPairGen(m modelParams, cfg Config) *pairGen {
	if cfg.Rounds == 0 {
		cfg.Rounds = 1
	}
	if cfg.PassUpdates == 0 {
		cfg.PassUpdates = DefaultPassUpdates
	}
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v := m.vertices

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
	expected := other + 2*float64(cfg.Rounds)*trans*nonEdges
	g := &pairGen{pairModel: newPairModel(m, cfg, trans), workers: cfg.Workers, pass: cfg.PassUpdates, log: log,
		format: cfg.Format}
	// rowWork is the cost of scanning a row of the given pairs, in pair
	// decisions: all of them, or one per pair with an update.
	rowWork := func(pairs uint32) float64 { return float64(pairs) }
	if m.uniform {
		if q := anyUpdate(m.classes[0], trans, cfg.Rounds); q < sparseCutoff {
			g.sparse = newSparseModel(cfg.Seed, m.classes[0], cfg.Churn, trans, cfg.Rounds, q, cfg.Isolated > 0)
			rowWork = func(pairs uint32) float64 { return float64(pairs)*q + 1 }
		}
	}

	// Enough slices that each holds about sliceUpdates updates, and at
	// least 64 so that even a small stream can be written in several passes.
	g.sliceBits = 6
	for g.sliceBits < 16 && expected/float64(uint64(1)<<g.sliceBits) > sliceUpdates {
		g.sliceBits++
	}

	// Chunks of whole rows; row a holds pairs (a, b) for b > a.
	acc := 0.0
	lo := uint32(0)
	for a := uint32(0); a < v; a++ {
		acc += rowWork(v - 1 - a)
		if acc >= chunkPairs || a == v-1 {
			g.chunks = append(g.chunks, rowRange{lo, a + 1})
			lo, acc = a+1, 0
		}
	}
	log.Info("streamgen: plan", "model", m.name, "vertices", v, "expected_edges", int64(edges),
		"expected_updates", int64(expected), "slices", 1<<g.sliceBits, "chunks", len(g.chunks),
		"workers", g.workers, "sparse", g.sparse != nil)
	return g
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
			row := g.walk(a)
			for b, n := row.next(&t); n > 0; b, n = row.next(&t) {
				if n&1 == 1 { // a final edge
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
			pa := uint64(g.perm[a])
			row := g.walk(a)
			for b, n := row.next(&t); n > 0; b, n = row.next(&t) {
				if n&1 == 1 { // a final edge
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
// known, sorts them by time and writes them to out. slab must have room
// for all of them; it is reused from pass to pass so that the garbage
// collector never holds two passes' records at once.
func (g *pairGen) writePass(ctx context.Context, out *recordOut, s0, s1 int, sliceCounts []uint64, slab []uint64) error {
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
			row := g.walk(a)
			row.window, row.lo, row.hi = true, lo, hi
			for b, n := row.next(&t); n > 0; b, n = row.next(&t) {
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
	return ordered(ctx, s1-s0, g.workers, func(w, s int) (sortedSlice, error) {
		if scratch[w] == nil {
			scratch[w] = make([]uint64, largest)
		}
		recs := slab[off[s]:off[s+1]]
		radixSort(recs, scratch[w])
		return sortedSlice{recs, out.encode(recs)}, nil
	}, out.write)
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
	ro, err := newRecordOut(&g.pairModel, out, stream.Header{Vertices: g.vertices, Updates: s.Updates}, g.format, g.workers)
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
		if err := g.writePass(ctx, ro, s0, s1, c.slices, slab); err != nil {
			return s, err
		}
		s.Passes++
		done += n
		g.log.Info("streamgen: wrote pass", "pass", s.Passes, "of_passes", len(passes), "updates", n,
			"done", done, "of", s.Updates, "duration", time.Since(t0).Round(time.Millisecond))
	}
	if err := ro.close(); err != nil {
		return s, err
	}
	return s, nil
}
