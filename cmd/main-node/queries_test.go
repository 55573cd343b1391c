package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sketchcc/cc"
	"sketchcc/dsu"
	"sketchcc/ingest"
	"sketchcc/offline/replay"
	"sketchcc/stream"
)

// prefixDSU replays the first k updates of the stream at path with toggle
// semantics (offline/replay) and returns the union-find of that prefix's
// graph.
func prefixDSU(t *testing.T, path string, k uint64) *dsu.DSU {
	t.Helper()
	return prefixSet(t, path, k).Components()
}

// prefixSet replays the first k updates of the stream at path with toggle
// semantics into an exact edge set.
func prefixSet(t *testing.T, path string, k uint64) *replay.EdgeSet {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, set, err := replay.Run(f.Reader(0, k), replay.Config{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// TestQueriesDuringStream runs main-node with --query-at at the multiples
// stream's tenths, point queries and per-query labels, with and without
// the greedy shortcut, and checks every answer against a union-find over
// the stream prefix.
func TestQueriesDuringStream(t *testing.T) {
	const path = "../../testdata/multiples_graph_1024_stream.data"
	want := []int{469, 307, 235, 200, 177, 151, 135, 107, 88, 78} // data README
	rng := rand.New(rand.NewPCG(2, 3))
	var pq strings.Builder
	pq.WriteString("# u v\n")
	var pairs [][2]uint32
	for range 300 {
		u, v := rng.Uint32N(1024), rng.Uint32N(1024)
		pairs = append(pairs, [2]uint32{u, v})
		fmt.Fprintf(&pq, "%d %d\n", u, v)
	}
	pqFile := writeFile(t, "points.txt", []byte(pq.String()))
	for _, greedy := range []bool{true, false} {
		dir := t.TempDir()
		args := []string{"--stream", path, "--json", "--query-at", "852,1704,2556,3408,4260,5112,5964,6816,7668",
			"--point-queries", pqFile, "--labels", filepath.Join(dir, "labels"), "--batch-factor", "0.1"}
		if !greedy {
			args = append(args, "--no-greedy")
		}
		r := runMain(t, args...)
		if r.code != 0 {
			t.Fatal(r)
		}
		var out struct {
			Components int           `json:"components"`
			Greedy     bool          `json:"greedy"`
			Queries    []queryRecord `json:"queries"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Fatalf("%v\n%s", err, r.stdout)
		}
		var got []int
		for i, q := range out.Queries {
			got = append(got, q.Components)
			if q.Greedy && !greedy {
				t.Errorf("query after %d: greedy answer with --no-greedy", q.AfterUpdates)
			}
			truth := prefixDSU(t, path, q.AfterUpdates)
			if q.Components != truth.Sets() {
				t.Errorf("after %d: %d components, union-find %d", q.AfterUpdates, q.Components, truth.Sets())
			}
			if len(q.Points) != len(pairs) {
				t.Fatalf("after %d: %d point answers, want %d", q.AfterUpdates, len(q.Points), len(pairs))
			}
			for i, pa := range q.Points {
				if pa.U != pairs[i][0] || pa.V != pairs[i][1] || pa.Connected != (truth.Find(pa.U) == truth.Find(pa.V)) {
					t.Fatalf("after %d: point query %d = %+v, truth connected=%v", q.AfterUpdates, i, pa, truth.Find(pa.U) == truth.Find(pa.V))
				}
			}
			// Mid-stream answers go to labels.<updates>, the final one
			// to labels alone.
			name := fmt.Sprintf("labels.%d", q.AfterUpdates)
			if i == len(out.Queries)-1 {
				if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
					t.Errorf("the final answer was written to %s too", name)
				}
				name = "labels"
			}
			lines := readPairs(t, filepath.Join(dir, name))
			if len(lines) != 1024 {
				t.Fatalf("labels.%d has %d lines", q.AfterUpdates, len(lines))
			}
			// The labels must be a bijection with the union-find's roots.
			rootOf, labelOf := map[uint32]uint32{}, map[uint32]uint32{}
			for _, l := range lines {
				root := truth.Find(l[0])
				if r, ok := rootOf[l[1]]; ok && r != root {
					t.Fatalf("labels.%d: label %d spans two components", q.AfterUpdates, l[1])
				}
				if lb, ok := labelOf[root]; ok && lb != l[1] {
					t.Fatalf("labels.%d: one component has labels %d and %d", q.AfterUpdates, lb, l[1])
				}
				rootOf[l[1]], labelOf[root] = root, l[1]
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("greedy=%v: components %v, want %v", greedy, got, want)
		}
		if out.Components != 78 || out.Greedy != greedy {
			t.Errorf("top level: components %d greedy %v", out.Components, out.Greedy)
		}
		if _, err := os.Stat(filepath.Join(dir, "labels")); err != nil {
			t.Errorf("final labels file: %v", err)
		}
	}
}

func TestQueryFlagErrors(t *testing.T) {
	const path = "../../testdata/multiples_graph_1024_stream.data"
	for _, args := range [][]string{
		{"--stream", path, "--queries", "0"},
		{"--stream", path, "--query-at", "10,x"},
		{"--stream", path, "--query-at", "10", "--query-at", "-3"},
	} {
		if r := runMain(t, args...); r.code != 2 || !strings.Contains(r.stderr, "is not an update count") &&
			!strings.Contains(r.stderr, "--queries=0") {
			t.Errorf("%v: %v", args, r)
		}
	}
	bad := writeFile(t, "bad.txt", []byte("1 2\n3 99999\n"))
	r := runMain(t, "--stream", path, "--point-queries", bad)
	if r.code != 1 || !strings.Contains(r.stderr, "bad.txt:2") || strings.Contains(r.stdout, "components") {
		t.Errorf("out-of-range point query: %v", r)
	}
}

// TestInputMistakes: inputs a user gets wrong must fail with a message that
// says what is wrong, and print no answer.
func TestInputMistakes(t *testing.T) {
	long := writeFile(t, "long.txt", []byte("5 1\n0 1\n1 2\n"))
	f := func(want string, args ...string) {
		t.Helper()
		r := runMain(t, args...)
		if r.code != 1 || !strings.Contains(r.stderr, want) || strings.Contains(r.stdout, "components") {
			t.Errorf("%v: want exit 1 and %q, got %v", args, want, r)
		}
	}
	f("more data than the header promises", "--format", "text", "--stream", long)
	// A raw edge list given as a text stream points to streamtool convert,
	// whether its first line or a later one gives it away.
	f("must be converted first: streamtool convert --from snap", "--format", "text", "--stream", writeFile(t, "snap.txt", []byte("# snap\n3466 5233\n1 2\n")))
	f("must be converted first: streamtool convert --from snap", "--format", "text", "--stream", writeFile(t, "snap2.txt", []byte("3466 5233\n1 2\n")))
	f("looks like text", "--stream", long)
	// --readers > 1 on a text stream reads on one goroutine, and says so.
	text := writeFile(t, "ok.txt", []byte("3 2\n0 1\n1 2\n"))
	if r := runMain(t, "--format", "text", "--stream", text, "--readers", "2"); r.code != 0 ||
		!strings.Contains(r.stderr, "--readers > 1 needs a binary stream in a regular file") {
		t.Errorf("--readers 2 on a text stream: %v", r)
	}
	f("the file is not text: drop --format text", "--format", "text", "--stream", "../../testdata/karate.bin")
	gz := writeFile(t, "long.txt.gz", []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3})
	f("gzip-compressed: decompress it (gunzip) for a stream, or give an edge list to streamtool convert", "--format", "text", "--stream", gz)
	f("streamtool convert, which reads gzip", "--stream", gz)
	f("does not exist", "--stream", "../../testdata/karate.bin", "--labels", "/nonexistent-dir/labels")
	f("does not exist", "--stream", "../../testdata/karate.bin", "--forest", "/nonexistent-dir/forest")
}

// TestSummaryMidStreamQueries: the summary's ingestion line counts the
// time of the mid-stream queries, so that its terms add up to the end to
// end time, and leaves them out when there were none.
func TestSummaryMidStreamQueries(t *testing.T) {
	r := runMain(t, "--stream", multiples, "--queries", "3")
	if r.code != 0 || !strings.Contains(r.stdout, "final flush") || !strings.Contains(r.stdout, "+ 2 mid-stream queries") {
		t.Errorf("--queries 3: %v", r)
	}
	r = runMain(t, "--stream", multiples)
	if r.code != 0 || strings.Contains(r.stdout, "mid-stream") {
		t.Errorf("one query: %v", r)
	}
}

// roundsOut is a stream whose reading fails as a query that ran out of
// sketch columns does.
type roundsOut struct{ h stream.Header }

func (s roundsOut) Header() stream.Header { return s.h }

func (s roundsOut) Read([]stream.Update) (int, error) {
	return 0, fmt.Errorf("boruvka: %w", cc.ErrTooManyRounds)
}

// TestTooManyRoundsNamesFlag: a run that fails with cc.ErrTooManyRounds
// names the flag that gives the sketches more columns. A real query
// hardly gets there on a test's graph: every sketch has at least 18
// columns, and Boruvka at least halves the supernodes a round.
func TestTooManyRoundsNamesFlag(t *testing.T) {
	e, err := ingest.New(ingest.Config{Vertices: 16, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := roundsOut{stream.Header{Vertices: 16, Updates: 4}}
	_, err = ingestAndQuery(t.Context(), config{queries: 1}, cc.New(e, cc.Config{Workers: 1}), src, cc.Schedule{Name: "t"},
		func(queryRecord) {}, slog.New(slog.DiscardHandler))
	if !errors.Is(err, cc.ErrTooManyRounds) || !strings.HasSuffix(err.Error(), "; rerun with a larger --sketch-factor") {
		t.Errorf("err = %v, want cc.ErrTooManyRounds and the flag to raise", err)
	}
}
