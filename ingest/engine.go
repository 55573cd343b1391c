// Package ingest is the in-process ingestion pipeline and connected
// components query engine of the main node:
//
//	stream.Source ──Read──▶ Ingest (caller's goroutine) ──Insert──▶ gutters
//	  gutters ──Batch──▶ delta workers (Workers goroutines) ──XOR──▶ sketch.Table
//	Query: gutters.Flush ▶ wait until every batch is applied ▶ Boruvka
//
// A delta worker applies a batch to its vertex's sketch in place under that
// vertex's lock, so two batches of one vertex never race and every batch
// is applied exactly once. Remote workers (a later distributor) plug in
// where the local delta workers consume Batches: they receive batches,
// return deltas, and MergeDelta XORs each delta in once.
//
// Queries do not modify the sketches; ingestion can resume after one.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"sketchcc/gutters"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// DefaultSeed seeds the sketch hashes when Config.Seed is zero.
const DefaultSeed = 0x5ce7c4c0ffee2026

// readChunk is the number of updates read from the source per call: 108 KiB
// of records, large enough to amortise the call, small enough for L2.
const readChunk = 12 << 10

// Config configures an Engine. A zero field takes its default.
type Config struct {
	// Vertices is the number of vertices, from the stream header.
	Vertices uint32
	// SketchFactor scales the sketch columns (DESIGN.md §2). Zero means 1.
	SketchFactor float64
	// BatchFactor sizes a gutter as BatchFactor · sketch bytes per vertex / 4
	// neighbour ids (DESIGN.md §3). Zero means 1.
	BatchFactor float64
	// Seed seeds the sketch hashes. Zero means DefaultSeed.
	Seed uint64
	// Workers is the number of local delta workers. Zero means
	// runtime.GOMAXPROCS(0); a negative value means none, and every batch
	// must then be taken from Batches by an external consumer (a remote
	// work distributor).
	Workers int
	// QueueBatches is the number of full batches buffered or in flight
	// before the reader blocks. Zero means 32 · max(Workers, 2): a deep queue
	// keeps both the reader and the delta workers from parking (measured in
	// results/perf-notes.md).
	QueueBatches int
	// NoGreedy turns off the greedy shortcut (DESIGN.md §5): every query
	// then flushes and runs Boruvka.
	NoGreedy bool
	// HugePages asks the kernel for transparent huge pages for the sketch
	// table and the gutters. With most vertices updated (a stream of at
	// least as many updates as vertices) it speeds ingestion by 12–25%
	// (fewer TLB misses on random appends and sketch updates); with few,
	// every touched 2 MiB becomes resident instead of every touched sketch,
	// which can multiply peak memory. Engine.HugePages reports whether the
	// kernel accepted.
	HugePages bool
	// Logger receives progress messages; nil discards them.
	Logger *slog.Logger
}

