package cc

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"sketchcc/dsu"
	"sketchcc/gutters"
	"sketchcc/ingest"
	"sketchcc/internal/testgraph"
	"sketchcc/stream"
)

// movingPipe is an ingest.Engine that, when moveOn is set, reads one more
// update of extra right after each Settle, as a pipeline that moves on
// behind the query's back would.
type movingPipe struct {
	*ingest.Engine
	moveOn bool
	extra  stream.Source
}

func (m *movingPipe) Settle(ctx context.Context) (gutters.Settled, error) {
	view, err := m.Engine.Settle(ctx)
	if err == nil && m.moveOn {
		_, err = m.Engine.IngestN(ctx, m.extra, 1)
	}
	return view, err
}

// updates returns a binary stream of us over vertices.
func updates(t *testing.T, vertices uint32, us ...stream.Update) stream.Source {
	t.Helper()
	r, err := stream.NewReader(bytes.NewReader(testgraph.Encode(t, vertices, us)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestQueryStaleView: a query that reuses the last answer reads the
// buffered ids through the pipeline's Settle view; when the pipeline
// moves on meanwhile, the query returns an error wrapping
// gutters.ErrStale instead of an answer built on ids that are gone, and
// when it does not, the answer is the union-find's.
func TestQueryStaleView(t *testing.T) {
	const n = 8
	path := []stream.Update{{Edge: stream.Edge{Src: 0, Dst: 1}}, {Edge: stream.Edge{Src: 1, Dst: 2}}}
	cut := stream.Update{Type: stream.Delete, Edge: stream.Edge{Src: 0, Dst: 1}}
	for _, moveOn := range []bool{false, true} {
		e, err := ingest.New(ingest.Config{Vertices: n, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		pipe := &movingPipe{Engine: e, extra: updates(t, n, stream.Update{Edge: stream.Edge{Src: 5, Dst: 6}})}
		r := New(pipe, Config{})
		ctx := context.Background()
		if _, err := r.Ingest(ctx, updates(t, n, path...)); err != nil {
			t.Fatal(err)
		}
		if res, err := r.Query(ctx); err != nil || res.Components != n-2 {
			t.Fatalf("first query: %v, %v; want %d components", res, err, n-2)
		}
		// Deleting a forest edge re-opens its component: the next query
		// settles and reads the gutters.
		if _, err := r.Ingest(ctx, updates(t, n, cut)); err != nil {
			t.Fatal(err)
		}
		pipe.moveOn = moveOn
		res, err := r.Query(ctx)
		if moveOn {
			if !errors.Is(err, gutters.ErrStale) {
				t.Errorf("query while the pipeline moved on: %v, %v; want gutters.ErrStale", res, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		truth := dsu.New(n) // over the edges left: {1, 2}
		truth.Union(1, 2)
		checkAgainstTruth(t, "after the cut", res, truth.Labels(), truth.Sets())
		if res.Greedy {
			t.Error("the query after a cut answered from the greedy DSU, without the view")
		}
	}
}
