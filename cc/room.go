package cc

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/dsu"
	"sketchcc/gutters"
	"sketchcc/sketch"
	"sketchcc/store"
	"sketchcc/stream"
)

// Pipeline is what a Room needs of the ingestion pipeline
// (*ingest.Engine implements it).
type Pipeline interface {
	// IngestN reads up to n updates of src into the pipeline and returns
	// how many it read.
	IngestN(ctx context.Context, src stream.Source, n uint64) (uint64, error)
	// Flush hands every buffered update to the store and waits until the
	// store has applied them all, or ctx is done.
	Flush(ctx context.Context) error
	// Settle waits until every batch handed out has been applied, without
	// emitting a partly filled gutter, and returns the view of the ids
	// still buffered: the store's sketches plus the view then hold every
	// update read. The view turns stale (its methods return
	// gutters.ErrStale) once the pipeline moves on.
	Settle(ctx context.Context) (gutters.Settled, error)
	// Store returns the sketch store that Flush fills.
	Store() *store.Store
}

// Config configures a Room. A zero field takes its default.
type Config struct {
	// NoGreedy turns off the greedy shortcut (DESIGN.md §5): every query
	// then flushes and runs Boruvka.
	NoGreedy bool
	// Workers is the number of goroutines that merge and sample
	// supernodes in Boruvka. Zero means runtime.GOMAXPROCS(0).
	Workers int
	// FlushTimeout bounds a query's flush. Zero means no bound.
	FlushTimeout time.Duration
	// Late, when set, names whoever holds batches that a flush past
	// FlushTimeout still waits for (distributor.Pool.Late); the names go
	// into the query's error.
	Late func() []string
}

// Result is the answer to a connected-components query.
type Result struct {
	// Components is the number of connected components.
	Components int
	// Labels holds a component label in [0, Components) per vertex,
	// numbered by each component's smallest vertex; len = Vertices.
	Labels []uint32
	// Forest is a spanning forest of the graph: Vertices − Components edges.
	Forest Forest
	// Boruvka counts the rounds, samples, merges and failures.
	Boruvka BoruvkaStats
	// AfterUpdates is the number of updates read before the query.
	AfterUpdates uint64
	// Greedy is true when the answer came from the greedy shortcut's DSU,
	// without a flush or Boruvka.
	Greedy bool
	// Flush is the time spent emptying the gutters and applying batches,
	// or, when the query reuses the last answer, waiting for the batches
	// already handed out.
	Flush time.Duration
	// CC is the time spent in Boruvka and labelling.
	CC time.Duration
	// Apply is the part of CC spent sketching the buffered ids of the
	// components the query re-opened into the store: work the pipeline
	// would otherwise have done later.
	Apply time.Duration
}

// Room answers connected-components queries over a pipeline's sketch
// store. It is not safe for concurrent use.
type Room struct {
	cfg     Config
	pipe    Pipeline
	st      *store.Store
	greedy  greedyCC
	updates uint64 // updates read through IngestN
	// followRaw is follow's read buffer, kept across calls.
	followRaw []byte
	applyAt   int // pieceApplyIDs; tests lower it
	kRounds   int // Boruvka rounds of a k-forest's later sets; 0: all columns; tests lower it
	scratch   boruvkaScratch
}

// New returns a Room over pipe. Every update must reach pipe through the
// Room's IngestN, or the greedy shortcut answers for a graph it has not
// seen.
func New(pipe Pipeline, cfg Config) *Room {
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	return &Room{cfg: cfg, pipe: pipe, st: pipe.Store(), applyAt: pieceApplyIDs}
}

// Ingest reads src to its end through the pipeline; see IngestN.
func (r *Room) Ingest(ctx context.Context, src stream.Source) (uint64, error) {
	return r.IngestN(ctx, src, math.MaxUint64)
}