func (c *Config) ensureDefaults() {
	if c.SketchFactor == 0 {
		c.SketchFactor = 1
	}
	if c.BatchFactor == 0 {
		c.BatchFactor = 1
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.QueueBatches == 0 {
		c.QueueBatches = 32 * max(c.Workers, 2)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Validate reports every problem with c at once.
func (c Config) Validate() error {
	var errs []error
	if c.Vertices < 2 {
		errs = append(errs, fmt.Errorf("ingest: %d vertices, need at least 2", c.Vertices))
	}
	if c.SketchFactor < 0 {
		errs = append(errs, fmt.Errorf("ingest: sketch factor %v, need > 0", c.SketchFactor))
	}
	if c.BatchFactor < 0 || c.BatchFactor > 64 {
		errs = append(errs, fmt.Errorf("ingest: batch factor %v, need (0, 64]", c.BatchFactor))
	}
	if c.Workers > 4096 {
		errs = append(errs, fmt.Errorf("ingest: %d workers, need at most 4096", c.Workers))
	}
	if c.QueueBatches < 0 {
		errs = append(errs, fmt.Errorf("ingest: queue of %d batches, need > 0", c.QueueBatches))
	}
	return errors.Join(errs...)
}

// Engine owns the sketches, the gutters and the local delta workers.
//
// Ingest, Query and Close must be called from one goroutine at a time.
// Updates, Stats and MergeDelta are safe for concurrent use.
type Engine struct {
	cfg    Config
	params sketch.Params
	table  *sketch.Table
	gut    *gutters.Gutters
	locks  []sync.Mutex   // by vertex: held while its sketch is written
	wg     sync.WaitGroup // delta workers
	qwg    sync.WaitGroup // background queries

	updates atomic.Uint64 // updates inserted into the gutters
	greedy  greedyCC      // owned by the goroutine calling Ingest and Query
	buf     []stream.Update

	// A query whose flush and Boruvka run in the background while
	// ingestion goes on (StartQuery), and what it needs; owned by the
	// goroutine calling Ingest and Query.
	pending     *PendingQuery
	drainIDs    []uint32
	drainRuns   []gutters.Run
	replay      []stream.Update // updates since pending's point, for the greedy DSU
	replayOK    bool            // replay holds all of them
	gutterBytes int64           // memory of the gutters, bounds what a background query copies
	hugePages   bool            // the kernel accepted Config.HugePages for both slabs

	applied  atomic.Uint64 // batches applied to the table
	progress chan struct{} // signalled (without blocking) when applied grows
	closed   bool
}

// New builds an Engine for cfg and starts its delta workers. It returns the
// errors of cfg.Validate and sketch.NewParams.
func New(cfg Config) (*Engine, error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, err := sketch.NewParams(cfg.Vertices, cfg.SketchFactor, cfg.Seed)
	if err != nil {
		return nil, err
	}
	batch := batchUpdates(cfg, p)
	g, err := gutters.New(gutters.Config{Vertices: cfg.Vertices, BatchUpdates: batch, QueueBatches: cfg.QueueBatches})
	if err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, params: p, table: sketch.NewTable(p), gut: g, locks: make([]sync.Mutex, cfg.Vertices)}
	_, e.gutterBytes, _ = Memory(cfg)
	if cfg.HugePages {
		t, gu := e.table.AdviseHugePages(), g.AdviseHugePages()
		e.hugePages = t && gu
	}
	e.progress = make(chan struct{}, 1)
	for range max(cfg.Workers, 0) {
		e.wg.Go(e.deltaWorker)
	}
	return e, nil
}

// HugePages reports whether the sketch table and the gutters were advised
// to use transparent huge pages (Config.HugePages) and the kernel accepted.
func (e *Engine) HugePages() bool { return e.hugePages }

// batchUpdates sizes a gutter: BatchFactor · sketch bytes per vertex / 4
// neighbour ids (DESIGN.md §3).
func batchUpdates(cfg Config, p sketch.Params) int {
	return max(1, int(cfg.BatchFactor*float64(p.BytesPerVertex())/4))
}

// Memory returns the bytes an Engine for cfg allocates for its sketches and
// for its gutters, without allocating them, so a caller can refuse a
// stream whose header asks for more memory than the machine has. It
// returns the errors New would.
func Memory(cfg Config) (sketchBytes, gutterBytes int64, err error) {
	cfg.ensureDefaults()
	if err := cfg.Validate(); err != nil {
		return 0, 0, err
	}
	p, err := sketch.NewParams(cfg.Vertices, cfg.SketchFactor, cfg.Seed)
	if err != nil {
		return 0, 0, err
	}
	gutterBytes = (int64(cfg.Vertices) + int64(cfg.QueueBatches)) * int64(batchUpdates(cfg, p)) * 4
	return p.TableBytes(), gutterBytes, nil
}

// deltaWorker applies batches until the queue is closed. It runs in its own
// goroutine.
func (e *Engine) deltaWorker() {
	for b := range e.gut.Batches() {
		e.apply(b.Vertex, b.Neighbors)
		e.gut.Release(b)
		e.batchDone()
	}
}

func (e *Engine) apply(v uint32, neighbors []uint32) {
	l := &e.locks[v]
	l.Lock()
	e.table.ApplyBatch(v, neighbors)
	l.Unlock()
}

// batchDone counts one batch as applied and wakes Flush.
func (e *Engine) batchDone() {
	e.applied.Add(1)
	select {
	case e.progress <- struct{}{}:
	default:
	}
}

// Batches is the queue of full and flushed batches that the local delta
// workers consume. An external consumer (a remote work distributor) may
// receive from it too; for every batch it receives it must call Release
// once (after copying the neighbours it still needs) and then exactly one
// of MergeDelta or ApplyBatch for that batch's vertex, or Flush waits
// forever. The channel is closed by Close.
func (e *Engine) Batches() <-chan gutters.Batch { return e.gut.Batches() }

// Release returns a batch's buffer to the gutters. Safe for concurrent use.
func (e *Engine) Release(b gutters.Batch) { e.gut.Release(b) }

// ApplyBatch sketches the edges {v, u}, u in neighbors, into v's sketch in
// place and counts one batch as applied: the local fallback of an external
// consumer. Safe for concurrent use.
func (e *Engine) ApplyBatch(v uint32, neighbors []uint32) {
	e.apply(v, neighbors)
	e.batchDone()
}

// Params returns the sketch parameters.
func (e *Engine) Params() sketch.Params { return e.params }

// Config returns the configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// SketchBytes returns the memory of all sketches in bytes.
func (e *Engine) SketchBytes() int64 { return e.table.Bytes() }

// BatchUpdates returns the gutter capacity in neighbour ids.
func (e *Engine) BatchUpdates() int { return e.gut.Config().BatchUpdates }

// Updates returns the number of updates ingested so far.
func (e *Engine) Updates() uint64 { return e.updates.Load() }

// MergeDelta XORs delta, a sketch of BucketsPerVertex buckets computed by
// sketch.Params.Delta for vertex v, into v's sketch and counts one batch as
// applied. Merging the same delta twice cancels it: the caller guarantees
// exactly once. Safe for concurrent use.
func (e *Engine) MergeDelta(v uint32, delta []sketch.Bucket) {
	l := &e.locks[v]
	l.Lock()
	sketch.Merge(e.table.Sketch(v), delta)
	l.Unlock()
	e.batchDone()
}

// Ingest reads src to its end and inserts every update into the gutters;
// the delta workers sketch full batches meanwhile. src's header must match
// Config.Vertices. It returns the number of updates read, and stops early
// with ctx's cause when ctx is done or with src's *stream.FormatError on bad
// input; updates read before an error stay applied.
func (e *Engine) Ingest(ctx context.Context, src stream.Source) (uint64, error) {
	return e.IngestN(ctx, src, math.MaxUint64)
}

// IngestN is Ingest that stops after n updates, so that a query can follow
// exactly there; ingestion resumes with another call on the same src.
func (e *Engine) IngestN(ctx context.Context, src stream.Source, n uint64) (uint64, error) {
	if e.closed {
		return 0, gutters.ErrClosed
	}
	if h := src.Header(); h.Vertices != e.cfg.Vertices {
		return 0, fmt.Errorf("ingest: stream has %d vertices, engine %d", h.Vertices, e.cfg.Vertices)
	}
	if e.buf == nil {
		e.buf = make([]stream.Update, readChunk)
	}
	var done uint64
	for done < n {
		if err := context.Cause(ctx); err != nil {
			return done, err
		}
		buf := e.buf[:min(uint64(len(e.buf)), n-done)]
		k, err := src.Read(buf)
		if k > 0 {
			if e.pending != nil {
				e.notePending(buf[:k])
			}
			if e.greedy.valid {
				e.greedy.apply(buf[:k])
			}
			e.gut.InsertBatch(buf[:k])
			done += uint64(k)
			e.updates.Add(uint64(k))
		}
		if err == io.EOF {
			return done, nil
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// Flush emits every buffered update as a batch and waits until every batch
// emitted so far has been applied to the sketches. It returns an error
// wrapping ctx's cause, with the number of batches still out, when ctx is
// done first.
func (e *Engine) Flush(ctx context.Context) error {
	if e.cfg.Workers >= 0 {
		e.gut.FlushLocal(e.apply)
	} else {
		e.gut.Flush()
	}
	target := e.gut.Stats().Batches
	for e.applied.Load() < target {
		select {
		case <-e.progress:
		case <-ctx.Done():
			return e.flushError(ctx, target)
		}
	}
	return nil
}

func (e *Engine) flushError(ctx context.Context, target uint64) error {
	return fmt.Errorf("ingest: flush: %d of %d batches not applied: %w",
		target-min(target, e.applied.Load()), target, context.Cause(ctx))
}

// Result is the answer to a connected-components query.
type Result struct {
	// Components is the number of connected components.
	Components int
	// Labels holds a component label in [0, Components) per vertex,
	// numbered by each component's smallest vertex; len = Vertices.
	Labels []uint32
	// Forest is a spanning forest of the graph: Vertices − Components edges.
	Forest sketch.Forest
	// Boruvka counts the rounds, samples, merges and failures.
	Boruvka sketch.BoruvkaStats
	// AfterUpdates is the number of updates ingested before the query.
	AfterUpdates uint64
	// Greedy is true when the answer came from the greedy shortcut's DSU,
	// without a flush or Boruvka.
	Greedy bool
	// Flush is the time spent emptying the gutters and applying batches.
	Flush time.Duration
	// CC is the time spent in Boruvka and labelling.
	CC time.Duration
}

// Query answers a connected-components query after every update ingested
// so far: from the greedy shortcut's DSU while it is valid, else by
// flushing the buffered updates into the sketches and running Boruvka's
// algorithm over them. The sketches are left as they were, so Ingest may
// continue afterwards. It returns an error wrapping
// sketch.ErrTooManyRounds when the sketch columns run out (raise the sketch
// factor), or ctx's cause when ctx is done during the flush; no partial
// answer is returned then. Unlike StartQuery it flushes in place, copying
// nothing.
func (e *Engine) Query(ctx context.Context) (*Result, error) {
	q, err := e.startQuery(ctx, false)
	if err != nil {
		return nil, err
	}
	res, err := q.Wait()
	e.finishPending()
	return res, err
}

// Close stops the delta workers and waits for them. Buffered updates that
// were not flushed are dropped. Close waits for all goroutines started by
// New; it is idempotent.
func (e *Engine) Close() error {
	if e.closed {
		return nil
	}
	if e.pending != nil {
		e.pending.Wait()
		e.pending = nil
	}
	e.qwg.Wait()
	e.closed = true
	err := e.gut.Close()
	e.wg.Wait()
	return err
}
