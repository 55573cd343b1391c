package kconn_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"sketchcc/cc"
	"sketchcc/ingest"
	"sketchcc/internal/testgraph"
	"sketchcc/offline/replay"
	"sketchcc/stream"
)

// openStream opens the binary stream at path, first decompressing it
// into dir when its name ends in ".gz".
func openStream(t *testing.T, path, dir string) *stream.File {
	t.Helper()
	if strings.HasSuffix(path, ".gz") {
		in, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		zr, err := gzip.NewReader(in)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out := filepath.Join(dir, strings.TrimSuffix(filepath.Base(path), ".gz"))
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(f, zr); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		path = out
	}
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// kAnswer runs the stream of f through a K-set pipeline and a k-forest
// query, as main-node --k-connectivity K does in-process, and returns the
// query's forests.
func kAnswer(t testing.TB, name string, f *stream.File, k int) [][]stream.Edge {
	t.Helper()
	ctx := context.Background()
	pipe, err := ingest.New(ingest.Config{Vertices: f.Header().Vertices, Sets: k, Workers: 2, Readers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	room := cc.New(pipe, cc.Config{})
	if _, err := room.Ingest(ctx, f.Cursor()); err != nil {
		t.Fatal(err)
	}
	kr, err := room.KForests(ctx)
	if err != nil {
		t.Fatalf("%s k=%d: %v", name, k, err)
	}
	return kr.Forests
}

// TestKConnRealGraphs checks the k-connectivity answers (min(K, λ) of the
// graph and of each component, the bridges, the size of a minimum cut) of
// the real graphs of ../testdata that no test of package cc covers,
// against testgraph.KExact's exact answers over each stream's final edge
// set, for K = 2, 3, 4. It runs in CI through the project's test command
// (not under -short, which the race-detector pass uses: it is the
// longest of the package's tests, and the race pass adds nothing to what
// it checks). About 9 s on 2 cores, peak RSS about 2.2 GB. Graphs of
// ../shared/data left out: p2p-Gnutella31, soc-Slashdot0902 and
// road-luxembourg-osm (62,586 to 114,599 vertices, most of them with
// edges, so at K = 4 their 2.8 to 5.7 GB of sketches are touched: 13 GB of
// peak RSS and 40 s with the others, a third of it zeroing pages);
// BenchmarkKConnLargeGraphs checks them the same way, run once by hand
// (results/kconn-large-2026-12-05.md). gz_kron17_trouble's 131,072
// vertices fit: its 8 edges touch 16 sketches.
func TestKConnRealGraphs(t *testing.T) {
	if testing.Short() {
		t.Skip("the real-graph k-connectivity check takes seconds; the project's test command runs it")
	}
	dir := t.TempDir()
	for _, name := range []string{"streamification-test-graph.bin", "dolphins.bin", "powergrid.bin", "CollegeMsg.bin",
		"bitcoin-otc.bin", "ca-HepTh.bin", "wiki-Vote.bin.gz", "ca-HepPh.bin.gz", "p2p-Gnutella24.bin.gz",
		"er-1000-0.95-0.5.bin.gz", "kron17-trouble.bin"} {
		t0 := time.Now()
		f := openStream(t, filepath.Join("..", "testdata", name), dir)
		h := f.Header()
		_, set, err := replay.Run(f.Reader(0, h.Updates), replay.Config{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		edges := slices.Collect(set.All())
		for k := 2; k <= 4; k++ {
			a := testgraph.CheckK(t, name, h.Vertices, edges, kAnswer(t, name, f, k), k)
			t.Logf("%s k=%d: λ %d, %d bridges, %d components, min(K,λ) of the largest component %d",
				name, k, a.Lambda, len(a.Bridges), a.Components, largest(a.Labels, a.ComponentLambda))
		}
		f.Close()
		// Give the pipelines' memory back before the next graph: without
		// it the peak RSS adds up across graphs (about 16 GB, not 6).
		debug.FreeOSMemory()
		t.Logf("%s: %v", name, time.Since(t0).Round(time.Millisecond))
	}
}

// largest returns min(K, λ) of the component with the most vertices.
func largest(labels []uint32, lambda []int) int {
	size := make([]int, len(lambda))
	for _, l := range labels {
		size[l]++
	}
	best := 0
	for c := range size {
		if size[c] > size[best] {
			best = c
		}
	}
	return lambda[best]
}

// BenchmarkKConnLargeGraphs runs TestKConnRealGraphs' check, once per K
// = 2, 3, 4, on the binary streams named (space-separated) by
// $KCONN_LARGE_STREAMS, the graphs too large for the test (convert them
// with streamtool convert; see results/kconn-large-2026-12-05.md), and
// reports the seconds of each K's ingestion and query and of the exact
// check. With no streams named it does nothing (b.Skip).
func BenchmarkKConnLargeGraphs(b *testing.B) {
	paths := strings.Fields(os.Getenv("KCONN_LARGE_STREAMS"))
	if len(paths) == 0 {
		b.Skip("no streams in $KCONN_LARGE_STREAMS")
	}
	for _, path := range paths {
		f, err := stream.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		h := f.Header()
		_, set, err := replay.Run(f.Reader(0, h.Updates), replay.Config{Name: path})
		if err != nil {
			b.Fatal(err)
		}
		edges := slices.Collect(set.All())
		name := filepath.Base(path)
		for k := 2; k <= 4; k++ {
			b.Run(fmt.Sprintf("%s/k=%d", name, k), func(b *testing.B) {
				for b.Loop() {
					t0 := time.Now()
					forests := kAnswer(b, name, f, k)
					t1 := time.Now()
					a := testgraph.CheckK(b, name, h.Vertices, edges, forests, k)
					b.ReportMetric(t1.Sub(t0).Seconds(), "query-s")
					b.ReportMetric(time.Since(t1).Seconds(), "check-s")
					b.Logf("%s k=%d: λ %d, %d bridges, %d components, min(K,λ) of the largest component %d: equal to the exact answer",
						name, k, a.Lambda, len(a.Bridges), a.Components, largest(a.Labels, a.ComponentLambda))
				}
			})
		}
		f.Close()
	}
}
