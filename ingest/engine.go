// Package ingest is the in-process ingestion pipeline of the main node:
//
//	stream.Source ──Read──▶ IngestN (caller's goroutine) ──InsertBatch──▶ gutters
//	  gutters ──Batch──▶ local delta workers (Workers goroutines) ──Apply──▶ store
//	Flush: every non-empty gutter emitted (or sketched in place) ▶ store.Wait
//
// With Config.Readers > 1 and a *stream.Cursor over a regular file,
// IngestN reads in parallel instead:
//
//	Readers goroutines ──claim blocks of records, Read──▶ pairs sorted by gutters.Part
//	  ──chunks──▶ one inserter goroutine per Part ──Part.Insert──▶ gutters
//
// and returns when every pair is in the gutters, so a query after it sees
// exactly the updates before its count.
//
// Every goroutine carries pprof labels: "stage" (read, insert, apply) and
// "goroutine" (read-0, insert-1, ...), so that a CPU profile splits the
// main node's CPU by stage and finds the busiest goroutine.
// The sketches and the exactly-once rule live in package store: every
// batch the gutters queue carries a store ticket, and whoever takes it
// from Batches (a local delta worker here, or a distributor.Pool) retires
// it once. Connected-components queries are package cc's.
package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"sync/atomic"

	"sketchcc/gutters"
	"sketchcc/sketch"
	"sketchcc/store"
	"sketchcc/stream"
)

// DefaultSeed seeds the sketch hashes when Config.Seed is zero.
const DefaultSeed = 0x5ce7c4c0ffee2026

// MaxBatchFactor bounds Config.BatchFactor (DefaultBatchFactor gives its
// default), and MaxWorkers Config.Workers.
const (
	MaxBatchFactor = 64
	MaxWorkers     = 4096
	MaxReaders     = gutters.MaxParts
	// MaxVertices bounds Config.Vertices: the gutters number their
	// buffers, one per vertex and the spares of a full queue, with 31 bits.
	MaxVertices = 1<<31 - 1 - gutters.MaxQueueBatches
)

// DefaultBatchFactor returns the batch factor for a graph of vertices
// vertices: 1 up to 2^16 vertices, where the gutters hold 16-bit ids and
// take half the sketch bytes, and 0.4 above, where they hold 32-bit ids:
// at 1 they would take as much memory as the sketches (peak RSS 2.07× the
// sketch bytes on kron17), at 0.4 they take 0.4× (1.46×) for a rate within
// the run-to-run spread (results/big-2026-12-06.md).
func DefaultBatchFactor(vertices uint32) float64 {
	if vertices > gutters.NarrowMaxVertices {
		return 0.4
	}
	return 1
}

// DefaultReaders returns the reader count for a machine of cores cores
// and a graph of vertices vertices: one reader per four cores, at least
// one, and at least two on two cores or more above 2^16 vertices. A reader
// and its inserter cost about a quarter of the CPU per update of the whole
// single-machine pipeline (results/parallel-ingest-2026-12-01.md), so this
// keeps them ahead of the delta workers without taking their cores; up to
// 2^16 vertices one reader runs the sequential path, the fastest on two
// cores. Above, where the gutters (32-bit ids) no longer stay in cache, the
// single reader leaves a core idle: on a 500 M-update prefix of kron17
// (Intel Xeon family 6 model 207, 2 cores) two readers ran 18.6 M
// updates/s with 1.98 cores busy against one reader's 12.2 M/s and 1.59
// (results/big-2026-12-06.md).
func DefaultReaders(cores int, vertices uint32) int {
	if vertices > gutters.NarrowMaxVertices && cores >= 2 {
		return max(2, cores/4)
	}
	return max(1, cores/4)
}

// readChunk is the number of updates read from the source per call: 108 KiB
// of records, large enough to amortise the call, small enough for L2.
const readChunk = 12 << 10

