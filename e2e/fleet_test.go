package e2e

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sketchcc/internal/testwait"
	"slices"
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
	m.waitLog(`msg="worker connection lost.* worker=w1 `, 10*time.Second)
	t0 := time.Now()
	second := startWorker(t, addr, "--name", "w1")
	testwait.Until(t, 5*time.Second, 10*time.Millisecond, func() error {
		if n := m.count(`msg="worker connected" .*worker=w1`); n < 2 {
			return fmt.Errorf("w1 connected %d times", n)
		}
		return nil
	})
	t.Logf("restarted worker admitted after %v", time.Since(t0).Round(time.Millisecond))
	// The cluster declares the first process failed a few seconds after
	// the kill; that must not drop the second, and is no failure of w1:
	// info, not counted in workers_failed.
	m.waitLog(`level=INFO msg="worker failed; a newer process of it has replaced it" .*worker=w1 node=w1#`, 20*time.Second)
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
	if s.WorkersFailed != 0 || m.count(`level=WARN msg="worker failed"`) != 0 {
		t.Errorf("the replaced process counted as a failure (workers_failed %d) or warned of", s.WorkersFailed)
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
		return testwait.For(10*time.Second, 10*time.Millisecond, func() error {
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
		return testwait.For(20*time.Second, 10*time.Millisecond, func() error {
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

// TestWorkerSigtermInFinalFlush: SIGTERM to a worker in the main node's
// final flush, while the main node still has thousands of batches for it:
// the worker stops taking batches at once and exits within 2 s, without
// waiting for the main node to finish; the main node sketches what the
// worker did not answer, and the answer stays exact.
//
// The worker's link back to the main node carries 256 KiB/s (a proxy)
// and each delta is about 9 KB (49 columns), so the final flush would
// last a minute: the worker's delta writes wait on a full send queue and
// batches wait in its socket. A worker that went on reading the batches
// in its socket (as it did when SIGTERM only shut the read side) would
// take seconds to send their deltas.
func TestWorkerSigtermInFinalFlush(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	px := newProxy(t, proxyOptions{rate: 256 << 10})
	f := newFeeder(t, path)
	// Gutters that hold the whole stream: the final flush is every batch
	// (4,096, one per vertex), all of them in flight at once.
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--sketch-factor", "3", "--batch-factor", "1", "--credits", "4096", "--labels", labelsPath)
	w := startWorkerBehind(t, px, addr, "--name", "busy", "--metrics-listen", "127.0.0.1:0",
		"--shutdown-timeout", "500ms")
	metricsAddr := w.waitLog(`msg="metrics listening" addr=(\S+)`, time.Second)[1]
	f.wait(t) // the main node has read the whole stream: it is in its final flush
	read := func() (batches, bytes uint64, err error) {
		fams, _, err := tryScrape(metricsAddr)
		v, _ := value(fams, "sketchcc_batches_sketched_total")
		b, _ := value(fams, "sketchcc_wire_bytes_total", "direction", "received")
		return uint64(v), uint64(b), err
	}
	listen := w.waitLog(`msg="worker listening" .*listen=127\.0\.0\.1:(\d+)`, time.Second)[1]
	port, _ := strconv.Atoi(listen)
	// The worker is behind: its delta writes wait on a full send queue
	// and batches wait in its socket.
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
		n, _, err := read()
		if err != nil {
			return err
		}
		tx, rx, err := sockQueues(port)
		if err != nil || n < 100 || tx < 1<<20 || rx < 32<<10 {
			return fmt.Errorf("the worker has read %d batches; its socket holds %d bytes to send, %d to read (%v)",
				n, tx, rx, err)
		}
		return nil
	})
	// The worker reads in bursts, when its send queue has drained enough
	// for its writes to go on; the check above tends to see the end of
	// one. Past it, once two scrapes read the same, the frame bytes read
	// just before the signal.
	var atSignal uint64
	testwait.Until(t, 10*time.Second, 20*time.Millisecond, func() error {
		_, b, err := read()
		if err != nil {
			return err
		}
		if b != atSignal {
			atSignal = b
			return fmt.Errorf("the worker has read %d bytes, and reads on", b)
		}
		return nil
	})
	t0 := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// What the worker has read once the signal has been handled; its
	// delta writes keep it alive for a while (--shutdown-timeout).
	time.Sleep(50 * time.Millisecond)
	before, beforeBytes, err := read()
	if err != nil {
		t.Fatalf("the worker is gone %v after SIGTERM, before its blocked write could time out: %v",
			time.Since(t0).Round(time.Millisecond), err)
	}
	if code := w.wait(2 * time.Second); code != 0 {
		t.Errorf("worker exited %d", code)
	}
	exited := time.Since(t0)
	got := w.waitLog(`msg="stopped serving" .*batches=(\d+) .*bytes_received=(\d+)`, time.Second)
	after, _ := strconv.ParseUint(got[1], 10, 64)
	afterBytes, _ := strconv.ParseUint(got[2], 10, 64)
	s := finish(t, m)
	mainDone := time.Since(t0)
	checkTruth(t, s, path, labelsPath)
	checkCounters(t, s)
	if len(s.Workers) != 1 || len(s.Workers[0].Connections) == 0 {
		t.Fatalf("want one worker: %+v", s.Workers)
	}
	// The first connection carried the work; a re-dial after the worker
	// closed (when its last write ran out of time and it could not say
	// goodbye) is refused.
	c := s.Workers[0].Connections[0]
	t.Logf("worker exited %v after SIGTERM, the main node %v after the signal; the worker had read %d batches "+
		"50 ms after the signal, %d more (%d bytes) later; %d bytes of frames after the signal in all; the main node sent it %d, %d merged, %d handed back; %d of the "+
		"flush's batches sketched on the main node; connections %+v",
		exited.Round(time.Millisecond), mainDone.Round(time.Millisecond), before, after-before, afterBytes-beforeBytes, afterBytes-atSignal,
		c.Batches, c.DeltasMerged, c.BatchesResent, s.FallbackBatches, s.Workers[0].Connections)
	for _, later := range s.Workers[0].Connections[1:] {
		if later.Batches != 0 {
			t.Errorf("the main node sent batches to the worker after it left: %+v", later)
		}
	}
	// Stopped taking batches: once the signal was handled it read no
	// frame from its socket (what its goodbye leaves there is discarded
	// unread), while the main node still had most of the flush's 4,096
	// batches to sketch, and did so itself.
	// One read of its 64 KiB buffer may fall between the last scrape and
	// the signal.
	if afterBytes != beforeBytes || afterBytes-atSignal > 64<<10 {
		t.Errorf("the worker read %d bytes of frames after SIGTERM, %d once it had handled the signal",
			afterBytes-atSignal, afterBytes-beforeBytes)
	}
	if c.DeltasMerged > 2048 || s.FallbackBatches < 2048 {
		t.Errorf("the worker answered %d batches and the main node sketched %d: SIGTERM did not come "+
			"early in the flush", c.DeltasMerged, s.FallbackBatches)
	}
}

// TestWorkerBehindStoppedMain: a worker whose main node is stopped
// (SIGSTOP) while the worker owes it far more deltas than the socket
// buffers hold exits within 2 s of SIGTERM: its blocked write has a
// deadline. The main node, continued, still gives the exact answer.
func TestWorkerBehindStoppedMain(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.6)
	// 4,096 credits of 490-id batches at 49 columns: the deltas for the
	// batches in flight come to about 30 MB, well over what the loopback
	// socket buffers between the two processes take (about 10 MB).
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--sketch-factor", "3", "--batch-factor", "0.1", "--credits", "4096", "--metrics-listen", "127.0.0.1:0",
		"--labels", labelsPath)
	metricsAddr := m.waitLog(`msg="metrics listening" addr=(\S+)`, time.Second)[1]
	// The worker's own bound is --shutdown-timeout (1 s by default); half
	// of it leaves the 2 s bound room for a loaded test machine.
	w := startWorker(t, addr, "--name", "w1", "--shutdown-timeout", "500ms")
	listen := w.waitLog(`msg="worker listening" .*listen=127\.0\.0\.1:(\d+)`, time.Second)[1]
	port, _ := strconv.Atoi(listen)
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	// The worker stops answering; the main node fills its credits.
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
		fams, _ := scrape(t, metricsAddr)
		if v, _ := value(fams, "sketchcc_credits_in_use", "worker", "w1"); v < 4000 {
			return fmt.Errorf("%v of 4096 credits in use", v)
		}
		return nil
	})
	// The main node stops; the worker goes on, sketches the batches
	// waiting in its socket and blocks writing their deltas.
	if err := m.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := w.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	// Until its writes block: batches wait in its socket, over 1 MiB of
	// deltas wait in its send queue, and no byte has joined them for
	// 250 ms (unblocked, it writes a frame of 1 MiB every few ms).
	lastTx, since := -1, time.Now()
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
		tx, rx, err := sockQueues(port)
		if err != nil {
			return err
		}
		if tx != lastTx {
			lastTx, since = tx, time.Now()
		}
		if tx < 1<<20 || rx == 0 || time.Since(since) < 250*time.Millisecond {
			return fmt.Errorf("the worker's connection holds %d bytes to send, %d to read; the send queue last grew %v ago",
				tx, rx, time.Since(since).Round(time.Millisecond))
		}
		return nil
	})
	t0 := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := w.wait(2 * time.Second); code != 0 {
		t.Errorf("worker exited %d", code)
	}
	t.Logf("worker exited %v after SIGTERM", time.Since(t0).Round(time.Millisecond))
	// It was blocked writing deltas, and the deadline freed it.
	w.waitLog(`msg="cannot send deltas; closing the connection" .*i/o timeout`, time.Second)
	if err := m.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	f.run(func() error { return nil })
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, path, labelsPath)
	checkCounters(t, s)
}

