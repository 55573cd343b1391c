package cc

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sketchcc/checkpoint"
	"sketchcc/ingest"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// writeInsertThenDelete writes a stream of n distinct random edges, each
// inside one group of 8 consecutive vertices, inserted, then the first
// half of them deleted: while it inserts, the greedy forest stays valid;
// the deletes invalidate it. The groups keep many components, so that one
// wrong union shows in the labels.
func writeInsertThenDelete(t *testing.T, path string, vertices uint32, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 8))
	seen := map[stream.Edge]bool{}
	var edges []stream.Edge
	for len(edges) < n {
		g := rng.Uint32N(vertices/8) * 8
		e := canonical(g+rng.Uint32N(8), g+rng.Uint32N(8))
		if e.Src == e.Dst || seen[e] {
			continue
		}
		seen[e] = true
		edges = append(edges, e)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := stream.NewWriter(f, stream.Header{Vertices: vertices, Updates: uint64(n + n/2)})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range edges {
		if err := w.Write(stream.Update{Edge: e, Type: stream.Insert}); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range edges[:n/2] {
		if err := w.Write(stream.Update{Edge: e, Type: stream.Delete}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

var errCrash = errors.New("crash after the checkpoint")

// TestCheckpointResume stops a run after its k-th checkpoint (taken every
// 250 updates), resumes a new pipeline and Room from the file, and
// checks that every answer of the resumed run equals the union-find
// oracle at its position and that the final sketches equal those of the
// uninterrupted run bit for bit; checkpoints with and without a valid
// greedy forest are both resumed.
func TestCheckpointResume(t *testing.T) {
	const vertices = 512
	defer func(s uint64) { checkpointStep = s }(checkpointStep)
	checkpointStep = 250
	path := filepath.Join(t.TempDir(), "s.bin")
	writeInsertThenDelete(t, path, vertices, 1_500)
	id, err := checkpoint.Identify(path)
	if err != nil {
		t.Fatal(err)
	}
	h := mustHeader(t, path)
	at := []uint64{300, 1_100, h.Updates}
	truth := map[uint64][]uint32{}
	for _, pos := range at {
		truth[pos], _ = truthLabels(t, path, pos)
	}
	cfg := testConfig{Vertices: vertices, Workers: 2}

	// run runs the schedule from a Room restored at from (none when st is
	// nil), checkpointing into dir and crashing after crashAfter
	// checkpoints (never when 0). It returns the final table's bytes.
	run := func(t *testing.T, dir string, st *checkpoint.Meta, crashAfter int) ([]byte, []bool) {
		t.Helper()
		ic := ingest.Config{Vertices: vertices, Workers: cfg.Workers}
		var from uint64
		var prefix stream.Digest // of the records before from
		if st != nil {
			m, table, err := checkpoint.Read(dir)
			if err != nil {
				t.Fatal(err)
			}
			ic.Sketches, ic.BatchFactor, from, prefix = table, m.BatchFactor, m.Updates, m.Prefix
		}
		pipe, err := ingest.New(ic)
		if err != nil {
			t.Fatal(err)
		}
		defer pipe.Close()
		room := New(pipe, Config{})
		if st != nil {
			if err := room.Restore(State{Updates: st.Updates, GreedyValid: st.GreedyValid, Forest: st.Forest}); err != nil {
				t.Fatal(err)
			}
		}
		f, err := stream.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rd := f.Reader(from, h.Updates)
		var greedy []bool
		taken := 0
		s := Schedule{At: at, Name: path, From: from, CheckpointEvery: time.Nanosecond,
			Answer: func(r *Result) error {
				if !slices.Equal(r.Labels, truth[r.AfterUpdates]) {
					t.Errorf("resumed from %d: labels after %d updates differ from the union-find oracle", from, r.AfterUpdates)
				}
				return nil
			},
			Checkpoint: func(_ context.Context, s State) error {
				m := checkpoint.Meta{Stream: id, Updates: s.Updates, Prefix: prefix.Append(rd.Digest()),
					BatchFactor: pipe.Config().BatchFactor,
					GreedyValid: s.GreedyValid, Forest: s.Forest}
				if _, err := checkpoint.Write(dir, m, pipe.Store().Table()); err != nil {
					return err
				}
				greedy = append(greedy, s.GreedyValid)
				if taken++; taken == crashAfter {
					return errCrash
				}
				return nil
			}}
		_, err = room.Run(context.Background(), rd, s)
		if crashAfter > 0 {
			if !errors.Is(err, errCrash) {
				t.Fatalf("run to checkpoint %d: %v", crashAfter, err)
			}
			return nil, greedy
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := pipe.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if _, err := pipe.Store().Table().WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes(), greedy
	}

	want, greedy := run(t, t.TempDir(), nil, 0)
	if len(greedy) < 4 || !slices.Contains(greedy, true) || !slices.Contains(greedy, false) {
		t.Fatalf("uninterrupted run took checkpoints with greedy forest valid %v; want at least 4, of both kinds", greedy)
	}
	for k := 1; k <= len(greedy); k++ {
		dir := t.TempDir()
		run(t, dir, nil, k)
		m, _, err := checkpoint.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		if m.GreedyValid != greedy[k-1] {
			t.Errorf("checkpoint %d: greedy valid %v, the uninterrupted run had %v", k, m.GreedyValid, greedy[k-1])
		}
		got, _ := run(t, dir, &m, 0)
		if !bytes.Equal(got, want) {
			t.Errorf("resumed after checkpoint %d (update %d, greedy %v): final sketches differ from the uninterrupted run's",
				k, m.Updates, m.GreedyValid)
		}
	}
}

// cancelAfter is a stream.Source that cancels a context once it has
// returned n updates.
type cancelAfter struct {
	stream.Source
	n      uint64
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(dst []stream.Update) (int, error) {
	k, err := c.Source.Read(dst[:min(uint64(len(dst)), max(c.n, 1))])
	if c.n -= min(c.n, uint64(k)); c.n == 0 {
		c.cancel()
	}
	return k, err
}

// TestCheckpointOnStop: a run whose context is cancelled mid-stream (a
// SIGTERM) takes a checkpoint at exactly the updates it read, says so, and
// a Room restored from it answers as the union-find does.
func TestCheckpointOnStop(t *testing.T) {
	const vertices = 512
	path := filepath.Join(t.TempDir(), "s.bin")
	writeInsertThenDelete(t, path, vertices, 1_500)
	h := mustHeader(t, path)
	truth, _ := truthLabels(t, path, h.Updates)
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pipe, err := ingest.New(ingest.Config{Vertices: vertices, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	var saved *State
	var table bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := Schedule{At: []uint64{h.Updates}, Name: path, Answer: func(*Result) error { return nil },
		Checkpoint: func(_ context.Context, st State) error {
			st.Forest = slices.Clone(st.Forest)
			saved = &st
			_, err := pipe.Store().Table().WriteTo(&table)
			return err
		}}
	_, err = New(pipe, Config{}).Run(ctx, &cancelAfter{Source: f.Reader(0, h.Updates), n: 1_234, cancel: cancel}, s)
	if err == nil || !strings.Contains(err.Error(), "interrupted after 1234 of 2250 updates; no answer; checkpoint taken") {
		t.Fatalf("Run: %v", err)
	}
	if saved == nil || saved.Updates != 1_234 {
		t.Fatalf("stop checkpoint: %+v", saved)
	}
	tb, err := sketch.ReadTable(&table)
	if err != nil {
		t.Fatal(err)
	}
	pipe2, err := ingest.New(ingest.Config{Vertices: vertices, Workers: 2, Sketches: tb})
	if err != nil {
		t.Fatal(err)
	}
	defer pipe2.Close()
	room := New(pipe2, Config{})
	if err := room.Restore(*saved); err != nil {
		t.Fatal(err)
	}
	var got []uint32
	s = Schedule{At: []uint64{h.Updates}, Name: path, From: saved.Updates,
		Answer: func(r *Result) error { got = r.Labels; return nil }}
	if _, err := room.Run(context.Background(), f.Reader(saved.Updates, h.Updates), s); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, truth) {
		t.Error("labels after resuming from the stop checkpoint differ from the union-find oracle")
	}
}
