package distributor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"runtime"
	"sketchcc/internal/testwait"
	"strings"
	"sync"
	"testing"
	"time"

	"sketchcc/gutters"
	"sketchcc/internal/testgraph"
	"sketchcc/sketch"
	"sketchcc/store"
	"sketchcc/stream"
)

func requireNoError(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkNoLeaks fails the test if, after it, goroutines remain beyond those
// running when checkNoLeaks was called (nats' ats_test.go style).
func checkNoLeaks(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		testwait.Until(t, 5*time.Second, 10*time.Millisecond, func() error {
			if n := runtime.NumGoroutine(); n > before {
				buf := make([]byte, 1<<20)
				buf = buf[:runtime.Stack(buf, true)]
				return fmt.Errorf("%d goroutines, %d before the test:\n%s", n, before, buf)
			}
			return nil
		})
	})
}

// testLogger logs to the test, at debug level, until the test's cleanup
// begins; later lines are dropped. memberlist's goroutines can outlive
// Shutdown by a probe, and testing panics on a Log after the test.
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool // the test is cleaning up: drop lines
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(b), "\n"))
	}
	return len(b), nil
}

// testPipe is the main node's side of a Pool in tests: gutters whose
// batches carry tickets of a sketch store, which a test can compare with
// a table built directly: every batch applied exactly once gives the same
// buckets.
type testPipe struct {
	p   sketch.Params
	gut *gutters.Gutters
	st  *store.Store
}

func newTestPipe(t testing.TB, vertices uint32, batchUpdates int) *testPipe {
	p, err := sketch.NewParams(vertices, 1, 42)
	requireNoError(t, err)
	return newTestPipeOn(t, store.From(sketch.NewTable(p)), batchUpdates)
}

// newDiskTestPipe is newTestPipe over a store whose sketches live on disk
// (store.OpenDisk): 6 vertex ranges, one resident, and a spill budget of
// an eighth of the table, so that remote deltas are both merged in place
// and spilled, and ranges are swapped many times during a stream.
func newDiskTestPipe(t testing.TB, vertices uint32, batchUpdates int) *testPipe {
	p, err := sketch.NewParams(vertices, 1, 42)
	requireNoError(t, err)
	st, err := store.OpenDisk(p, store.DiskConfig{Dir: t.TempDir(), ResidentBytes: int64(p.BytesPerVertex()) * int64(vertices/6),
		SpillBytes: p.TableBytes() / 8, BufferBytes: 4096, Workers: 2})
	requireNoError(t, err)
	t.Cleanup(func() { requireNoError(t, st.Close()) })
	if lay, _ := st.OutOfCore(); lay.Layout.Ranges < 6 {
		t.Fatalf("disk layout %+v: want at least 6 ranges", lay.Layout)
	}
	return newTestPipeOn(t, st, batchUpdates)
}

func newTestPipeOn(t testing.TB, st *store.Store, batchUpdates int) *testPipe {
	g, err := gutters.New(gutters.Config{Vertices: st.Params().Vertices(), BatchUpdates: batchUpdates, QueueBatches: 8, Queue: st.Queue})
	requireNoError(t, err)
	return &testPipe{p: st.Params(), gut: g, st: st}
}

// insert feeds updates to the gutters from the caller's goroutine.
func (e *testPipe) insert(us []stream.Update) { e.gut.InsertBatch(us) }

// close closes the gutters (the batch queue).
func (e *testPipe) close() { e.gut.Close() }

// batches returns the batches the gutters have emitted, each queued with a
// ticket of the store: after flush, each has been applied or merged.
func (e *testPipe) batches() uint64 { return e.gut.Stats().Batches }

// flush emits every buffered update and waits until the store has applied
// every batch; when ctx is done first, the error names whom the Pool waits
// for (Pool.Late), as the main node's flush deadline does.
func (e *testPipe) flush(ctx context.Context, p *Pool) error {
	e.gut.Flush()
	err := e.st.Wait(ctx)
	if err == nil {
		return nil
	}
	if late := p.Late(); len(late) > 0 {
		return fmt.Errorf("workers did not answer in time: %s: %w", strings.Join(late, "; "), err)
	}
	return err
}