// TestRedialAfterCut: the data connection to a worker that stays a member
// of the cluster is cut mid-frame (a proxy between the main node and the
// worker's data port closes it). The main node dials the worker again
// within its back-off, hands it batches again, and sends the batches the
// cut connection held elsewhere; the answer is exact.
func TestRedialAfterCut(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	px := newProxy(t, proxyOptions{cutAfter: 256 << 10})
	f := newFeeder(t, path, 0.5)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--batch-factor", "0.5", "--labels", labelsPath)
	w := startWorkerBehind(t, px, addr, "--name", "w1")
	// The first half of the stream goes through the cut (at 256 KiB of
	// batches, a few percent of it); the second half waits for the re-dial.
	var redial time.Duration
	f.run(func() error {
		return testwait.For(10*time.Second, 10*time.Millisecond, func() error {
			if n := m.count(`msg="worker connected" .*worker=w1`); n < 2 {
				return fmt.Errorf("w1 connected %d times; the proxy took %d connections", n, px.accepted())
			}
			redial = time.Since(px.cutTime())
			return nil
		})
	})
	f.wait(t) // fails the test if the re-dial did not come
	s := finish(t, m)
	checkTruth(t, s, path, labelsPath)
	checkCounters(t, s)
	if code := w.wait(30 * time.Second); code != 0 {
		t.Errorf("worker exited %d", code)
	}
	served := w.waitLog(`msg="stopped serving" .*batches=(\d+)`, time.Second)
	read, _ := strconv.ParseUint(served[1], 10, 64)
	if len(s.Workers) != 1 || len(s.Workers[0].Connections) < 2 {
		t.Fatalf("want one worker entry with a connection before and after the cut: %+v", s.Workers)
	}
	ws := s.Workers[0]
	cut, last := ws.Connections[0], ws.Connections[len(ws.Connections)-1]
	t.Logf("re-dialled %v after the cut; the cut connection: %d batches, %d merged, %d sent elsewhere (%s); "+
		"the last: %d batches, %d merged; the worker read %d batches in all; %d sketched on the main node",
		redial.Round(time.Millisecond), cut.Batches, cut.DeltasMerged, cut.BatchesResent, cut.Error,
		last.Batches, last.DeltasMerged, read, s.FallbackBatches)
	if redial > 5*time.Second {
		t.Errorf("re-dialled %v after the cut", redial)
	}
	if cut.BatchesResent == 0 || cut.Error == "" {
		t.Errorf("the cut connection's batches were not sent elsewhere: %+v", cut)
	}
	if last.Batches == 0 || last.DeltasMerged == 0 || last.Error != "" {
		t.Errorf("the worker got no batch after the cut: %+v", last)
	}
	// The worker's own count: batches beyond what the first connection
	// could have carried, on a second connection it served.
	if read <= cut.Batches || w.count(`msg="main node connected"`) < 2 {
		t.Errorf("the worker read %d batches, the cut connection carried %d; it logged %d connections",
			read, cut.Batches, w.count(`msg="main node connected"`))
	}
	if s.WorkersLeft != 0 || s.WorkersFailed != 0 {
		t.Errorf("the worker left the cluster (%d) or failed (%d): the cut is on the data plane only",
			s.WorkersLeft, s.WorkersFailed)
	}
}

