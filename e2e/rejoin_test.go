package e2e

import (
	"fmt"
	"path/filepath"
	"sketchcc/internal/testwait"
	"syscall"
	"testing"
	"time"
)

// workerBatches returns a func that reads the batches a worker has
// sketched from its --metrics-listen endpoint.
func workerBatches(w *proc) func() (uint64, error) {
	addr := w.waitLog(`msg="metrics listening" addr=(\S+)`, time.Second)[1]
	return func() (uint64, error) {
		fams, _, err := tryScrape(addr)
		if err != nil {
			return 0, err
		}
		v, ok := value(fams, "sketchcc_batches_sketched_total")
		if !ok {
			return 0, fmt.Errorf("no sketchcc_batches_sketched_total at %s", addr)
		}
		return uint64(v), nil
	}
}

// TestMainPausedWorkerRejoins: a main node paused (SIGSTOP) long enough
// for the gossip to declare it dead, then continued. The worker keeps
// serving and rejoins the cluster instead of exiting, sketches batches
// again after the pause, and exits 0 when the main node sends stop at the
// end; the answer is exact.
func TestMainPausedWorkerRejoins(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	// 4.4 M updates at 400,000 a second: about 11 s of stream, so that
	// much of it comes after the pause (declared dead 4-5 s in, rejoined
	// within milliseconds of SIGCONT; the rate catches up then).
	m, addr := startMain(t, nil, "--stream", path, "--rate-limit", "400000", "--expect-workers", "1",
		"--local-workers", "0", "--batch-factor", "0.5", "--labels", labelsPath)
	w := startWorker(t, addr, "--name", "w1", "--metrics-listen", "127.0.0.1:0")
	batches := workerBatches(w)
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
		if n, err := batches(); err != nil || n == 0 {
			return fmt.Errorf("the worker has sketched %d batches (%v)", n, err)
		}
		return nil
	})
	if err := m.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.cmd.Process.Signal(syscall.SIGCONT) })
	t0 := time.Now()
	// memberlist's local timings: a probe a second and a suspicion of
	// 3 s; a few seconds more on a loaded machine.
	w.waitLog(`the cluster declared the main node dead`, 20*time.Second)
	declared := time.Since(t0)
	before, err := batches()
	if err != nil {
		t.Fatalf("the worker is gone once the main node was declared dead: %v", err)
	}
	if err := m.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	w.waitLog(`msg="rejoined the cluster"`, 20*time.Second)
	rejoined := time.Since(t1)
	var after uint64
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
		if after, err = batches(); err != nil || after <= before {
			return fmt.Errorf("the worker has sketched %d batches, %d when the main node was declared dead (%v)",
				after, before, err)
		}
		return nil
	})
	s := finish(t, m)
	checkTruth(t, s, path, labelsPath)
	checkCounters(t, s)
	if code := w.wait(10 * time.Second); code != 0 {
		t.Errorf("worker exited %d", code)
	}
	w.waitLog(`msg="stopped serving" reason="the main node sent stop: main node done"`, time.Second)
	t.Logf("declared dead %v after SIGSTOP; rejoined %v after SIGCONT; %d batches sketched before the pause, "+
		"%d soon after it; workers %+v", declared.Round(time.Millisecond), rejoined.Round(time.Millisecond),
		before, after, s.Workers)
	if len(s.Workers) != 1 || s.Workers[0].Batches == 0 {
		t.Fatalf("want one worker that sketched batches: %+v", s.Workers)
	}
	if last := s.Workers[0].Connections[len(s.Workers[0].Connections)-1]; last.DeltasMerged == 0 || last.Error != "" {
		t.Errorf("the worker's last connection merged nothing or failed: %+v", last)
	}
	if s.WorkersFailed != 0 || s.WorkersLeft != 0 {
		t.Errorf("%d workers failed, %d left: the worker never went away", s.WorkersFailed, s.WorkersLeft)
	}
}
