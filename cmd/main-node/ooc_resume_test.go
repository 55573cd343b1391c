package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sketchcc/checkpoint"
	"sketchcc/dsu"
	"sketchcc/offline/streamgen"
)

// writeChurnStream writes a dynamic Erdős–Rényi stream on 1,024 vertices
// whose final graph is sparse (about 1,000 edges, a few hundred
// components) and most of whose updates are deletions paired with
// inserts: every final edge deleted and re-inserted in 16 rounds, and 90%
// of the stream transient pairs inserted and deleted again. A record lost
// or applied twice anywhere most likely joins two components.
func writeChurnStream(t *testing.T, path string, seed uint64) streamgen.Summary {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := streamgen.ErdosConfig{Vertices: 1024, Density: 0.002,
		Config: streamgen.Config{Seed: seed, Rounds: 16, Churn: 1, Transient: 0.9}}
	w := bufio.NewWriterSize(f, 1<<20)
	s, err := streamgen.Erdos(context.Background(), cfg, w, nil)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// samePartition fails t unless labels (one per vertex, from --labels)
// put two vertices together exactly when truth does.
func samePartition(t *testing.T, name string, labels []uint32, truth *dsu.DSU) {
	t.Helper()
	rootOf, labelOf := map[uint32]uint32{}, map[uint32]uint32{}
	for v, l := range labels {
		r := truth.Find(uint32(v))
		if got, ok := rootOf[l]; ok && got != r {
			t.Fatalf("%s: vertex %d has the label %d of another union-find set", name, v, l)
		}
		if got, ok := labelOf[r]; ok && got != l {
			t.Fatalf("%s: vertex %d's union-find set has labels %d and %d", name, v, got, l)
		}
		rootOf[l], labelOf[r] = r, l
	}
	if len(rootOf) != truth.Sets() {
		t.Fatalf("%s: %d labels, union-find says %d components", name, len(rootOf), truth.Sets())
	}
}

// resumeChecked runs --resume ck with args and checks its labels and
// components against truth and that it resumed from the checkpoint.
func resumeChecked(t *testing.T, name, path, ck string, from uint64, truth *dsu.DSU, args ...string) string {
	t.Helper()
	labels := filepath.Join(t.TempDir(), "labels.txt")
	r := runMain(t, append([]string{"--stream", path, "--resume", ck, "--json", "--labels", labels}, args...)...)
	if r.code != 0 || components(r.stdout) != truth.Sets() || !strings.Contains(r.stdout, fmt.Sprintf(`"resumed_from":%d`, from)) {
		t.Fatalf("%s: want %d components resumed from %d: %v", name, truth.Sets(), from, r)
	}
	var got []uint32
	for i, p := range readPairs(t, labels) {
		if p[0] != uint32(i) {
			t.Fatalf("%s: label line %d is for vertex %d", name, i+1, p[0])
		}
		got = append(got, p[1])
	}
	samePartition(t, name, got, truth)
	return r.stdout
}

// TestOutOfCoreKillResume (issue 24, item 5): an out-of-core run (a
// memory limit below its sketches' bytes, --sketch-dir) that checkpoints
// at every step is SIGKILLed at three points after its first checkpoint,
// which may fall in the middle of writing one (the file is written
// first to a temporary name and renamed); each --resume, out of core
// in the same --sketch-dir the killed run left its files in, labels every
// vertex as the union-find over the final edge set does and leaves the
// directory empty. The last killed run's out-of-core checkpoint resumes
// in memory, and an in-memory run's checkpoint out of core, to the same
// answer.
func TestOutOfCoreKillResume(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "churn.bin")
	sum := writeChurnStream(t, path, 5)
	_, _, truth := oracle(t, path)
	if truth.Sets() != sum.Components || sum.Deletes < sum.Updates/3 || truth.Sets() < 50 {
		t.Fatalf("stream: %+v; union-find says %d components: want deletions and many components", sum, truth.Sets())
	}
	skDir := filepath.Join(dir, "sketches")
	if err := os.Mkdir(skDir, 0o755); err != nil {
		t.Fatal(err)
	}
	ooc := []string{"--memory-limit", "35M", "--sketch-dir", skDir} // 32 MiB for the runtime, half the 6 MiB of sketches
	var ck string
	var at uint64
	for i, delay := range []time.Duration{0, 200 * time.Millisecond, 420 * time.Millisecond} {
		ck = filepath.Join(dir, fmt.Sprintf("ck%d", i))
		// 300 K updates/s: the run takes about 1.15 s, a checkpoint every
		// 64 Ki updates (0.22 s), so the kills fall after the first,
		// second and third.
		cmd := exec.Command(binary, append([]string{"--stream", path, "--checkpoint-dir", ck, "--checkpoint-every", "1ns",
			"--rate-limit", "300000", "--workers", "2", "--log-level", "info", "--progress", "never"}, ooc...)...)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var log strings.Builder
		sc := bufio.NewScanner(stderr)
		for sc.Scan() && !strings.Contains(sc.Text(), "msg=checkpoint ") {
			log.WriteString(sc.Text() + "\n")
		}
		time.Sleep(delay)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != -1 {
			t.Fatalf("kill %d: the run ended with exit %d before the SIGKILL:\n%s", i, code, log.String())
		}
		m, _, err := checkpoint.Read(ck)
		if err != nil {
			t.Fatalf("kill %d, %v after the first checkpoint: no valid checkpoint left: %v", i, delay, err)
		}
		if at = m.Updates; at == 0 || at >= sum.Updates {
			t.Fatalf("kill %d: checkpoint at %d of %d updates: the test needs one inside the stream", i, at, sum.Updates)
		}
		t.Logf("kill %d, %v after the first checkpoint: resuming from update %d of %d", i, delay, at, sum.Updates)
		out := resumeChecked(t, fmt.Sprintf("kill %d, resumed out of core from %d", i, at), path, ck, at, truth, ooc...)
		if !strings.Contains(out, `"out_of_core":true`) {
			t.Errorf("kill %d: the resumed run was not out of core: %s", i, out)
		}
		if left, err := os.ReadDir(skDir); err != nil || len(left) != 0 {
			t.Errorf("kill %d: --sketch-dir holds %d entries after the resumed run (%v), want none", i, len(left), err)
		}
	}
	resumeChecked(t, "out-of-core checkpoint resumed in memory", path, ck, at, truth)

	ram := filepath.Join(dir, "ram")
	if r := runMain(t, "--stream", path, "--checkpoint-dir", ram, "--checkpoint-every", "1ns", "--json"); r.code != 0 || components(r.stdout) != truth.Sets() {
		t.Fatalf("in-memory run with checkpoints: %v", r)
	}
	m, _, err := checkpoint.Read(ram)
	if err != nil || m.Updates == 0 || m.Updates >= sum.Updates {
		t.Fatalf("in-memory checkpoint at %d of %d updates, %v: the test needs one inside the stream", m.Updates, sum.Updates, err)
	}
	resumeChecked(t, "in-memory checkpoint resumed out of core", path, ram, m.Updates, truth, ooc...)
}
