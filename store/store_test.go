package store

import (
	"context"
	"errors"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"sketchcc/sketch"
)

func newStore(t testing.TB) *Store {
	t.Helper()
	p, err := sketch.NewParams(64, 1, 7)
	if err != nil {
		t.Fatal(err)
	}
	return From(sketch.NewTable(p))
}

// snapshot copies every vertex's sketch.
func snapshot(s *Store) [][]sketch.Bucket {
	var out [][]sketch.Bucket
	for v := range s.Params().Vertices() {
		out = append(out, slices.Clone(s.Table().Sketch(v)))
	}
	return out
}

// merge retires ticket t with delta, a sketch computed by
// sketch.Params.Delta for vertex v, through MergeWith.
func merge(s *Store, t Ticket, v uint32, delta []sketch.Bucket) error {
	return s.MergeWith(t, v, func(dst []sketch.Bucket) { sketch.Merge(dst, delta) })
}

func sameSketches(a, b [][]sketch.Bucket) bool {
	return slices.EqualFunc(a, b, func(x, y []sketch.Bucket) bool { return slices.Equal(x, y) })
}

// TestApplyTwiceFails: a batch applied a second time, or merged after it
// was applied, is refused, leaves the sketches alone, and fails Wait.
func TestApplyTwiceFails(t *testing.T) {
	s := newStore(t)
	tk := s.Queue(3)
	if err := s.Apply(tk, 3, []uint32{1, 2, 5}); err != nil {
		t.Fatal(err)
	}
	before := snapshot(s)
	if err := s.Apply(tk, 3, []uint32{1, 2, 5}); !errors.Is(err, ErrTicket) {
		t.Fatalf("second Apply = %v, want ErrTicket", err)
	}
	delta := make([]sketch.Bucket, s.Params().BucketsPerVertex())
	p := s.Params()
	p.Delta(delta, 3, []uint32{1, 2, 5})
	if err := merge(s, tk, 3, delta); !errors.Is(err, ErrTicket) {
		t.Fatalf("Merge after Apply = %v, want ErrTicket", err)
	}
	if !sameSketches(before, snapshot(s)) {
		t.Fatal("a refused batch changed the sketches")
	}
	if err := s.Wait(context.Background()); !errors.Is(err, ErrTicket) {
		t.Fatalf("Wait = %v, want the ErrTicket met before", err)
	}
}

// TestMergeUnknownBatchFails: a delta for a batch never queued, or queued
// for another vertex, is refused and leaves the sketches and the ticket
// alone.
func TestMergeUnknownBatchFails(t *testing.T) {
	s := newStore(t)
	delta := make([]sketch.Bucket, s.Params().BucketsPerVertex())
	p := s.Params()
	p.Delta(delta, 4, []uint32{9})
	before := snapshot(s)
	if err := merge(s, 99, 4, delta); !errors.Is(err, ErrTicket) {
		t.Fatalf("Merge of an unknown batch = %v, want ErrTicket", err)
	}
	if err := merge(s, 0, 4, delta); !errors.Is(err, ErrTicket) {
		t.Fatalf("Merge with the zero ticket = %v, want ErrTicket", err)
	}
	tk := s.Queue(5)
	if err := merge(s, tk, 4, delta); !errors.Is(err, ErrTicket) {
		t.Fatalf("Merge for another vertex's batch = %v, want ErrTicket", err)
	}
	if !sameSketches(before, snapshot(s)) {
		t.Fatal("a refused delta changed the sketches")
	}
	// The refusal left the ticket outstanding for its own vertex.
	p.Delta(delta, 5, []uint32{9})
	if err := merge(s, tk, 5, delta); err != nil {
		t.Fatalf("Merge for the batch's vertex after a refusal = %v, want nil", err)
	}
}

