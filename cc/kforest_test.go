package cc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"sketchcc/internal/testgraph"
	"sketchcc/kconn"
	"sketchcc/offline/edgelist"
	"sketchcc/sketch"
	"sketchcc/stream"
)

// cliques returns the edges of cliques of size s starting at the given
// first vertices.
func cliques(s uint32, firsts ...uint32) []stream.Edge {
	var e []stream.Edge
	for _, f := range firsts {
		for u := range s {
			for v := u + 1; v < s; v++ {
				e = append(e, stream.Edge{Src: f + u, Dst: f + v})
			}
		}
	}
	return e
}

// joins returns c distinct edges between the blocks of size s at a and b.
func joins(s, a, b uint32, c int) []stream.Edge {
	var e []stream.Edge
	for i := range uint32(c) {
		e = append(e, stream.Edge{Src: a + i%s, Dst: b + (i*5+i/s)%s})
	}
	return e
}

// kGraphs are the final graphs the k-forest tests stream, on 64 vertices
// (those not named stay isolated): two dense halves joined by c edges, a
// path of cliques joined by 1 and 3 edges, and a cycle.
func kGraphs() map[string][]stream.Edge {
	g := map[string][]stream.Edge{}
	for c := 1; c <= 5; c++ {
		g[fmt.Sprintf("halves-c%d", c)] = append(cliques(20, 0, 20), joins(20, 0, 20, c)...)
	}
	path := cliques(10, 0, 10, 20, 30, 40)
	path = append(path, joins(10, 0, 10, 3)...)
	path = append(path, joins(10, 10, 20, 1)...)
	path = append(path, joins(10, 20, 30, 3)...)
	path = append(path, joins(10, 30, 40, 2)...)
	g["path-of-cliques"] = path
	var cyc []stream.Edge
	for v := range uint32(50) {
		cyc = append(cyc, canonical(v, (v+1)%50))
	}
	g["cycle"] = cyc
	return g
}

// writeKStream writes a well-formed stream on n vertices whose final
// graph is final: every final edge and 150 other pairs inserted in random
// order, the other pairs and a third of the final edges deleted, then
// those re-inserted. It returns the updates.
func writeKStream(t *testing.T, path string, n uint32, final []stream.Edge, seed uint64) []stream.Update {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	in := map[stream.Edge]bool{}
	for _, e := range final {
		in[canonical(e.Src, e.Dst)] = true
	}
	var noise []stream.Edge
	for len(noise) < 150 {
		e := canonical(uint32(rng.IntN(int(n))), uint32(rng.IntN(int(n))))
		if e.Src != e.Dst && !in[e] && !slices.Contains(noise, e) {
			noise = append(noise, e)
		}
	}
	shuffled := func(es []stream.Edge, typ stream.UpdateType) []stream.Update {
		var us []stream.Update
		for _, e := range es {
			us = append(us, stream.Update{Type: typ, Edge: e})
		}
		rng.Shuffle(len(us), func(i, j int) { us[i], us[j] = us[j], us[i] })
		return us
	}
	again := final[:len(final)/3]
	us := shuffled(append(slices.Clone(final), noise...), stream.Insert)
	us = append(us, shuffled(append(slices.Clone(again), noise...), stream.Delete)...)
	us = append(us, shuffled(again, stream.Insert)...)
	if err := os.WriteFile(path, testgraph.Encode(t, n, us), 0o644); err != nil {
		t.Fatal(err)
	}
	return us
}

// prefixEdges returns the edges of records [0, hi) of the binary stream
// at path, replayed into an exact edge set.
func prefixEdges(t *testing.T, path string, hi uint64) []stream.Edge {
	return slices.Collect(replayPrefix(t, path, hi).All())
}

// checkKAnswer checks kr's forests and the answer read off their union
// against the exact answer over edges (testgraph.CheckK: its own flows and
// bridge search, not kconn's).
func checkKAnswer(t *testing.T, name string, n uint32, edges []stream.Edge, kr *KResult, k int) *kconn.Answer {
	t.Helper()
	return testgraph.CheckK(t, name, n, edges, kr.Forests, k)
}

// snapshot copies every sketch of e's store.
func snapshot(e engine) []sketch.Bucket {
	st := e.pipe.Store()
	var all []sketch.Bucket
	for v := range st.Params().Vertices() {
		all = append(all, st.Table().Sketch(v)...)
	}
	return all
}