// TestHeldBatch: a worker holds the batches of one frame of deltas (a
// proxy withholds the frame from the main node) while its other answers
// keep flowing on the same connection. Each held batch is sketched on the
// main node when its own deadline (--answer-timeout 2s) passes, not when
// the connection goes quiet, and the connection stays; the withheld
// deltas, put back later, are dropped as duplicates; the answer is exact.
func TestHeldBatch(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	const answer = 2 * time.Second
	px := newProxy(t, proxyOptions{hold: 2 * answer})
	// A stream of 5.5 s at 800,000 updates/s: traffic flows while the
	// frame is held and after it is put back.
	m, addr := startMain(t, nil, "--stream", path, "--rate-limit", "800000", "--expect-workers", "1",
		"--local-workers", "0", "--batch-factor", "0.1", "--answer-timeout", answer.String(), "--labels", labelsPath)
	startWorkerBehind(t, px, addr, "--name", "holder")
	var held time.Time
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
		if held, _, _, _ = px.holding(); held.IsZero() {
			return fmt.Errorf("no frame of deltas yet")
		}
		return nil
	})
	m.waitLog(`msg="batches not answered in time; sketching them on the main node" .*worker=holder`, answer+5*time.Second)
	late := time.Since(held)
	_, _, _, flowed := px.holding()
	s := finish(t, m)
	checkTruth(t, s, path, labelsPath)
	checkCounters(t, s)
	_, released, ids, _ := px.holding()
	if len(s.Workers) != 1 || len(s.Workers[0].Connections) != 1 {
		t.Fatalf("want one worker with one connection: %+v", s.Workers)
	}
	c := s.Workers[0].Connections[0]
	t.Logf("held %d deltas; sketched on the main node %v later, while %d other frames of deltas flowed; "+
		"connection: %d batches, %d merged, %d late, %d re-sent, %d duplicate deltas; put back: %v",
		ids, late.Round(time.Millisecond), flowed, c.Batches, c.DeltasMerged, c.BatchesLate, c.BatchesResent,
		c.Duplicates, !released.IsZero())
	// The deadline runs from the write of the batch's frame, a moment
	// before the proxy took its answer; the watch checks every 250 ms.
	if late > answer+1500*time.Millisecond {
		t.Errorf("the held batches were sketched %v after they were held, want about %v", late, answer)
	}
	if flowed == 0 {
		t.Errorf("no other answer flowed while the frame was held: the test shows nothing")
	}
	if ids < 1 || c.BatchesLate < uint64(ids) || s.FallbackBatches < uint64(ids) {
		t.Errorf("want the %d held batches late and sketched on the main node", ids)
	}
	if c.BatchesResent != 0 || c.Error != "" {
		t.Errorf("the connection was cut: %+v", c)
	}
	if !released.IsZero() && c.Duplicates < uint64(ids) {
		t.Errorf("the %d withheld deltas, put back, were not all dropped: %d duplicates", ids, c.Duplicates)
	}
}

