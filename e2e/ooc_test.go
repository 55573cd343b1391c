package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// oocLimit is the main node's --memory-limit in the out-of-core tests, in
// bytes (56 MiB): the 32 MiB runtime reserve, 10.5 MiB for the remote
// pool (distributor.PoolReserveBytes), bookkeeping, shrunken gutters and
// buffers, and 7 to 9 MB of resident sketches, under half of the sketch
// bytes of both streams (erdos13: 61,472,768; kron12: 28,377,088) and,
// for erdos13, under all of them.
const oocLimit = "58720256"

// oocRecord is the part of main-node's --json that says how the sketches
// were kept.
type oocRecord struct {
	SketchBytes int64 `json:"sketch_bytes"`
	Memory      struct {
		LimitBytes       int64 `json:"limit_bytes"`
		OutOfCore        bool  `json:"out_of_core"`
		Ranges           int   `json:"ranges"`
		ResidentBytes    int64 `json:"resident_bytes"`
		DiskReadBytes    int64 `json:"disk_read_bytes"`
		DiskWrittenBytes int64 `json:"disk_written_bytes"`
		Swaps            int64 `json:"swaps"`
	} `json:"memory"`
}

// checkOutOfCore checks that main node m kept its sketches on disk in
// several ranges, with at most half of them resident and I/O both ways,
// under a limit below its sketch bytes when below is set, and left dir
// empty.
func checkOutOfCore(t *testing.T, m *proc, dir string, below bool) {
	t.Helper()
	var r oocRecord
	if err := json.Unmarshal(m.stdout.Bytes(), &r); err != nil {
		t.Fatal(err)
	}
	mem := r.Memory
	if !mem.OutOfCore || mem.Ranges < 2 || 2*mem.ResidentBytes > r.SketchBytes || mem.Swaps == 0 ||
		mem.DiskWrittenBytes == 0 || mem.DiskReadBytes == 0 || below && mem.LimitBytes >= r.SketchBytes {
		t.Errorf("%d sketch bytes, memory record %+v: want them on disk, at most half resident, swapped in (limit below them: %v)",
			r.SketchBytes, mem, below)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Errorf("--sketch-dir holds %d entries after the run (%v), want none", len(left), err)
	}
	t.Logf("%d sketch bytes, limit %d: %d ranges, %d resident, %d swaps, %d read, %d written",
		r.SketchBytes, mem.LimitBytes, mem.Ranges, mem.ResidentBytes, mem.Swaps, mem.DiskReadBytes, mem.DiskWrittenBytes)
}

var (
	erdos13Once sync.Once
	erdos13Path string
	erdos13Err  error
)

// erdos13 returns a sparse Erdős–Rényi stream with deletions (8,192
// vertices, density 0.0003: 16,557 updates, 3,227 of them deletions, 779
// components), made once per test binary: few updates, but 61 MB of
// sketches.
func erdos13(t *testing.T) string {
	t.Helper()
	erdos13Once.Do(func() {
		erdos13Path = filepath.Join(bin, "erdos13.bin")
		out, err := exec.Command(filepath.Join(bin, "streamtool"), "gen", "erdos", "--vertices", "8192", "--density", "0.0003",
			"--seed", "5", "--no-cum", "--log-level", "warn", "-o", erdos13Path).CombinedOutput()
		if err != nil {
			erdos13Err = fmt.Errorf("streamtool gen erdos: %v\n%s", err, out)
		}
	})
	if erdos13Err != nil {
		t.Fatal(erdos13Err)
	}
	return erdos13Path
}

// TestOutOfCoreTwoWorkers: a main node whose memory limit is below its
// sketch bytes keeps them on disk and merges the deltas of two workers on
// loopback into them (every batch shipped, also the one-update batches
// of the query flushes): every answer, mid-stream and final, and the
// labels equal union-find's over the stream so far.
func TestOutOfCoreTwoWorkers(t *testing.T) {
	skipShort(t)
	path := erdos13(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	dir := t.TempDir()
	m, addr := startMain(t, nil, "--stream", path, "--expect-workers", "2", "--local-workers", "0",
		"--memory-limit", oocLimit, "--sketch-dir", dir, "--local-cutoff", "-1", "--queries", "4", "--no-greedy",
		"--labels", labelsPath)
	startWorker(t, addr)
	startWorker(t, addr)
	s := finish(t, m)
	checkTruth(t, s, path, labelsPath)
	for _, q := range s.Queries {
		if _, want := truthAfter(t, path, q.AfterUpdates); q.Components != want {
			t.Errorf("after %d updates: %d components, union-find %d", q.AfterUpdates, q.Components, want)
		}
	}
	if len(s.Queries) != 4 || len(s.Workers) != 2 || s.Workers[0].DeltasMerged == 0 || s.Workers[1].DeltasMerged == 0 {
		t.Errorf("want 4 queries and deltas merged from both workers: %+v", s)
	}
	if s.FallbackBatches != 0 || s.LocalCutoffBatches != 0 {
		t.Errorf("fallback %d, cut-off %d batches: want every batch sketched by the workers", s.FallbackBatches, s.LocalCutoffBatches)
	}
	checkCounters(t, s)
	checkOutOfCore(t, m, dir, true)
}

// TestOutOfCoreWorkerKilled: out of core, a worker stopped at 30% of
// kron12 (its batches unanswered) and SIGKILLed at 60% loses nothing: its
// batches are re-sent to the other and merged into the sketches on disk
// once, and the answer is exact.
func TestOutOfCoreWorkerKilled(t *testing.T) {
	skipShort(t)
	dir := t.TempDir()
	s, m := killOneOfTwo(t, "--memory-limit", oocLimit, "--sketch-dir", dir)
	checkOutOfCore(t, m, dir, false)
	t.Logf("re-sent %d batches", s.BatchesResent)
}