// Config configures an Engine. A zero field takes its default.
type Config struct {
	// Vertices is the number of vertices, from the stream header.
	Vertices uint32
	// SketchFactor scales the sketch columns (DESIGN.md §2). Zero means
	// sketch.DefaultFactor; sketch.NewParams checks it.
	SketchFactor float64
	// BatchFactor sizes a gutter as BatchFactor · sketch bytes per vertex / 4
	// neighbour ids (DESIGN.md §3), in (0, MaxBatchFactor]. Zero means
	// DefaultBatchFactor(Vertices).
	BatchFactor float64
	// Seed seeds the sketch hashes. Zero means DefaultSeed.
	Seed uint64
	// Workers is the number of local delta workers, at most MaxWorkers.
	// Zero means runtime.GOMAXPROCS(0) without Remote.
	Workers int
	// Readers is the number of goroutines that read the stream, and of
	// inserters, in [0, MaxReaders]. Zero means
	// DefaultReaders(runtime.GOMAXPROCS(0), Vertices). One reads on the caller's
	// goroutine; more read a *stream.Cursor over a regular file in
	// parallel (any other Source is still read by the caller).
	Readers int
	// Remote hands every batch to a remote consumer (a distributor.Pool)
	// that takes from Gutters().Batches(): no local delta worker runs
	// (Workers must be 0), and a flush queues every gutter and waits
	// rather than sketching gutters itself when the queue is full.
	Remote bool
	// QueueBatches is the number of full batches buffered or in flight
	// before the reader blocks; gutters.Config checks it. Zero means
	// 32 · max(Workers, 2): a deep queue keeps both the reader and the
	// delta workers from parking (measured in results/perf-notes.md).
	QueueBatches int
	// HugePages asks the kernel for transparent huge pages for the sketch
	// table and the gutters. With most vertices updated (a stream of at
	// least as many updates as vertices) it speeds ingestion by 12–25%
	// (fewer TLB misses on random appends and sketch updates); with few,
	// every touched 2 MiB becomes resident instead of every touched sketch,
	// which can multiply peak memory. Engine.HugePages reports whether the
	// kernel accepted.
	HugePages bool
	// Sets is the number of independent sketch sets (sketch.Params.WithSets:
	// Sets times the columns in one sketch per vertex), K for a k-forest
	// query; sketch.Params.WithSets bounds it. Zero means 1. Gutters keep
	// the size of one set's sketch.
	Sets int
	// Sketches, when set, is the table the engine starts from (a resumed
	// checkpoint) and then owns; its parameters must be the ones
	// Vertices, SketchFactor and Seed give. Nil means zero sketches.
	Sketches *sketch.Table
	// Disk, when set, keeps the sketches on disk (store.OpenDisk), for a
	// table larger than memory; PlanBudget sets it. Nil means in memory.
	// Not with Sketches: a resumed run fills it by Restore.
	Disk *store.DiskConfig
	// Restore, when set, fills the new store from a checkpoint that was
	// not read into memory (checkpoint.Resume.Load, which calls nothing
	// when its table is Sketches): New calls it once with the store's
	// Load (store.Store.Load, on disk or in memory) before anything is
	// applied, and fails with its error.
	Restore func(fill func(body io.Reader) error) error
	// ReserveBytes is memory outside the engine that PlanBudget leaves
	// out of a limit on top of its runtime reserve, in bytes: a remote
	// distributor pool's (distributor.PoolReserveBytes). Zero means none.
	ReserveBytes int64
}