// IngestN reads up to n updates of src into the pipeline, as the
// pipeline's IngestN does, and keeps the greedy shortcut's DSU current
// with each of them. When src is a *stream.Cursor over a regular file, the
// DSU follows on a goroutine of its own that reads the same records from
// the file, so that it does not slow the pipeline's readers (several, with
// ingest.Config.Readers > 1); IngestN waits for it before returning. With
// any other source the DSU sees the updates as the pipeline reads them, on
// the caller's goroutine. When the pipeline returns an error, or the DSU
// could not follow exactly the updates the pipeline read, the shortcut is
// turned off until the next full query, so that no answer is built on it.
func (r *Room) IngestN(ctx context.Context, src stream.Source, n uint64) (uint64, error) {
	if !r.greedy.valid {
		k, err := r.pipe.IngestN(ctx, src, n)
		r.updates += k
		return k, err
	}
	var k uint64
	var err error
	if cur, ok := src.(*stream.Cursor); ok && cur.Seekable() {
		k, err = r.ingestBeside(ctx, cur, n)
	} else {
		k, err = r.pipe.IngestN(ctx, watched{src, &r.greedy}, n)
	}
	r.updates += k
	if err != nil {
		r.greedy.valid = false
	}
	return k, err
}

// ingestBeside runs the pipeline's IngestN over cur while a goroutine of
// its own feeds the greedy DSU the same records, read from cur's file,
// and waits for both. It turns the shortcut off when the DSU did not see
// exactly the records the pipeline read.
func (r *Room) ingestBeside(ctx context.Context, cur *stream.Cursor, n uint64) (uint64, error) {
	lo := cur.Pos()
	hi := lo + min(n, cur.Header().Updates-min(lo, cur.Header().Updates))
	// stop is the record the DSU stops before: hi, lowered to where the
	// pipeline stopped once it returns.
	var stop atomic.Uint64
	stop.Store(hi)
	var fed uint64
	done := make(chan struct{})
	go func() {
		defer close(done)
		pprof.Do(ctx, pprof.Labels("stage", "greedy", "goroutine", "greedy"), func(ctx context.Context) {
			fed = r.follow(ctx, cur.File(), lo, &stop)
		})
	}()
	k, err := r.pipe.IngestN(ctx, cur, n)
	stop.Store(lo + k)
	<-done
	if fed != k {
		r.greedy.valid = false
	}
	return k, err
}

// follow reads records [lo, stop) of f and applies them to the greedy DSU
// in order, undecoded (stream.Reader.ReadRaw: the pipeline's readers decode
// them already), re-reading stop before each chunk, and returns how many it
// applied. It stops early at a bad record, at the end of the file, or when
// ctx is done.
func (r *Room) follow(ctx context.Context, f *stream.File, lo uint64, stop *atomic.Uint64) uint64 {
	if r.followRaw == nil {
		r.followRaw = make([]byte, followChunk*stream.RecordBytes)
	}
	rd := f.ReaderBuf(lo, stop.Load(), r.followRaw)
	at := lo
	for ctx.Err() == nil {
		recs, _, err := rd.ReadRaw()
		// Records past stop (lowered when the pipeline stopped early) are
		// not applied.
		recs = recs[:min(uint64(len(recs)), (stop.Load()-min(at, stop.Load()))*stream.RecordBytes)]
		k := r.greedy.applyRaw(recs)
		at += uint64(k)
		if err != nil || k == 0 || k*stream.RecordBytes < len(recs) {
			break
		}
	}
	return at - lo
}

// watched is a stream.Source whose updates the greedy DSU sees as they
// are read.
type watched struct {
	stream.Source
	g *greedyCC
}

func (w watched) Read(dst []stream.Update) (int, error) {
	n, err := w.Source.Read(dst)
	w.g.apply(dst[:n])
	return n, err
}

// followChunk is the number of records follow reads at a time: 108 KiB of
// stream, as the pipeline's reader reads.
const followChunk = 12 << 10

// StartGreedy turns the greedy shortcut on at the empty graph, as Run does
// for a schedule of several queries, for a caller that drives IngestN and
// Query itself (a live stream's query service): while no forest edge is
// deleted, its queries need no flush or Boruvka. It does nothing once the
// Room has read an update.
func (r *Room) StartGreedy() { r.greedyFromStart() }

// greedyFromStart turns the greedy shortcut on at the empty graph, whose
// answer is every vertex alone with an empty forest, when the Room has read
// no update, has no answer yet and the shortcut is not turned off.
func (r *Room) greedyFromStart() {
	if r.cfg.NoGreedy || r.greedy.valid || r.updates > 0 {
		return
	}
	r.greedy.reset(dsu.New(r.st.Params().Vertices()), nil)
}

