package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// count returns how many of p's stderr lines match re.
func (p *proc) count(re string) int {
	rx := regexp.MustCompile(re)
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.stderr {
		if rx.MatchString(l) {
			n++
		}
	}
	return n
}

// TestRestartSameName: a worker SIGKILLed and restarted at once under the
// same --name (a service manager restarting a crashed worker) is admitted
// within 5 s and gets batches, also after the cluster has declared its
// first process failed.
func TestRestartSameName(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--batch-factor", "0.5", "--labels", labelsPath)
	first := startWorker(t, addr, "--name", "w1")
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-first.done
	time.Sleep(500 * time.Millisecond)
	t0 := time.Now()
	second := startWorker(t, addr, "--name", "w1")
	checkFor(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := m.count(`msg="worker connected" .*worker=w1`); n < 2 {
			return fmt.Errorf("w1 connected %d times", n)
		}
		return nil
	})
	t.Logf("restarted worker admitted after %v", time.Since(t0).Round(time.Millisecond))
	// The cluster declares the first process failed a few seconds after
	// the kill; that must not drop the second.
	m.waitLog(`msg="worker failed.* worker=w1 node=w1#`, 20*time.Second)
	f.run(func() error { return nil })
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, path, labelsPath)
	if code := second.wait(30 * time.Second); code != 0 {
		t.Fatalf("restarted worker exited %d", code)
	}
	got := second.waitLog(`msg="stopped serving" .*batches=(\d+)`, time.Second)
	if n, _ := strconv.Atoi(got[1]); n == 0 {
		t.Errorf("the restarted worker sketched no batch")
	}
	if strings.Contains(m.log(), "Conflicting address") {
		t.Errorf("memberlist saw a name conflict")
	}
	checkCounters(t, s)
	// One entry for w1 with a connection per process (and the failed
	// re-dials of the killed one's address, refused).
	incs := map[uint64]bool{}
	var last uint64
	if len(s.Workers) == 1 {
		for _, c := range s.Workers[0].Connections {
			incs[c.Incarnation] = true
			last = c.Batches
		}
	}
	if len(incs) != 2 || last == 0 {
		t.Errorf("want one entry for w1 with a working connection per process: %+v", s.Workers)
	}
}

// TestLeaveAndFailure: a worker SIGTERMed mid-stream leaves (info, its
// unanswered batches handed back), one SIGKILLed fails (warn), the
// counters say which; at the normal end nobody logs an error or a lost
// connection, and the workers exit at once.
func TestLeaveAndFailure(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.3, 0.6)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "3", "--local-workers", "0",
		"--batch-factor", "0.5", "--labels", labelsPath)
	leaver := startWorker(t, addr, "--name", "leaver")
	victim := startWorker(t, addr, "--name", "victim")
	survivor := startWorker(t, addr, "--name", "survivor")
	f.run(func() error {
		if err := leaver.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return err
		}
		<-leaver.done
		return poll(10*time.Second, func() error {
			if m.count(`msg="worker left the cluster" .*worker=leaver`) == 0 {
				return fmt.Errorf("the main node has not seen the leaver leave")
			}
			return nil
		})
	})
	f.run(func() error {
		if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			return err
		}
		<-victim.done
		return poll(20*time.Second, func() error {
			if m.count(`level=WARN msg="worker failed" .*worker=victim`) == 0 {
				return fmt.Errorf("the main node has not declared the victim failed")
			}
			return nil
		})
	})
	s := finish(t, m)
	end := time.Now()
	f.wait(t)
	checkTruth(t, s, path, labelsPath)
	if s.WorkersLeft != 1 || s.WorkersFailed != 1 {
		t.Errorf("%d workers left, %d failed; want 1 and 1", s.WorkersLeft, s.WorkersFailed)
	}
	if code := survivor.wait(time.Second); code != 0 {
		t.Errorf("survivor exited %d", code)
	}
	t.Logf("survivor exited %v after the main node", time.Since(end).Round(time.Millisecond))
	if code := leaver.wait(time.Second); code != 0 {
		t.Errorf("leaver exited %d", code)
	}
	if n := m.count(`level=(WARN|ERROR).*worker=leaver`); n > 0 {
		t.Errorf("the main node logged the leaver's departure as trouble (%d lines)", n)
	}
	if n := m.count(`level=(WARN|ERROR)`) - m.count(`level=WARN.*worker=victim`); n > 0 {
		t.Errorf("the main node logged %d warnings or errors besides the victim's", n)
	}
	for _, w := range []*proc{leaver, survivor} {
		if n := w.count(`level=(WARN|ERROR)`); n > 0 {
			t.Errorf("%s logged %d warnings or errors", w.name, n)
		}
	}
}

// TestWorkerSigtermInFinalFlush: SIGTERM to a worker once the whole
// stream has been handed to the main node (it is in its final flush):
// the worker stops taking batches at once and exits within 2 s; the
// answer stays exact.
func TestWorkerSigtermInFinalFlush(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.5)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "2", "--local-workers", "0",
		"--batch-factor", "0.5", "--labels", labelsPath)
	w := startWorker(t, addr, "--name", "busy")
	startWorker(t, addr, "--name", "other")
	f.run(func() error { return nil })
	f.wait(t)
	t0 := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(2 * time.Second); code != 0 {
		t.Errorf("worker exited %d", code)
	}
	t.Logf("worker exited %v after SIGTERM", time.Since(t0).Round(time.Millisecond))
	s := finish(t, m)
	checkTruth(t, s, path, labelsPath)
}

// TestWorkerBehindStoppedMain: a worker whose main node is stopped
// (SIGSTOP) exits within 2 s of SIGTERM: no write waits for ever. The
// main node, continued, still gives the exact answer.
func TestWorkerBehindStoppedMain(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.3)
	// Small batches and many credits: the worker owes the main node far
	// more deltas (4,096 × 7 KB) than the socket buffers hold.
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--batch-factor", "0.05", "--credits", "4096", "--labels", labelsPath)
	// The worker's own bound is --shutdown-timeout (1 s by default); half
	// of it leaves the 2 s bound room for a loaded test machine.
	w := startWorker(t, addr, "--shutdown-timeout", "500ms")
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	time.Sleep(500 * time.Millisecond) // the main node ships batches
	if err := m.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the worker's writes block
	t0 := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(2 * time.Second); code != 0 {
		t.Errorf("worker exited %d", code)
	}
	t.Logf("worker exited %v after SIGTERM", time.Since(t0).Round(time.Millisecond))
	if err := m.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.run(func() error { return nil })
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, path, labelsPath)
}

// TestMainSigintUnderBackPressure: SIGINT to a main node whose only
// worker is stopped (its reader blocked by back-pressure) exits within
// 1 s, printing no answer.
func TestMainSigintUnderBackPressure(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	f := newFeeder(t, path, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--batch-factor", "0.5")
	w := startWorker(t, addr)
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	f.run(func() error { return nil })
	time.Sleep(time.Second) // the credits and the queue fill; the reader blocks
	t0 := time.Now()
	if err := m.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code := m.wait(time.Second)
	t.Logf("main node exited %d, %v after SIGINT", code, time.Since(t0).Round(time.Millisecond))
	if code == 0 {
		t.Errorf("main node exited 0 after SIGINT")
	}
	if m.stdout.Len() != 0 {
		t.Errorf("main node printed an answer: %q", m.stdout.String())
	}
	w.cmd.Process.Signal(syscall.SIGCONT)
}
