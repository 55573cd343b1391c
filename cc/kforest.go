package cc

import (
	"context"
	"fmt"
	"time"

	"sketchcc/dsu"
	"sketchcc/stream"
)

// KResult is the answer to a k-forest query: K edge-disjoint forests, the
// i-th a spanning forest of the graph minus the forests before it, whose
// union keeps every cut of the graph of fewer than K edges (see package
// kconn).
type KResult struct {
	// CC is the connected-components answer; its Forest is Forests[0].
	CC *Result
	// Forests holds F1 … FK, each edge with Src < Dst.
	Forests [][]stream.Edge
	// Flush is the time spent flushing the pipeline before F1, Extract
	// the time spent extracting F2 … FK (F1 is CC's), and Restore the time
	// spent putting the removed forest edges back into the sketches.
	Flush, Extract, Restore time.Duration
}

// KForests flushes the pipeline and answers a k-forest query over the
// store's K = Params().Sets() sketch sets (sketch.Params.WithSets): F1 is
// the CC query's forest (Query, over set 0), and Fi, i >= 2, is Boruvka's
// spanning forest over the columns of set i−1 once the edges of F1 …
// F(i−1) are deleted from the sketches (Ahn, Guha, McGregor, SODA 2012,
// §3.2). The sketches are linear, so XORing those edges back restores
// them: the query is not destructive, and ingestion and later queries go
// on over the stream's graph. It returns Query's errors, and an error
// wrapping ErrTooManyRounds when a set's columns run out before its
// forest is complete (no answer is returned then: a partial forest would
// understate the connectivity); the sketches are restored in every case.
func (r *Room) KForests(ctx context.Context) (*KResult, error) {
	tf := time.Now()
	if err := r.within(ctx, r.pipe.Flush); err != nil {
		return nil, err
	}
	flush := time.Since(tf)
	res, err := r.Query(ctx)
	if err != nil {
		return nil, err
	}
	p := r.st.Params()
	k, n := p.Sets(), p.Vertices()
	out := &KResult{CC: res, Forests: [][]stream.Edge{res.Forest.Edges}, Flush: flush}
	t0 := time.Now()
	deleted := 0 // forests deleted from the sketches
	defer func() {
		t1 := time.Now()
		r.toggle(forestUnion(out.Forests[:deleted]))
		out.Restore = time.Since(t1)
	}()
	rounds := p.SetColumns()
	if r.kRounds > 0 {
		rounds = r.kRounds
	}
	for i := 1; i < k; i++ {
		r.toggle(out.Forests[i-1])
		deleted = i
		f, _, err := spanningForest(p, r.st.Columns, dsu.New(n), r.cfg.Workers, rounds,
			resume{implicit: noVertex, first: i * p.SetColumns(), scratch: &r.scratch})
		if err != nil {
			return nil, fmt.Errorf("cc: k-forest query: forest %d of %d: %w", i+1, k, err)
		}
		out.Forests = append(out.Forests, f.Edges)
	}
	out.Extract = time.Since(t0)
	return out, nil
}

// Certificate returns the edges of every forest in one new slice: the
// certificate H = F1 ∪ … ∪ FK, at most K·(Vertices−1) edges.
func (k *KResult) Certificate() []stream.Edge { return forestUnion(k.Forests) }

// forestUnion returns the edges of fs in one new slice.
func forestUnion(fs [][]stream.Edge) []stream.Edge {
	var all []stream.Edge
	for _, f := range fs {
		all = append(all, f...)
	}
	return all
}

// toggle XORs edges into the sketches, each into both ends' sketches,
// grouped by vertex: once to delete them, once more to put them back.
func (r *Room) toggle(edges []stream.Edge) {
	by := make(map[uint32][]uint32, 2*len(edges))
	for _, e := range edges {
		by[e.Src] = append(by[e.Src], e.Dst)
		by[e.Dst] = append(by[e.Dst], e.Src)
	}
	for v, ns := range by {
		r.st.Toggle(v, ns)
	}
}
