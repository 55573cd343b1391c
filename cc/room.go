package cc

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"time"

	"sketchcc/dsu"
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
	// Flush is the time spent emptying the gutters and applying batches.
	Flush time.Duration
	// CC is the time spent in Boruvka and labelling.
	CC time.Duration
}

// Room answers connected-components queries over a pipeline's sketch
// store. It is not safe for concurrent use.
type Room struct {
	cfg     Config
	pipe    Pipeline
	st      *store.Store
	greedy  greedyCC
	updates uint64 // updates read through IngestN
}

// New returns a Room over pipe. Every update must reach pipe through the
// Room's IngestN, or the greedy shortcut answers for a graph it has not
// seen.
func New(pipe Pipeline, cfg Config) *Room {
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	return &Room{cfg: cfg, pipe: pipe, st: pipe.Store()}
}

// Ingest reads src to its end through the pipeline; see IngestN.
func (r *Room) Ingest(ctx context.Context, src stream.Source) (uint64, error) {
	return r.IngestN(ctx, src, math.MaxUint64)
}

// greedyStep is the number of updates read at a time while the greedy
// DSU is valid: the DSU watches them in order on the calling goroutine, and
// once it is invalid the rest of the segment goes to the pipeline as is
// (in parallel, with several readers).
const greedyStep = 1 << 20

// IngestN reads up to n updates of src into the pipeline, as the
// pipeline's IngestN does, and keeps the greedy shortcut's DSU current
// with each of them.
func (r *Room) IngestN(ctx context.Context, src stream.Source, n uint64) (uint64, error) {
	var done uint64
	for r.greedy.valid && done < n {
		want := min(n-done, greedyStep)
		k, err := r.pipe.IngestN(ctx, watched{src, &r.greedy}, want)
		done += k
		r.updates += k
		if err != nil || k < want {
			return done, err
		}
	}
	if done == n {
		return done, nil
	}
	k, err := r.pipe.IngestN(ctx, src, n-done)
	r.updates += k
	return done + k, err
}

// watched is a stream.Source whose updates the greedy DSU sees as they
// are read.
type watched struct {
	stream.Source
	g *greedyCC
}

func (w watched) Read(dst []stream.Update) (int, error) {
	n, err := w.Source.Read(dst)
	if w.g.valid {
		w.g.apply(dst[:n])
	}
	return n, err
}

// Query answers a connected-components query after every update read so
// far: from the greedy shortcut's DSU while it is valid, else by flushing
// the pipeline and running Boruvka's algorithm over the sketches. The
// sketches are left as they were, so ingestion may continue afterwards.
// It returns an error wrapping ErrTooManyRounds when the sketch columns
// run out (raise the sketch factor), or one wrapping ctx's cause (or the
// flush timeout, naming Config.Late's holders) when the flush does not
// finish; no partial answer is returned then.
func (r *Room) Query(ctx context.Context) (*Result, error) {
	t0 := time.Now()
	if r.greedy.valid {
		d := r.greedy.d
		res := &Result{Components: d.Sets(), Labels: d.Labels(),
			Forest:       Forest{Edges: append([]stream.Edge(nil), r.greedy.forest...)},
			AfterUpdates: r.updates, Greedy: true}
		res.CC = time.Since(t0)
		return res, nil
	}
	if err := r.flush(ctx); err != nil {
		return nil, err
	}
	t1 := time.Now()
	d := dsu.New(r.st.Params().Vertices())
	forest, st, err := SpanningForest(r.st.Table(), d, r.cfg.Workers)
	if err != nil {
		return nil, err
	}
	res := &Result{Components: d.Sets(), Labels: d.Labels(), Forest: forest, Boruvka: st,
		AfterUpdates: r.updates, Flush: t1.Sub(t0), CC: time.Since(t1)}
	if !r.cfg.NoGreedy {
		r.greedy.reset(d, forest.Edges)
	}
	return res, nil
}

// State is what a checkpoint keeps of a Room: the updates read and the
// greedy shortcut's forest.
type State struct {
	// Updates is the number of updates read through IngestN.
	Updates uint64
	// GreedyValid says that Forest spans the graph of those updates.
	GreedyValid bool
	// Forest is the greedy shortcut's spanning forest when GreedyValid
	// (shared with the Room: valid until the next IngestN or Query).
	Forest []stream.Edge
}

// Barrier flushes the pipeline, as a query does, and returns the Room's
// state: the store's sketches then hold exactly State.Updates updates,
// and stay so until the next IngestN. It returns the flush's error.
func (r *Room) Barrier(ctx context.Context) (State, error) {
	if err := r.flush(ctx); err != nil {
		return State{}, err
	}
	s := State{Updates: r.updates, GreedyValid: r.greedy.valid}
	if s.GreedyValid {
		s.Forest = r.greedy.forest
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

// flush flushes the pipeline within Config.FlushTimeout.
func (r *Room) flush(ctx context.Context) error {
	if r.cfg.FlushTimeout <= 0 {
		return r.pipe.Flush(ctx)
	}
	fctx, cancel := context.WithTimeoutCause(ctx, r.cfg.FlushTimeout,
		fmt.Errorf("cc: the flush timeout of %v passed", r.cfg.FlushTimeout))
	defer cancel()
	err := r.pipe.Flush(fctx)
	if err != nil && ctx.Err() == nil && fctx.Err() != nil && r.cfg.Late != nil {
		if late := r.cfg.Late(); len(late) > 0 {
			return fmt.Errorf("workers did not answer in time: %s: %w", strings.Join(late, "; "), err)
		}
	}
	return err
}
