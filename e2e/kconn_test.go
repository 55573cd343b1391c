package e2e

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"sketchcc/kconn"
	"sketchcc/offline/replay"
	"sketchcc/stream"
)

// kRecord is one k-connectivity answer of main-node's --json.
type kRecord struct {
	AfterUpdates     uint64 `json:"after_updates"`
	K                int    `json:"k"`
	EdgeConnectivity int    `json:"edge_connectivity"`
	Bridges          int    `json:"bridges"`
	MinCut           *int   `json:"min_cut"`
}

// checkK compares every k-connectivity answer of a run with the exact
// answer (kconn over the edge set of the stream's prefix).
func checkK(t *testing.T, path string, k int, recs []kRecord, want int) {
	t.Helper()
	if len(recs) != want {
		t.Fatalf("%d k-connectivity answers, want %d", len(recs), want)
	}
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, r := range recs {
		_, set, err := replay.Run(f.Reader(0, r.AfterUpdates), replay.Config{Name: path})
		if err != nil {
			t.Fatal(err)
		}
		a, err := kconn.Analyze(f.Header().Vertices, slices.Collect(set.All()), k)
		if err != nil {
			t.Fatal(err)
		}
		if r.K != k || r.EdgeConnectivity != a.Lambda || r.Bridges != len(a.Bridges) || (r.MinCut == nil) != (a.MinCut == nil) ||
			r.MinCut != nil && *r.MinCut != a.MinCut.Size {
			t.Errorf("after %d updates: %+v; exact λ %d, %d bridges, min cut %+v", r.AfterUpdates, r, a.Lambda, len(a.Bridges), a.MinCut)
		}
	}
}

// TestKConnTwoWorkers: main-node --k-connectivity 3 with two workers
// sketching every batch (each delta covers the three sets), 10 queries on
// a stream with deletions: every answer is exact over its prefix, and the
// final answer and bridges equal those of a main node alone that queries
// only at the end.
func TestKConnTwoWorkers(t *testing.T) {
	skipShort(t)
	path := erdos(t)
	dir := t.TempDir()
	m, addr := startMain(t, nil, "--stream", path, "--expect-workers", "2", "--local-workers", "0",
		"--local-cutoff", "-1", "--batch-factor", "0.02", "--queries", "10", "--k-connectivity", "3",
		"--bridges", filepath.Join(dir, "bridges"))
	startWorker(t, addr)
	startWorker(t, addr)
	s := finish(t, m)
	checkK(t, path, 3, s.KConnectivity, 10)
	if len(s.Workers) != 2 || s.Workers[0].DeltasMerged == 0 || s.Workers[1].DeltasMerged == 0 {
		t.Errorf("both workers should have merged deltas: %+v", s.Workers)
	}
	out, err := exec.Command(filepath.Join(bin, "main-node"), "--stream", path, "--k-connectivity", "3",
		"--bridges", filepath.Join(dir, "bridges-alone")).CombinedOutput()
	if err != nil {
		t.Fatalf("main-node alone: %v\n%s", err, out)
	}
	a, errA := os.ReadFile(filepath.Join(dir, "bridges"))
	b, errB := os.ReadFile(filepath.Join(dir, "bridges-alone"))
	if errA != nil || errB != nil || !bytes.Equal(a, b) {
		t.Errorf("bridges with workers and 10 queries differ from a main node alone: %v %v", errA, errB)
	}
}

// TestKConnWorkerKilled: with --k-connectivity 3 and 10 queries, a worker
// stopped at 30% of the stream and SIGKILLed at 60% loses nothing: its
// batches are re-sent and every k answer is exact.
func TestKConnWorkerKilled(t *testing.T) {
	skipShort(t)
	// Denser than erdos: at 30% of it the gutters have handed out
	// thousands of batches, so the victim holds some when it stops.
	path := filepath.Join(t.TempDir(), "erdos-dense.bin")
	out, err := exec.Command(filepath.Join(bin, "streamtool"), "gen", "erdos", "--vertices", "1000", "--density", "0.3",
		"--seed", "5", "--no-cum", "--log-level", "warn", "-o", path).CombinedOutput()
	if err != nil {
		t.Fatalf("streamtool gen erdos: %v\n%s", err, out)
	}
	f := newFeeder(t, path, 0.3, 0.6)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "2", "--local-workers", "0",
		"--local-cutoff", "-1", "--batch-factor", "0.02", "--queries", "10", "--k-connectivity", "3")
	victim := startWorker(t, addr, "--name", "victim")
	startWorker(t, addr, "--name", "survivor")
	f.stopThenKill(t, victim, true)
	s := finish(t, m)
	f.wait(t)
	checkK(t, path, 3, s.KConnectivity, 10)
	var killed bool
	for _, w := range s.Workers {
		killed = killed || w.Name == "victim" && w.BatchesResent > 0 && w.LastError != ""
	}
	if !killed || s.BatchesResent == 0 {
		t.Errorf("want the victim's batches re-sent: %+v", s.Workers)
	}
}
