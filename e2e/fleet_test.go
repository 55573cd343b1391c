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
}