// TestDuplicateName: a second live worker started under a name in use
// takes it; the first is told why with a stop frame and exits at once
// (not idle until the run ends), and the answer stays exact.
func TestDuplicateName(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--labels", labelsPath)
	first := startWorker(t, addr, "--name", "same")
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	second := startWorker(t, addr, "--name", "same")
	m.waitLog(`two workers started with one name`, 10*time.Second)
	if code := first.wait(5 * time.Second); code != 0 {
		t.Errorf("the first worker exited %d", code)
	}
	first.waitLog(`reason="the main node sent stop: another worker process took this worker's name`, time.Second)
	f.run(func() error { return nil })
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, path, labelsPath)
	checkCounters(t, s)
	if code := second.wait(30 * time.Second); code != 0 {
		t.Errorf("the second worker exited %d", code)
	}
}

// TestMainSigintStopsWorkers: SIGINT to a main node mid-stream, blocked
// reading a pipe that has gone quiet, ends its read and sends its workers
// stop, so that they exit at once (exit 0, saying the main node was
// interrupted) rather than when the gossip declares it gone, seconds
// later.
func TestMainSigintStopsWorkers(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	f := newFeeder(t, path, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0")
	w := startWorker(t, addr)
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	// The feeder holds the rest of the stream: the main node cannot end
	// before the signal, however fast it runs. Signalled once the first
	// 30% is read (at the default batch factor no gutter of kron12 is
	// full by then: the worker has no batch yet).
	f.waitHeld(t, 10*time.Second)
	t0 := time.Now()
	if err := m.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := m.wait(2 * time.Second); code == 0 {
		t.Errorf("main node exited 0 after SIGINT")
	}
	code := w.wait(2 * time.Second)
	t.Logf("worker exited %d, %v after the main node's SIGINT", code, time.Since(t0).Round(time.Millisecond))
	if code != 0 {
		t.Errorf("worker exited %d", code)
	}
	w.waitLog(`reason="the main node sent stop: main node interrupted"`, time.Second)
}

// TestMainSigintUnderBackPressure: SIGINT to a main node whose only
// worker is stopped (its reader blocked by back-pressure) exits within
// 1 s, printing no answer.
func TestMainSigintUnderBackPressure(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	f := newFeeder(t, path, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--batch-factor", "0.5", "--credits", "64", "--metrics-listen", "127.0.0.1:0")
	metricsAddr := m.waitLog(`msg="metrics listening" addr=(\S+)`, time.Second)[1]
	w := startWorker(t, addr)
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	if err := w.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	f.run(func() error { return nil })
	// The credits and the queue fill; the reader blocks: every credit is
	// in use, and the updates read stay short of the stream's and stop
	// growing.
	lastRead := -1.0
	testwait.Until(t, 10*time.Second, 50*time.Millisecond, func() error {
		fams, _, err := tryScrape(metricsAddr)
		if err != nil {
			return err
		}
		credits, _ := value(fams, "sketchcc_credits_in_use")
		read, _ := value(fams, "sketchcc_updates_read_total")
		total, _ := value(fams, "sketchcc_stream_updates")
		if credits < 64 || read >= total || read != lastRead {
			lastRead = read
			return fmt.Errorf("%v of 64 credits in use; %v of %v updates read, and growing", credits, read, total)
		}
		return nil
	})
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

// TestWorkerSmallFrames: a worker started with --max-frame-bytes 65536
// gets frames that fit (the handshake tells the main node its limit) and
// the exact answer comes back over one connection that never drops; a
// main node whose batches cannot fit that limit is refused on both sides
// with the flag to raise, and --expect-workers fails naming it.
func TestWorkerSmallFrames(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	t.Run("fits", func(t *testing.T) {
		labelsPath := filepath.Join(t.TempDir(), "labels")
		m, addr := startMain(t, nil, "--stream", path, "--expect-workers", "1", "--local-workers", "0",
			"--labels", labelsPath)
		w := startWorker(t, addr, "--name", "small", "--max-frame-bytes", "65536")
		s := finish(t, m)
		checkTruth(t, s, path, labelsPath)
		checkCounters(t, s)
		m.waitLog(`msg="worker connected" .*worker=small .*batch_frame_bytes=65536`, time.Second)
		if len(s.Workers) != 1 || len(s.Workers[0].Connections) != 1 || s.Workers[0].LastError != "" ||
			s.BatchesResent != 0 || s.Workers[0].DeltasMerged == 0 {
			t.Errorf("want one connection that carried the run and never dropped: %+v", s.Workers)
		}
		if code := w.wait(30 * time.Second); code != 0 {
			t.Errorf("worker exited %d", code)
		}
		if n := w.count(`level=(WARN|ERROR)`); n > 0 {
			t.Errorf("the worker logged %d warnings or errors", n)
		}
	})
	t.Run("unmeetable", func(t *testing.T) {
		// Batches of up to 8 × 1,732 ids: the largest takes 1 + 5 ×
		// 13,856 bytes on the wire.
		m, addr := startMain(t, nil, "--stream", path, "--expect-workers", "1", "--local-workers", "0",
			"--batch-factor", "8", "--wait-timeout", "3s")
		batch := m.waitLog(`msg=ingesting .*batch_updates=(\d+)`, time.Second)[1]
		n, _ := strconv.Atoi(batch)
		w := startWorker(t, addr, "--name", "small", "--max-frame-bytes", "65536")
		why := fmt.Sprintf(`the worker reads frames of at most 65536 bytes \(its MaxFrameBytes\), and a batch of %d `+
			`updates needs %d; raise the worker's MaxFrameBytes to at least %[2]d`, n, 1+5*n)
		w.waitLog(`level=WARN msg="refusing a connection" .*`+why, 5*time.Second)
		m.waitLog(`level=WARN msg="worker refused" .*worker=small .*`+why, time.Second)
		if code := m.wait(10 * time.Second); code != 1 {
			t.Fatalf("main-node exited %d, want 1", code)
		}
		m.waitLog(`0 of 1 workers connected; seen: small: .*raise the worker's MaxFrameBytes to at least `+
			strconv.Itoa(1+5*n), time.Second)
	})
}

// TestBitFlipProxy: a proxy on the data plane flips one bit in the payload
// of a frame of batches on the first connection and of deltas on the
// second, past a handshake that went well, under a cluster key (AES-GCM
// tags) and without one (CRC-32C). The worker drops the first connection
// and counts the frame, the main node the second; each time the main
// node dials the worker again and sends the connection's batches again.
// The answer is exact and the counters add up.
func TestBitFlipProxy(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	for _, keyed := range []bool{true, false} {
		name, trailer := "no-key", 4
		if keyed {
			name, trailer = "key", 16
		}
		t.Run(name, func(t *testing.T) {
			var keyArgs []string
			if keyed {
				keyArgs = []string{"--cluster-key-file", keyFile(t)}
			}
			labelsPath := filepath.Join(t.TempDir(), "labels")
			px := newProxy(t, proxyOptions{flipTrailer: trailer})
			f := newFeeder(t, path, 0.3, 0.6)
			m, addr := startMain(t, f.r, append([]string{"--stream", "/dev/stdin", "--expect-workers", "1",
				"--local-workers", "0", "--batch-factor", "0.5", "--labels", labelsPath}, keyArgs...)...)
			w := startWorkerBehind(t, px, addr, append([]string{"--name", "w1"}, keyArgs...)...)
			// Each pause waits for a flip and the re-dial after it, so
			// that the next part of the stream has a connection to
			// cross: the first breaks on batches, the second on deltas.
			for conns := 2; conns <= 3; conns++ {
				f.run(func() error {
					return testwait.For(20*time.Second, 10*time.Millisecond, func() error {
						if n := m.count(`msg="worker connected" .*worker=w1`); n < conns || len(px.flips()) < conns-1 {
							return fmt.Errorf("w1 connected %d times; the proxy flipped %v", n, px.flips())
						}
						return nil
					})
				})
			}
			f.wait(t)
			s := finish(t, m)
			checkTruth(t, s, path, labelsPath)
			checkCounters(t, s)
			if code := w.wait(30 * time.Second); code != 0 {
				t.Errorf("worker exited %d", code)
			}
			if got := px.flips(); !slices.Equal(got, []string{"batches", "deltas"}) {
				t.Fatalf("the proxy flipped %v, want a frame of batches, then of deltas", got)
			}
			if len(s.Workers) != 1 || len(s.Workers[0].Connections) < 3 {
				t.Fatalf("want one worker entry with three connections or more: %+v", s.Workers)
			}
			c := s.Workers[0].Connections
			if c[0].BatchesResent == 0 || c[1].BatchesResent == 0 {
				t.Errorf("the broken connections' batches were not sent again: %+v, %+v", c[0], c[1])
			}
			if c[1].BadFrames != 1 || !strings.Contains(c[1].Error, "integrity check") || s.BadFrames != 1 ||
				s.Workers[0].BadFrames != 1 {
				t.Errorf("the main node did not count the flipped frame of deltas once: total %d, worker %d, connection %+v",
					s.BadFrames, s.Workers[0].BadFrames, c[1])
			}
			if last := c[len(c)-1]; last.DeltasMerged == 0 || last.Error != "" || last.BadFrames != 0 {
				t.Errorf("the last connection merged nothing or broke: %+v", last)
			}
			served := w.waitLog(`msg="stopped serving" .*bad_frames=(\d+)`, time.Second)
			if served[1] != "1" {
				t.Errorf("the worker counted %s bad frames, want the frame of batches flipped", served[1])
			}
			if w.count(`frame failed its integrity check: batches frame`) != 1 {
				t.Errorf("the worker did not log the flipped frame of batches:\n%s", w.log())
			}
		})
	}
}