// checkTable compares every vertex's sketch with the sketch of all
// updates applied directly.
func (e *testPipe) checkTable(t testing.TB, us []stream.Update) {
	t.Helper()
	want := sketch.NewTable(e.p)
	for _, u := range us {
		want.ApplyBatch(u.Src, []uint32{u.Dst})
		want.ApplyBatch(u.Dst, []uint32{u.Src})
	}
	if e.st.Table() == nil { // out of core: compare what a query reads
		stores := [2]*store.Store{store.From(want), e.st}
		testgraph.SameSketches(t, "directly computed against the store (a batch lost or applied twice)", e.p,
			func(side, c int) (*sketch.Columns, error) { return stores[side].Columns(c) })
		return
	}
	bad := 0
	for v := range e.p.Vertices() {
		got, w := e.st.Table().Sketch(v), want.Sketch(v)
		for i := range w {
			if got[i] != w[i] {
				bad++
				if bad <= 3 {
					t.Errorf("vertex %d bucket %d: %x, want %x (a batch lost or applied twice)", v, i, got[i], w[i])
				}
				break
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d vertices' sketches differ from the directly computed ones", bad, e.p.Vertices())
	}
}

// randomUpdates returns n random updates on vertices vertices.
func randomUpdates(seed uint64, vertices uint32, n int) []stream.Update {
	r := rand.New(rand.NewPCG(seed, 1))
	us := make([]stream.Update, n)
	for i := range us {
		a := r.Uint32N(vertices)
		b := r.Uint32N(vertices - 1)
		if b >= a {
			b++
		}
		us[i] = stream.Update{Type: stream.Insert, Edge: stream.Edge{Src: a, Dst: b}}
	}
	return us
}

// startWorker serves a Worker on 127.0.0.1:0 and returns its address; the
// test's cleanup closes it.
func startWorker(t testing.TB, cfg WorkerConfig) (string, *Worker) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t).With("side", "worker")
	}
	w, err := NewWorker(cfg)
	requireNoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	requireNoError(t, err)
	done := make(chan error, 1)
	go func() { done <- w.Serve(context.Background(), ln) }()
	t.Cleanup(func() {
		w.Close()
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Serve: %v", err)
		}
	})
	return ln.Addr().String(), w
}

// runStream inserts us into e in chunks while the pool works, flushes and
// checks that every batch was applied exactly once.
func runStream(t testing.TB, e *testPipe, p *Pool, us []stream.Update, during func(i int)) {
	t.Helper()
	const chunk = 512
	for i := 0; i < len(us); i += chunk {
		e.insert(us[i:min(i+chunk, len(us))])
		if during != nil {
			during(i / chunk)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	requireNoError(t, e.flush(ctx, p))
	e.checkTable(t, us)
}

// checkCounters checks that the counters add up after a run: every batch
// handed to a connection was merged, re-sent or late, each worker's
// entry is the sum of its connections, and the totals the sums of the
// entries.
func checkCounters(t testing.TB, st Stats) {
	t.Helper()
	var merged, resent, late, dups, sent, received uint64
	for _, w := range st.Workers {
		var sum ConnStats
		var up uint64
		for _, c := range w.Conns {
			if c.Batches != c.DeltasMerged+c.BatchesResent+c.BatchesLate {
				t.Errorf("%s connection %+v: %d batches, %d merged + %d re-sent + %d late",
					w.Name, c, c.Batches, c.DeltasMerged, c.BatchesResent, c.BatchesLate)
			}
			sum.Batches += c.Batches
			sum.DeltasMerged += c.DeltasMerged
			sum.BatchesResent += c.BatchesResent
			sum.BatchesLate += c.BatchesLate
			sum.DuplicateDeltas += c.DuplicateDeltas
			sum.BytesSent += c.BytesSent
			sum.BytesReceived += c.BytesReceived
			if !c.Refused {
				up++
			}
		}
		if w.Batches != sum.Batches || w.DeltasMerged != sum.DeltasMerged || w.BatchesResent != sum.BatchesResent ||
			w.BatchesLate != sum.BatchesLate || w.DuplicateDeltas != sum.DuplicateDeltas ||
			w.BytesSent != sum.BytesSent || w.BytesReceived != sum.BytesReceived || w.Connections != up {
			t.Errorf("worker %s: entry %+v is not the sum of its connections %+v", w.Name, w, sum)
		}
		merged += w.DeltasMerged
		resent += w.BatchesResent
		late += w.BatchesLate
		dups += w.DuplicateDeltas
		sent += w.BytesSent
		received += w.BytesReceived
	}
	if st.RemoteBatches != merged || st.BatchesResent != resent || st.BatchesLate != late ||
		st.DuplicateDeltas != dups || st.BytesSent != sent || st.BytesReceived != received {
		t.Errorf("totals %+v are not the sums of the workers' entries", st)
	}
}