func (c *Config) ensureDefaults() {
	if c.SketchFactor == 0 {
		c.SketchFactor = sketch.DefaultFactor
	}
	if c.BatchFactor == 0 {
		c.BatchFactor = DefaultBatchFactor(c.Vertices)
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	if c.Workers == 0 && !c.Remote {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.QueueBatches == 0 {
		c.QueueBatches = 32 * max(c.Workers, 2)
	}
	if c.Readers == 0 {
		c.Readers = DefaultReaders(runtime.GOMAXPROCS(0), c.Vertices)
	}
	if c.Sets == 0 {
		c.Sets = 1
	}
}

// FieldError reports a Config field whose value is out of range.
// Validate and ValidateExplicit return one per problem, joined by
// errors.Join, so that a command can name the field in its own terms (a
// flag).
type FieldError struct {
	// Field is the field's Go name, for example "Workers".
	Field string
	// Value is the value found.
	Value any
	// Want states the values allowed, for example "[1, 4096]".
	Want string
}

// Problem returns the field, the value found and the values allowed, so
// that a command can spell the field as its own setting.
func (e *FieldError) Problem() (field string, value any, want string) {
	return e.Field, e.Value, e.Want
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("ingest: %s = %v, want %s", e.Field, e.Value, e.Want)
}

// Validate reports every problem with the fields that ingest owns at
// once, each a *FieldError; a zero field stands for its default. The
// vertex count and the sketch factor are sketch.NewParams', the queue
// length's upper bound gutters.Config's, and New returns their errors too.
func (c Config) Validate() error { return c.check(false) }

// ValidateExplicit is Validate for a Config whose fields were set
// explicitly, where a zero is a value rather than "unset" (a command's
// flags): a zero SketchFactor, or Workers without Remote, is then out of
// range. Seed, Readers, BatchFactor, QueueBatches and Sets keep zero as
// their default.
func (c Config) ValidateExplicit() error { return c.check(true) }

func (c Config) check(explicit bool) error {
	var errs []error
	bad := func(field string, v any, want string) { errs = append(errs, &FieldError{field, v, want}) }
	least := 0
	if explicit && !c.Remote {
		least = 1
	}
	if c.Workers < least || c.Workers > MaxWorkers {
		bad("Workers", c.Workers, fmt.Sprintf("[%d, %d]", least, MaxWorkers))
	} else if c.Remote && c.Workers > 0 {
		bad("Workers", c.Workers, "0 with Remote, which runs no local worker")
	}
	if r := c.Readers; r < 0 || r > MaxReaders {
		bad("Readers", r, fmt.Sprintf("[0, %d]", MaxReaders))
	}
	if explicit && !(c.SketchFactor > 0) {
		bad("SketchFactor", c.SketchFactor, "> 0")
	}
	if f := c.BatchFactor; !(f >= 0 && f <= MaxBatchFactor) {
		bad("BatchFactor", f, fmt.Sprintf("[0, %d], 0 for the default", MaxBatchFactor))
	}
	if c.QueueBatches < 0 {
		bad("QueueBatches", c.QueueBatches, ">= 0")
	}
	if c.ReserveBytes < 0 {
		bad("ReserveBytes", c.ReserveBytes, ">= 0")
	}
	if c.Sets < 0 {
		bad("Sets", c.Sets, ">= 1")
	}
	if c.Vertices > MaxVertices {
		bad("Vertices", c.Vertices, fmt.Sprintf("at most %d (2^31 − 2^20 − 1)", MaxVertices))
	}
	return errors.Join(errs...)
}

// Engine owns the gutters, the sketch store and the local delta workers.
//
// IngestN, Flush, Settle and Close must be called from one goroutine at a
// time. Updates is safe for concurrent use.
type Engine struct {
	cfg       Config
	st        *store.Store
	gut       *gutters.Gutters
	wg        sync.WaitGroup // delta workers
	updates   atomic.Uint64  // updates inserted into the gutters
	buf       []stream.Update
	fan       *fanout // Readers > 1: the parallel pipeline
	hugePages bool    // the kernel accepted Config.HugePages for both slabs
	closed    bool
}

// New builds an Engine for cfg and starts its delta workers. It returns the
// errors of cfg.Validate, sketch.NewParams and gutters.Config.Validate.
func New(cfg Config) (*Engine, error) {
	cfg.ensureDefaults()
	p, gc, err := cfg.plan()
	if err != nil {
		return nil, err
	}
	var st *store.Store
	if cfg.Disk != nil {
		if cfg.Sketches != nil {
			return nil, errors.New("ingest: sketches on disk start from a checkpoint by Config.Restore, not from a table in memory")
		}
		if st, err = store.OpenDisk(p, *cfg.Disk); err != nil {
			return nil, err
		}
	} else if t := cfg.Sketches; t != nil {
		if q := t.Params(); q.Vertices() != p.Vertices() || q.Factor() != p.Factor() || q.Seed() != p.Seed() || q.Sets() != p.Sets() {
			return nil, fmt.Errorf("ingest: sketches of %d vertices, factor %v, seed %d, %d set(s); config gives %d, %v, %d, %d",
				q.Vertices(), q.Factor(), q.Seed(), q.Sets(), p.Vertices(), p.Factor(), p.Seed(), p.Sets())
		}
		st = store.From(t)
	} else {
		st = store.From(sketch.NewTable(p))
	}
	if cfg.Restore != nil {
		if err := cfg.Restore(st.Load); err != nil {
			return nil, errors.Join(err, st.Close())
		}
	}
	gc.Queue = st.Queue
	g, err := gutters.New(gc)
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	e := &Engine{cfg: cfg, st: st, gut: g}
	if cfg.Readers > 1 {
		if e.fan, err = newFanout(g, cfg.Readers); err != nil {
			return nil, errors.Join(err, st.Close())
		}
	}
	if cfg.HugePages {
		t, gu := st.AdviseHugePages(), g.AdviseHugePages()
		e.hugePages = t && gu
	}
	for i := range cfg.Workers {
		e.wg.Go(func() {
			pprof.Do(context.Background(), pprof.Labels("stage", "apply", "goroutine", "apply-"+strconv.Itoa(i)),
				func(context.Context) { e.deltaWorker() })
		})
	}
	return e, nil
}

// HugePages reports whether the sketch table and the gutters were advised
// to use transparent huge pages (Config.HugePages) and the kernel accepted.
func (e *Engine) HugePages() bool { return e.hugePages }

// plan returns the sketch parameters and the gutters' configuration of c,
// whose defaults are filled in, or every error of c.
func (c Config) plan() (sketch.Params, gutters.Config, error) {
	if err := c.Validate(); err != nil {
		return sketch.Params{}, gutters.Config{}, err
	}
	one, err := sketch.NewParams(c.Vertices, c.SketchFactor, c.Seed)
	if err != nil {
		return sketch.Params{}, gutters.Config{}, err
	}
	p, err := one.WithSets(c.Sets)
	if err != nil {
		return sketch.Params{}, gutters.Config{}, err
	}
	// A gutter holds BatchFactor · sketch bytes per vertex / 4 neighbour
	// ids (DESIGN.md §3), of one set's sketch.
	gc := gutters.Config{Vertices: c.Vertices, QueueBatches: c.QueueBatches,
		BatchUpdates: max(1, int(c.BatchFactor*float64(one.BytesPerVertex())/4))}
	if err := gc.Validate(); err != nil {
		return sketch.Params{}, gutters.Config{}, err
	}
	return p, gc, nil
}

// Memory returns the bytes an Engine for cfg allocates for its sketches and
// for its gutters, without allocating them, so a caller can refuse a
// stream whose header asks for more memory than the machine has. It
// returns the errors New would.
func Memory(cfg Config) (sketchBytes, gutterBytes int64, err error) {
	cfg.ensureDefaults()
	p, gc, err := cfg.plan()
	if err != nil {
		return 0, 0, err
	}
	return p.TableBytes(), gc.Bytes(), nil
}

// deltaWorker applies batches until the queue is closed. It runs in its own
// goroutine. A ticket the store refuses is a bug in this package; the
// store keeps the error and the next Flush returns it.
func (e *Engine) deltaWorker() {
	var wide []uint32 // a 16-bit batch's ids widened
	for b := range e.gut.Batches() {
		_ = e.st.Apply(b.Ticket, b.Vertex, b.IDs(&wide))
		e.gut.Release(b)
	}
}

// Gutters returns the gutters, so that a remote consumer (a
// distributor.Pool, with Config.Remote) can take batches from
// Gutters().Batches(): it must Release each one and retire its ticket
// exactly once through Store().
func (e *Engine) Gutters() *gutters.Gutters { return e.gut }

// Store returns the sketch store.
func (e *Engine) Store() *store.Store { return e.st }

// Params returns the sketch parameters.
func (e *Engine) Params() sketch.Params { return e.st.Params() }

// Config returns the configuration with defaults filled in.
func (e *Engine) Config() Config { return e.cfg }

// SketchBytes returns the memory of all sketches in bytes.
func (e *Engine) SketchBytes() int64 { return e.st.Params().TableBytes() }

// BatchUpdates returns the gutter capacity in neighbour ids.
func (e *Engine) BatchUpdates() int { return e.gut.Config().BatchUpdates }

// Updates returns the number of updates ingested so far.
func (e *Engine) Updates() uint64 { return e.updates.Load() }

// IngestN reads up to n updates of src (math.MaxUint64: to its end) and
// inserts them into the gutters; the delta workers sketch full batches
// meanwhile. src's header must match Config.Vertices. It returns the
// number of updates read, so that a query can follow exactly there;
// ingestion resumes with another call on the same src. It stops early
// with ctx's cause when ctx is done or with src's *stream.FormatError on
// bad input; updates read before an error stay applied. It returns on
// ctx's end even while the batch queue is full and nobody takes from it:
// the gutters that fill meanwhile are sketched on the inserting
// goroutines. With Config.Readers > 1 and a *stream.Cursor over a regular
// file it reads with that many goroutines, and the error of a bad record
// is the first one's in stream order, with the count of updates before it.
func (e *Engine) IngestN(ctx context.Context, src stream.Source, n uint64) (uint64, error) {
	if e.closed {
		return 0, gutters.ErrClosed
	}
	if h := src.Header(); h.Vertices != e.cfg.Vertices {
		return 0, fmt.Errorf("ingest: stream has %d vertices, engine %d", h.Vertices, e.cfg.Vertices)
	}
	// Once ctx is done, an insert waiting for a spare buffer (the queue
	// full, its consumers stalled) sketches the gutter in place instead,
	// so that the insert returns and every update counted is kept.
	e.gut.InterruptOn(ctx.Done(), e.st.ApplyNow)
	defer e.gut.InterruptOn(nil, nil)
	if cur, ok := src.(*stream.Cursor); ok && e.fan != nil && cur.Seekable() {
		return e.ingestParallel(ctx, cur, n)
	}
	if e.buf == nil {
		e.buf = make([]stream.Update, readChunk)
	}
	// The caller's goroutine reads and inserts: label each stage.
	defer pprof.SetGoroutineLabels(ctx)
	readCtx := pprof.WithLabels(ctx, pprof.Labels("stage", "read", "goroutine", "ingest"))
	insertCtx := pprof.WithLabels(ctx, pprof.Labels("stage", "insert", "goroutine", "ingest"))
	var done uint64
	for done < n {
		if err := context.Cause(ctx); err != nil {
			return done, err
		}
		buf := e.buf[:min(uint64(len(e.buf)), n-done)]
		pprof.SetGoroutineLabels(readCtx)
		k, err := src.Read(buf)
		if k > 0 {
			pprof.SetGoroutineLabels(insertCtx)
			e.gut.InsertBatch(buf[:k])
			done += uint64(k)
			e.updates.Add(uint64(k))
		}
		if err == io.EOF {
			return done, nil
		}
		if err != nil {
			if cause := context.Cause(ctx); cause != nil {
				return done, cause // the caller cut the read short (closed src)
			}
			return done, err
		}
	}
	return done, nil
}

// Flush emits every buffered update as a batch and waits until every batch
// emitted so far has been applied to the sketches. It returns an error
// wrapping ctx's cause, with the number of batches still out, when ctx is
// done first; without remote workers, the gutters it has not reached by
// then keep their updates, for a later Flush.
func (e *Engine) Flush(ctx context.Context) error {
	if e.cfg.Remote {
		e.gut.Flush()
	} else if !e.gut.FlushLocal(e.st.ApplyNow, func() bool { return ctx.Err() != nil }) {
		// Interrupted: the gutters not reached keep their updates.
		return fmt.Errorf("ingest: flush: %w", context.Cause(ctx))
	}
	if err := e.st.Wait(ctx); err != nil {
		return fmt.Errorf("ingest: flush: %w", err)
	}
	return nil
}

// Settle waits, without emitting a partly filled gutter, until every
// batch emitted so far has been applied, and returns the view of the ids
// still buffered (gutters.Settled): the sketches plus the view then hold
// every update ingested. The view is valid until the next IngestN, Flush,
// Settle or Close. It returns an error wrapping ctx's cause, with the
// number of batches still out, when ctx is done first.
func (e *Engine) Settle(ctx context.Context) (gutters.Settled, error) {
	view := e.gut.Settle()
	if err := e.st.Wait(ctx); err != nil {
		return gutters.Settled{}, fmt.Errorf("ingest: settle: %w", err)
	}
	return view, nil
}

// Close stops the delta workers and waits for them, then removes the
// files of sketches kept on disk. Buffered updates that were not flushed
// are dropped. Close waits for all goroutines started by New; it is
// idempotent.
func (e *Engine) Close() error {
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.gut.Close()
	e.wg.Wait()
	return errors.Join(err, e.st.Close())
}