// TestApplyMergeAndNowAgree: the three ways in give the sketch of every
// update, and Wait returns once each queued batch is retired, not before:
// in a synctest bubble, synctest.Wait lets a Wait that would return early
// do so before the test looks.
func TestApplyMergeAndNowAgree(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t)
		want := sketch.NewTable(s.Params())
		batches := []struct {
			v  uint32
			nb []uint32
		}{{1, []uint32{2, 3}}, {1, []uint32{4}}, {2, []uint32{1, 7}}, {9, []uint32{8}}}
		for _, b := range batches {
			want.ApplyBatch(b.v, b.nb)
		}
		t1, t2 := s.Queue(1), s.Queue(1)
		s.ApplyNow(2, batches[2].nb)
		t4 := s.Queue(9)
		waited := make(chan error, 1)
		go func() { waited <- s.Wait(context.Background()) }()
		if err := s.Apply(t1, 1, batches[0].nb); err != nil {
			t.Fatal(err)
		}
		delta := make([]sketch.Bucket, s.Params().BucketsPerVertex())
		p := s.Params()
		p.Delta(delta, 1, batches[1].nb)
		if err := merge(s, t2, 1, delta); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		select {
		case err := <-waited:
			t.Fatalf("Wait returned %v with batch %d outstanding", err, t4)
		default:
		}
		if err := s.Apply(t4, 9, batches[3].nb); err != nil {
			t.Fatal(err)
		}
		if err := <-waited; err != nil {
			t.Fatal(err)
		}
		for v := range s.Params().Vertices() {
			if !slices.Equal(s.Table().Sketch(v), want.Sketch(v)) {
				t.Fatalf("vertex %d: sketch differs from the batches applied directly", v)
			}
		}
	})
}

// TestWaitNamesMissingBatches: Wait gives up with ctx and says how many
// batches are out.
// It runs in a synctest bubble, so the deadline passes at once.
func TestWaitNamesMissingBatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := newStore(t)
		s.Queue(1)
		s.Queue(2)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := s.Wait(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "store: 2 of 2 batches not applied: context deadline exceeded" {
			t.Fatalf("Wait = %v", err)
		}
	})
}

// TestWaitConcurrentWaiters: Wait is safe for concurrent use, so each of
// several goroutines waiting on the same batch returns once it is
// applied. It runs in a synctest bubble, where a waiter that missed its
// wake-up runs into its minute's deadline on the bubble's clock at once.
// Even rounds apply the batch once every waiter is blocked in Wait
// (synctest.Wait), odd ones while they are still arriving.
func TestWaitConcurrentWaiters(t *testing.T) {
	const waiters = 4
	for round := range 20 {
		synctest.Test(t, func(t *testing.T) {
			s := newStore(t)
			tk := s.Queue(3)
			errs := make(chan error, waiters)
			for range waiters {
				go func() {
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					defer cancel()
					errs <- s.Wait(ctx)
				}()
			}
			if round%2 == 0 {
				synctest.Wait()
			}
			if err := s.Apply(tk, 3, []uint32{1}); err != nil {
				t.Fatal(err)
			}
			for i := range waiters {
				if err := <-errs; err != nil {
					t.Fatalf("round %d: waiter %d of %d: %v", round, i+1, waiters, err)
				}
			}
		})
	}
}

// TestToggle: Toggle twice leaves a sketch as it was, and once is the
// batch's delta.
func TestToggle(t *testing.T) {
	p, err := sketch.NewParams(16, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	if p, err = p.WithSets(3); err != nil {
		t.Fatal(err)
	}
	s := From(sketch.NewTable(p))
	s.ApplyNow(2, []uint32{5, 7})
	want := make([]sketch.Bucket, p.BucketsPerVertex())
	p.Delta(want, 2, []uint32{5, 7})
	if !slices.Equal(s.Table().Sketch(2), want) {
		t.Fatal("ApplyNow did not write the batch's delta")
	}
	s.Toggle(2, []uint32{7})
	p.Delta(want, 2, []uint32{5})
	if !slices.Equal(s.Table().Sketch(2), want) {
		t.Fatal("Toggle did not delete the edge")
	}
	s.Toggle(2, []uint32{7})
	p.Delta(want, 2, []uint32{5, 7})
	if !slices.Equal(s.Table().Sketch(2), want) {
		t.Fatal("Toggle twice did not restore the sketch")
	}
}