// Query answers a connected-components query after every update read so
// far. While no forest edge of the last answer has been deleted since, it
// answers from the greedy shortcut's DSU (greedyCC), without a flush or
// Boruvka. Otherwise it runs Boruvka's algorithm over the sketches only
// over the components that a deleted forest edge re-opened, starting from
// the trees of the forest edges still present; it does not flush the
// gutters then, but waits for the batches already handed out and adds the
// buffered updates of the supernodes it merges to the one column each
// round reads, so the gutters keep filling toward full batches. With
// Config.NoGreedy, or before the first answer (when the shortcut was not
// kept from the first update, as Run keeps it), it flushes the pipeline
// and runs Boruvka over all vertices from singletons. The sketches are left
// as they were, so ingestion may continue afterwards. It returns an error
// wrapping ErrTooManyRounds when the sketch columns run out (raise the
// sketch factor), one wrapping ctx's cause (or the flush timeout, naming
// Config.Late's holders) when the flush does not finish, or one wrapping
// gutters.ErrStale when the pipeline moved on while the query read its
// buffered ids; no partial answer is returned then.
func (r *Room) Query(ctx context.Context) (*Result, error) {
	t0 := time.Now()
	g := &r.greedy
	if g.exact() {
		res := &Result{Components: g.sets, Labels: g.labels(), Forest: Forest{Edges: g.edges()},
			AfterUpdates: r.updates, Greedy: true}
		res.CC = time.Since(t0)
		return res, nil
	}
	reuse := g.valid && !r.cfg.NoGreedy
	var view gutters.Settled // the buffered ids, when the query reuses the last answer
	wait := r.pipe.Flush
	if reuse {
		wait = func(ctx context.Context) (err error) {
			view, err = r.pipe.Settle(ctx)
			return err
		}
	}
	if err := r.within(ctx, wait); err != nil {
		return nil, err
	}
	t1 := time.Now()
	p := r.st.Params()
	var (
		d     *dsu.DSU
		kept  []stream.Edge
		rs    = resume{implicit: noVertex, scratch: &r.scratch}
		apply time.Duration
		stale atomic.Bool // a read of view found it stale: the answer is void
	)
	if reuse {
		var bufs sync.Pool // of *[]uint32, for Held from Boruvka's goroutines
		rs.held = func(col []sketch.Bucket, round int, v uint32) {
			buf, _ := bufs.Get().(*[]uint32)
			if buf == nil {
				buf = new([]uint32)
			}
			ids, err := view.Held(v, buf)
			if err != nil {
				stale.Store(true)
			}
			p.UpdateColumnBatch(col, round, v, ids)
			bufs.Put(buf)
		}
		d, kept, rs.finished = g.start()
		ta := time.Now()
		var err error
		if rs.implicit, err = r.applyPieces(view, d, rs.finished); err != nil {
			return nil, fmt.Errorf("cc: query: %w", err)
		}
		apply = time.Since(ta)
	} else {
		d = dsu.New(p.Vertices())
	}
	forest, st, err := spanningForest(p, r.st.Columns, d, r.cfg.Workers, p.SetColumns(), rs)
	if err != nil {
		return nil, err
	}
	if stale.Load() {
		return nil, fmt.Errorf("cc: query: %w", gutters.ErrStale)
	}
	added := forest.Edges
	forest.Edges = append(kept, forest.Edges...)
	res := &Result{Components: d.Sets(), Labels: d.Labels(), Forest: forest, Boruvka: st,
		AfterUpdates: r.updates, Flush: t1.Sub(t0), CC: time.Since(t1), Apply: apply}
	switch {
	case reuse:
		g.extend(d, added)
	case !r.cfg.NoGreedy:
		g.reset(d, forest.Edges)
	}
	return res, nil
}

// pieceApplyIDs is the number of buffered ids in the re-opened pieces from
// which a query sketches them into the store rather than hashing them into
// each round's column: 64 per vertex. Hashing a column costs two hashes per
// id and is thrown away; sketching costs Columns+1 hashes per id but is
// work the pipeline would have done anyway, on all cores while the reader
// waits. Few, small pieces (frequent queries) are cheaper hashed; many
// pieces holding most of the gutters (rare queries) are cheaper sketched.
const pieceApplyIDs = 64

