package ingest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"sketchcc/internal/testgraph"
	"sketchcc/internal/testwait"
	"sketchcc/stream"
)

// TestIngestCancelQueueFull: cancelling Ingest while the batch queue is
// full and nobody takes from it (stalled remote consumers) returns
// promptly with the context's cause, and loses nothing: with one reader
// the sketches then hold exactly the updates Ingest counted.
func TestIngestCancelQueueFull(t *testing.T) {
	const vertices, updates, queue = 128, 500_000, 4
	path := filepath.Join(t.TempDir(), "stream.bin")
	testgraph.WriteRandomStream(t, path, vertices, updates, 1, false)
	open := func(t *testing.T) *stream.Cursor {
		f, err := stream.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f.Cursor()
	}
	for _, readers := range []int{1, 2} {
		t.Run(fmt.Sprintf("readers=%d", readers), func(t *testing.T) {
			e, err := New(Config{Vertices: vertices, Remote: true, QueueBatches: queue, Readers: readers})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx, cancel := context.WithCancelCause(context.Background())
			type result struct {
				n   uint64
				err error
			}
			res := make(chan result, 1)
			go func() {
				n, err := e.IngestN(ctx, open(t), math.MaxUint64)
				res <- result{n, err}
			}()
			testwait.Until(t, 10*time.Second, time.Millisecond, func() error {
				if d := len(e.Gutters().Batches()); d < queue {
					return fmt.Errorf("%d batches queued, want the queue full (%d)", d, queue)
				}
				return nil
			})
			cause := errors.New("test: stopped")
			cancel(cause)
			var r result
			select {
			case r = <-res:
			case <-time.After(10 * time.Second):
				t.Fatal("Ingest still running 10 s after its context was cancelled, with the batch queue full")
			}
			if !errors.Is(r.err, cause) || r.n == 0 || r.n >= updates {
				t.Fatalf("Ingest returned %d updates, %v; want fewer than %d and the cause %q", r.n, r.err, updates, cause)
			}
			if e.Gutters().Stats().InterruptedBatches == 0 {
				t.Error("no gutter was sketched in place: the insert did not wait for a spare when cancelled")
			}
			if readers > 1 {
				return // parallel readers stop at their own blocks: not a prefix
			}
			// The consumer comes back: the queued batches and the flush
			// reach the sketches, which must equal those of the first
			// r.n updates ingested afresh.
			go func() {
				var wide []uint32
				for b := range e.Gutters().Batches() {
					_ = e.Store().Apply(b.Ticket, b.Vertex, b.IDs(&wide))
					e.Gutters().Release(b)
				}
			}()
			if err := e.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			ref, err := New(Config{Vertices: vertices, Workers: 1, Readers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer ref.Close()
			if _, err := ref.IngestN(context.Background(), open(t), r.n); err != nil {
				t.Fatal(err)
			}
			if err := ref.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			for v := range uint32(vertices) {
				if !slices.Equal(e.Store().Table().Sketch(v), ref.Store().Table().Sketch(v)) {
					t.Fatalf("vertex %d: the sketch differs from that of the first %d updates", v, r.n)
				}
			}
		})
	}
}