// TestKForestsMidStream streams graphs with planted cuts and deletions
// for K = 2, 3, 4, runs 10 k-forest queries at fixed points and checks
// each against the exact answer over that prefix, that every query leaves
// every sketch set as it found it, and that the final sketches equal those
// of a run with no mid-stream query.
func TestKForestsMidStream(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const n = 64
	for name, final := range kGraphs() {
		path := filepath.Join(dir, name+".bin")
		us := writeKStream(t, path, n, final, uint64(len(name)))
		for k := 2; k <= 4; k++ {
			cfg := testConfig{Sets: k, Workers: 2, BatchFactor: 0.05, Seed: uint64(k)}
			e, src := openEngine(t, path, cfg)
			var done uint64
			for q := 1; q <= 10; q++ {
				pos := uint64(len(us)) * uint64(q) / 10
				if _, err := e.IngestN(ctx, src, pos-done); err != nil {
					t.Fatal(err)
				}
				done = pos
				if err := e.pipe.Flush(ctx); err != nil {
					t.Fatal(err)
				}
				before := snapshot(e)
				kr, err := e.KForests(ctx)
				if err != nil {
					t.Fatalf("%s k=%d after %d: %v", name, k, pos, err)
				}
				if after := snapshot(e); !slices.Equal(before, after) {
					t.Fatalf("%s k=%d after %d: the query changed the sketches", name, k, pos)
				}
				checkKAnswer(t, fmt.Sprintf("%s after %d", name, pos), n, prefixEdges(t, path, pos), kr, k)
			}
			once, src1 := openEngine(t, path, cfg)
			if _, err := once.Ingest(ctx, src1); err != nil {
				t.Fatal(err)
			}
			kr, err := once.KForests(ctx)
			if err != nil {
				t.Fatal(err)
			}
			checkKAnswer(t, name+" in one go", n, final, kr, k)
			if !slices.Equal(snapshot(e), snapshot(once)) {
				t.Fatalf("%s k=%d: final sketches after 10 queries differ from a run without them", name, k)
			}
		}
	}
}

// TestKForestsRealGraphs checks the k-forest answers on the real graphs
// of testdata (as converted) and of offline/edgelist/testdata (parsed
// here and streamed with a third of their edges deleted and re-inserted
// and 150 other pairs inserted and deleted) against the exact answers over
// their final edge sets, for K = 2, 3, 4.
func TestKForestsRealGraphs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var paths []string
	for _, file := range []string{"karate.bin", "lesmis.bin", "jazz.bin", "ca-GrQc.bin", "road-minnesota.bin",
		"email-Eu-core.bin", "p2p-Gnutella08.bin", "facebook_combined.bin", "as733.bin", "multiples_graph_1024_stream.data"} {
		paths = append(paths, filepath.Join("..", "testdata", file))
	}
	for _, g := range []struct {
		file   string
		format edgelist.Format
	}{{"karate.gml", edgelist.GML}, {"road-minnesota.mtx", edgelist.MTX}, {"CA-GrQc.txt", edgelist.Snap},
		{"p2p-Gnutella08.txt", edgelist.Snap}, {"arxiv-cit-hep-th.lg.gz", edgelist.LG}} {
		f, err := os.Open(filepath.Join("..", "offline", "edgelist", "testdata", g.file))
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := edgelist.Parse(ctx, f, g.file, g.format, edgelist.Options{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, g.file+".bin")
		writeKStream(t, path, parsed.Vertices, parsed.Edges, 3)
		paths = append(paths, path)
	}
	for _, path := range paths {
		h := mustHeader(t, path)
		edges := prefixEdges(t, path, h.Updates)
		for k := 2; k <= 4; k++ {
			e, src := openEngine(t, path, testConfig{Sets: k, Workers: 2})
			if _, err := e.Ingest(ctx, src); err != nil {
				t.Fatal(err)
			}
			kr, err := e.KForests(ctx)
			if err != nil {
				t.Fatalf("%s k=%d: %v", path, k, err)
			}
			a := checkKAnswer(t, filepath.Base(path), h.Vertices, edges, kr, k)
			t.Logf("%s k=%d: λ %d, %d bridges, %d components", filepath.Base(path), k, a.Lambda, len(a.Bridges), a.Components)
		}
	}
}

// TestKForestsRunOut: a set whose Boruvka runs out of rounds fails the
// query with ErrTooManyRounds (no answer), and the sets are restored.
func TestKForestsRunOut(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "halves.bin")
	final := kGraphs()["halves-c2"]
	writeKStream(t, path, 64, final, 1)
	e, src := openEngine(t, path, testConfig{Sets: 3, Workers: 2})
	if _, err := e.Ingest(ctx, src); err != nil {
		t.Fatal(err)
	}
	if err := e.pipe.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	before := snapshot(e)
	e.kRounds = 1
	if kr, err := e.KForests(ctx); !errors.Is(err, ErrTooManyRounds) || kr != nil {
		t.Fatalf("KForests with one round: %v, %v; want ErrTooManyRounds and no answer", kr, err)
	}
	if !slices.Equal(before, snapshot(e)) {
		t.Fatal("a failed k-forest query changed the sketches")
	}
	e.kRounds = 0
	kr, err := e.KForests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	checkKAnswer(t, "halves-c2 after a failed query", 64, final, kr, 3)
}