// applyPieces sketches into the store the buffered ids (in view) of the
// vertices that Boruvka will read from d (every vertex of an unfinished
// tree but the largest), and empties their gutters, when they hold more
// than pieceApplyIDs per vertex of the graph. It runs Config.Workers
// goroutines and waits for them. It returns the root of the largest
// unfinished tree, or noVertex when every tree is finished, and
// gutters.ErrStale, having applied nothing, when view is stale.
func (r *Room) applyPieces(view gutters.Settled, d *dsu.DSU, finished []bool) (largest uint32, err error) {
	n := d.Len()
	largest = noVertex
	for v := range n {
		if rt := d.Find(v); rt == v && !finished[v] && (largest == noVertex || d.Size(v) > d.Size(largest)) {
			largest = v
		}
	}
	var vs []uint32
	ids := 0
	for v := range n {
		if rt := d.Find(v); !finished[rt] && rt != largest {
			k, err := view.Len(v)
			if err != nil {
				return noVertex, err
			}
			if k > 0 {
				vs = append(vs, v)
				ids += k
			}
		}
	}
	if ids == 0 || ids <= r.applyAt*int(n) {
		return largest, nil
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range r.cfg.Workers {
		wg.Go(func() {
			var buf []uint32
			for {
				i := int(next.Add(1)) - 1
				if i >= len(vs) {
					return
				}
				// Len found view valid; were it stale now, Held
				// would give no ids and the Drops below say so.
				held, _ := view.Held(vs[i], &buf)
				r.st.ApplyNow(vs[i], held)
			}
		})
	}
	wg.Wait()
	for _, v := range vs {
		if err := view.Drop(v); err != nil {
			return noVertex, err
		}
	}
	return largest, nil
}

// State is what a checkpoint keeps of a Room: the updates read and the
// greedy shortcut's forest.
type State struct {
	// Updates is the number of updates read through IngestN.
	Updates uint64
	// GreedyValid says that Forest spans the graph of those updates.
	GreedyValid bool
	// Forest is the greedy shortcut's spanning forest when GreedyValid
	// (owned by the caller).
	Forest []stream.Edge
}

// Barrier flushes the pipeline, as a query does, and returns the Room's
// state: the store's sketches then hold exactly State.Updates updates,
// and stay so until the next IngestN. It returns the flush's error.
func (r *Room) Barrier(ctx context.Context) (State, error) {
	if err := r.within(ctx, r.pipe.Flush); err != nil {
		return State{}, err
	}
	// The forest spans the graph only while no deleted forest edge has
	// re-opened a component.
	s := State{Updates: r.updates, GreedyValid: r.greedy.exact()}
	if s.GreedyValid {
		s.Forest = r.greedy.edges()
	}
	return s, nil
}

// Restore makes a new Room continue from s, whose sketches the pipeline's
// store already holds: the next IngestN reads update s.Updates + 1. A valid
// forest becomes the greedy shortcut's DSU again; it returns an error, and
// leaves the shortcut off, when s.Forest has a cycle or an edge out of
// range.
func (r *Room) Restore(s State) error {
	r.updates = s.Updates
	r.greedy.valid = false
	if !s.GreedyValid || r.cfg.NoGreedy {
		return nil
	}
	n := r.st.Params().Vertices()
	d := dsu.New(n)
	for i, e := range s.Forest {
		if e.Src >= n || e.Dst >= n {
			return fmt.Errorf("cc: forest edge %d (%d,%d) out of range for %d vertices", i, e.Src, e.Dst, n)
		}
		if _, merged := d.Union(e.Src, e.Dst); !merged {
			return fmt.Errorf("cc: forest edge %d (%d,%d) closes a cycle", i, e.Src, e.Dst)
		}
	}
	r.greedy.reset(d, s.Forest)
	return nil
}

// within runs wait (the pipeline's Flush or Settle) within
// Config.FlushTimeout.
func (r *Room) within(ctx context.Context, wait func(context.Context) error) error {
	if r.cfg.FlushTimeout <= 0 {
		return wait(ctx)
	}
	fctx, cancel := context.WithTimeoutCause(ctx, r.cfg.FlushTimeout,
		fmt.Errorf("cc: the flush timeout of %v passed", r.cfg.FlushTimeout))
	defer cancel()
	err := wait(fctx)
	if err != nil && ctx.Err() == nil && fctx.Err() != nil && r.cfg.Late != nil {
		if late := r.cfg.Late(); len(late) > 0 {
			return fmt.Errorf("workers did not answer in time: %s: %w", strings.Join(late, "; "), err)
		}
	}
	return err
}
