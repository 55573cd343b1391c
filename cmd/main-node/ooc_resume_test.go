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

	"sketchcc/checkpoint"
	"sketchcc/dsu"
	"sketchcc/offline/streamgen"
)

// writeChurnStream writes a dynamic Erdős–Rényi stream on 1,024 vertices
// whose final graph is sparse (about 1,000 edges, at least 50
// components, which the test checks) and most of whose updates are deletions paired with
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
// at every step is SIGKILLed after its first, second and third
// checkpoints, and stopped by SIGTERM once (a stop checkpoint between two
// steps); each --resume, out of core
// in the same --sketch-dir the killed run left its files in, labels every
// vertex as the union-find over the final edge set does and leaves the
// directory empty. The last killed run's out-of-core checkpoint resumes
// in memory (read whole, or through the store with --sketch-dir and no
// limit), and an in-memory run's checkpoint out of core, to the same
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
	kills := []struct {
		sig   syscall.Signal
		after int // checkpoints logged
	}{{syscall.SIGKILL, 1}, {syscall.SIGKILL, 2}, {syscall.SIGKILL, 3}, {syscall.SIGTERM, 2}}
	for i, k := range kills {
		ck = filepath.Join(dir, fmt.Sprintf("ck%d", i))
		// 300 K updates/s: the run takes about 1.15 s, a checkpoint every
		// 64 Ki updates (0.22 s); the signal comes as the k.after-th is
		// logged, while the next step is read and, from time to time,
		// written.
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
		for seen := 0; seen < k.after && sc.Scan(); {
			if strings.Contains(sc.Text(), "msg=checkpoint ") {
				seen++
			}
			log.WriteString(sc.Text() + "\n")
		}
		if err := cmd.Process.Signal(k.sig); err != nil {
			t.Fatal(err)
		}
		for sc.Scan() {
			log.WriteString(sc.Text() + "\n")
		}
		_ = cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); k.sig == syscall.SIGKILL && code != -1 ||
			k.sig == syscall.SIGTERM && (code != 1 || !strings.Contains(log.String(), "checkpoint taken")) {
			t.Fatalf("kill %d: exit %d after %v, want it killed, or after SIGTERM exit 1 with a stop checkpoint:\n%s", i, code, k.sig, log.String())
		}
		m, _, err := checkpoint.Read(ck)
		if err != nil {
			t.Fatalf("kill %d, %v after checkpoint %d: no valid checkpoint left: %v", i, k.sig, k.after, err)
		}
		if at = m.Updates; at == 0 || at >= sum.Updates {
			t.Fatalf("kill %d: checkpoint at %d of %d updates: the test needs one inside the stream", i, at, sum.Updates)
		}
		t.Logf("kill %d, %v after checkpoint %d: resuming from update %d of %d", i, k.sig, k.after, at, sum.Updates)
		out := resumeChecked(t, fmt.Sprintf("kill %d, resumed out of core from %d", i, at), path, ck, at, truth, ooc...)
		if !strings.Contains(out, `"out_of_core":true`) {
			t.Errorf("kill %d: the resumed run was not out of core: %s", i, out)
		}
		if left, err := os.ReadDir(skDir); err != nil || len(left) != 0 {
			t.Errorf("kill %d: --sketch-dir holds %d entries after the resumed run (%v), want none", i, len(left), err)
		}
	}
	resumeChecked(t, "out-of-core checkpoint resumed in memory", path, ck, at, truth)
	// With --sketch-dir and no limit the table fits: the store reads it
	// into memory from the checked file.
	if out := resumeChecked(t, "out-of-core checkpoint resumed in memory through the store", path, ck, at, truth, "--sketch-dir", skDir); strings.Contains(out, `"out_of_core":true`) {
		t.Errorf("resumed with no limit: out of core: %s", out)
	}

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
