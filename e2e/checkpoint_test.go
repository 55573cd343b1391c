package e2e

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCheckpointKillResume SIGKILLs a main node at 5 random points of a
// kron12 run that checkpoints every second (read at 1.2 M updates/s by
// --rate-limit, so the run lasts about 3.7 s and takes 3 checkpoints), resumes each with --resume,
// and checks that the labels equal those of an uninterrupted run and the
// union-find's; then a checkpoint with one byte flipped, and one resumed on
// another stream, are refused with the file and the fault named.
func TestCheckpointKillResume(t *testing.T) {
	skipShort(t)
	kron := kron12(t)
	want, comps := truth(t, kron)
	work := t.TempDir()
	ref := filepath.Join(work, "ref.labels")
	m := start(t, "main-node", nil, "--stream", kron, "--queries", "3", "--labels", ref, "--json", "--progress", "never")
	if s := finish(t, m); s.Components != comps {
		t.Fatalf("uninterrupted run: %d components, union-find %d", s.Components, comps)
	}
	checkLabels(t, ref, want)
	refBytes, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}

	const rate = 1_200_000 // --rate-limit, updates per second
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	t.Logf("kill points drawn with seed %d", seed)
	var dir string
	for i := range 5 {
		dir = filepath.Join(work, "cp"+string(rune('0'+i)))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		m := start(t, "main-node", nil, "--stream", kron, "--queries", "3", "--checkpoint-dir", dir,
			"--checkpoint-every", "1s", "--rate-limit", strconv.Itoa(rate), "--log-level", "info", "--progress", "never")
		// Kill at a random point after the first checkpoint, before the
		// end. The pace runs from the first read, which follows the
		// "ingesting" line, and a read that fell behind catches up: the
		// last read (of at most a tenth of a second's updates) comes no
		// sooner than its share of the rate after that line. Slowed by
		// a loaded machine, the first checkpoint came so late that a
		// fixed 2.2 s window outlived the run; the window ends 400 ms
		// before that earliest end instead (a loaded sleep overshoots).
		ingesting := m.waitLog(`^time=(\S+) level=INFO msg=ingesting .* updates=(\d+) `, 20*time.Second)
		began, err := time.Parse(time.RFC3339Nano, ingesting[1])
		if err != nil {
			t.Fatalf("the time of %q: %v", ingesting[0], err)
		}
		updates, _ := strconv.Atoi(ingesting[2])
		earliestEnd := began.Add(time.Duration(updates-rate/10) * time.Second / rate)
		m.waitLog(`msg=checkpoint `, 20*time.Second)
		window := time.Until(earliestEnd) - 400*time.Millisecond
		time.Sleep(time.Duration(rng.Int64N(int64(max(window, 1)))))
		killedAt := time.Since(began)
		if err := m.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
		if code := m.wait(10 * time.Second); code != -1 {
			t.Fatalf("kill %d: main-node exited %d before the kill (the run ended too soon; the window after the first checkpoint was %v):\n%s",
				i, code, window, m.log())
		}
		taken := strings.Count(m.log(), "msg=checkpoint ")
		out := filepath.Join(work, "resumed"+string(rune('0'+i))+".labels")
		r := start(t, "main-node", nil, "--stream", kron, "--queries", "3", "--resume", dir, "--labels", out,
			"--json", "--log-level", "info", "--progress", "never")
		s := finish(t, r)
		from := r.waitLog(`msg=resuming .* updates=(\d+)`, time.Second)
		t.Logf("kill %d: killed %v into the stream (it ends %v in at the earliest) after %d checkpoints, resumed from update %s, %d components",
			i, killedAt.Round(time.Millisecond), earliestEnd.Sub(began), taken, from[1], s.Components)
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, refBytes) {
			t.Errorf("kill %d: labels after resuming from update %s differ from the uninterrupted run's", i, from[1])
		}
	}

	// One flipped byte in the middle of the last checkpoint's sketches.
	path := filepath.Join(dir, "checkpoint.skcc")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x10
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	refused := func(stream, wantMsg string) {
		t.Helper()
		r := start(t, "main-node", nil, "--stream", stream, "--resume", dir, "--progress", "never")
		if code := r.wait(time.Minute); code == 0 {
			t.Fatalf("--resume of %s on %s: exit 0, want a refusal", path, stream)
		}
		if l := r.log(); !strings.Contains(l, path) || !strings.Contains(l, wantMsg) || r.stdout.Len() > 0 {
			t.Fatalf("--resume of %s on %s: want an error naming the file and %q, no answer; got stderr %q, stdout %q",
				path, stream, wantMsg, l, r.stdout.String())
		}
	}
	refused(kron, "checksum")
	data[len(data)/2] ^= 0x10
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	refused(multiples, "taken on a stream of")
}
