// Package e2e runs the real main-node and worker binaries on loopback:
// the cluster must give exactly the components of a union-find over the
// final edge set, whatever happens to the workers.
package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sketchcc/internal/testwait"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sketchcc/distributor"
	"sketchcc/internal/testgraph"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: skipped in -short mode")
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "sketchcc-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = dir
	cmd := exec.Command("go", "build", "-o", dir+"/", "sketchcc/cmd/main-node", "sketchcc/cmd/worker", "sketchcc/cmd/streamtool")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: cannot build the binaries:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("process-level test: skipped in -short mode")
	}
}

const multiples = "../testdata/multiples_graph_1024_stream.data"

var (
	kronOnce sync.Once
	kronPath string
	kronErr  error
)

// kron12 generates a Kronecker stream of scale 12 (4.4 M updates) once.
func kron12(t *testing.T) string {
	t.Helper()
	kronOnce.Do(func() {
		kronPath = filepath.Join(bin, "kron12.bin")
		out, err := exec.Command(filepath.Join(bin, "streamtool"), "gen", "kron", "--scale", "12", "--seed", "3",
			"--no-cum", "--log-level", "warn", "-o", kronPath).CombinedOutput()
		if err != nil {
			kronErr = fmt.Errorf("streamtool gen kron: %v\n%s", err, out)
		}
	})
	if kronErr != nil {
		t.Fatal(kronErr)
	}
	return kronPath
}

// as733 is the as-733 snapshot series as one stream of differences
// (testdata/README.md).
const as733 = "../testdata/as733.bin"

// as733Boundaries returns the update counts at which the as-733 snapshots
// end, but the last, comma-separated, checking the components union-find
// finds there against the data README's.
func as733Boundaries(t *testing.T) string {
	known := testgraph.As733Components
	var summary struct {
		Snapshots []struct {
			AfterUpdates uint64 `json:"after_updates"`
		} `json:"snapshots"`
	}
	b, err := os.ReadFile("../testdata/as733.json")
	if err == nil {
		err = json.Unmarshal(b, &summary)
	}
	if err != nil || len(summary.Snapshots) != len(known) {
		t.Fatalf("as733.json: %v, %d snapshots, want %d", err, len(summary.Snapshots), len(known))
	}
	var at []string
	for i, s := range summary.Snapshots {
		if _, n := truthAfter(t, as733, s.AfterUpdates); n != known[i] {
			t.Fatalf("as733 snapshot %d: union-find %d components, data README %d", i, n, known[i])
		}
		if i < len(known)-1 {
			at = append(at, strconv.FormatUint(s.AfterUpdates, 10))
		}
	}
	return strings.Join(at, ",")
}

// erdos returns an Erdős–Rényi stream with deletions (2,000 vertices,
// density 0.01, 33,041 updates), made once per test binary.
func erdos(t *testing.T) string {
	t.Helper()
	erdosOnce.Do(func() {
		erdosPath = filepath.Join(bin, "erdos.bin")
		out, err := exec.Command(filepath.Join(bin, "streamtool"), "gen", "erdos", "--vertices", "2000", "--density", "0.01",
			"--seed", "5", "--no-cum", "--log-level", "warn", "-o", erdosPath).CombinedOutput()
		if err != nil {
			erdosErr = fmt.Errorf("streamtool gen erdos: %v\n%s", err, out)
		}
	})
	if erdosErr != nil {
		t.Fatal(erdosErr)
	}
	return erdosPath
}

var (
	erdosOnce sync.Once
	erdosPath string
	erdosErr  error
)

// keyFile writes a fresh cluster key and returns its path.
func keyFile(t *testing.T) string {
	b := make([]byte, 32)
	rand.Read(b)
	path := filepath.Join(t.TempDir(), "cluster.key")
	if err := os.WriteFile(path, []byte(base64.StdEncoding.EncodeToString(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// feeder writes a stream to a main node's stdin, in parts: up to each
// share of its bytes in turn, then it waits for the test to call run (the
// test starts the main node meanwhile: it reads the header before logging
// its address) and calls the func given before it writes the next part;
// it closes the pipe at the end. The pipe is an OS pipe handed to the
// main node as it is, so that a main node that exits while the feeder
// holds the rest of the stream is seen to exit then.
type feeder struct {
	r      *os.File
	resume chan func() error
	// held receives once per part before the last, when the pipe has
	// taken the part (the main node has read all of it but what the
	// pipe buffers) and the feeder waits for run.
	held chan struct{}
	done chan error
}

func newFeeder(t *testing.T, path string, shares ...float64) *feeder {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	f := &feeder{r: r, resume: make(chan func() error, len(shares)), held: make(chan struct{}, len(shares)),
		done: make(chan error, 1)}
	go func() {
		err := func() error {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			off := 0
			for _, share := range append(shares, 1) {
				cut := int(float64(len(b)) * share)
				if _, err := w.Write(b[off:cut]); err != nil {
					return err
				}
				off = cut
				if cut == len(b) {
					break
				}
				f.held <- struct{}{}
				if err := (<-f.resume)(); err != nil {
					return err
				}
			}
			return nil
		}()
		w.Close()
		f.done <- err
	}()
	t.Cleanup(func() {
		r.Close()
		for range shares {
			select {
			case f.resume <- func() error { return io.ErrClosedPipe }:
			default:
			}
		}
	})
	return f
}

// stopThenKill stops victim (SIGSTOP) at the feeder's first share and
// kills it (SIGKILL) at its second, each once the main node has read the
// part before it when held is set.
func (f *feeder) stopThenKill(t *testing.T, victim *proc, held bool) {
	if held {
		f.waitHeld(t, time.Minute)
	}
	f.run(func() error { return victim.cmd.Process.Signal(syscall.SIGSTOP) })
	if held {
		f.waitHeld(t, time.Minute)
	}
	f.run(func() error {
		err := victim.cmd.Process.Signal(syscall.SIGKILL)
		<-victim.done
		return err
	})
}

// run lets the feeder go on: it calls pause and writes the rest.
func (f *feeder) run(pause func() error) { f.resume <- pause }

// waitHeld waits until the feeder holds the stream after its next part,
// for at most timeout.
func (f *feeder) waitHeld(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-f.held:
	case err := <-f.done:
		f.done <- err // for wait
		t.Fatalf("the feeder ended (%v) without holding the stream", err)
	case <-time.After(timeout):
		t.Fatalf("after %v, the feeder has not written its part of the stream: the main node does not read it", timeout)
	}
}

// wait returns the feeder's error.
func (f *feeder) wait(t *testing.T) {
	t.Helper()
	if err := <-f.done; err != nil {
		t.Error("feeding the stream:", err)
	}
}

func TestTwoWorkers(t *testing.T) {
	skipShort(t)
	for _, tc := range []struct {
		name   string
		stream func(t *testing.T) string
		args   []string
	}{
		{"multiples", func(*testing.T) string { return multiples },
			[]string{"--batch-factor", "0.05", "--query-at", "852,1704,2556,3408,4260,5112,5964,6816,7668"}},
		{"kron12", kron12, []string{"--batch-factor", "0.5", "--queries", "8"}},
		// Its batches are small: ship them all, so that the workers sketch.
		{"erdos-deletions", erdos, []string{"--batch-factor", "0.02", "--local-cutoff", "-1", "--queries", "12"}},
		// A query at every snapshot boundary; the data README's counts are
		// checked against union-find below.
		{"as733-snapshots", func(*testing.T) string { return as733 },
			[]string{"--batch-factor", "0.2", "--query-at", as733Boundaries(t)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := tc.stream(t)
			labelsPath := filepath.Join(t.TempDir(), "labels")
			key := keyFile(t)
			args := append([]string{"--stream", path, "--expect-workers", "2", "--local-workers", "0",
				"--cluster-key-file", key, "--labels", labelsPath}, tc.args...)
			m, addr := startMain(t, nil, args...)
			w1 := startWorker(t, addr, "--cluster-key-file", key)
			w2 := startWorker(t, addr, "--cluster-key-file", key)
			s := finish(t, m)
			checkTruth(t, s, path, labelsPath)
			// Every answer during the stream is union-find's over its prefix.
			for _, q := range s.Queries {
				if _, want := truthAfter(t, path, q.AfterUpdates); q.Components != want {
					t.Errorf("after %d updates: %d components, union-find %d", q.AfterUpdates, q.Components, want)
				}
			}
			if len(s.Workers) != 2 || s.Workers[0].DeltasMerged == 0 || s.Workers[1].DeltasMerged == 0 {
				t.Errorf("both workers should have merged deltas: %+v", s.Workers)
			}
			if s.FallbackBatches != 0 || s.BatchesResent != 0 {
				t.Errorf("fallback %d, re-sent %d batches with two healthy workers", s.FallbackBatches, s.BatchesResent)
			}
			for _, w := range []*proc{w1, w2} {
				if code := w.wait(30 * time.Second); code != 0 {
					t.Errorf("worker exited %d after stop", code)
				}
				w.waitLog(`reason="the main node sent stop: main node done"`, time.Second)
			}
			t.Logf("%d components; %.1f network bytes per update; %d remote, %d cut-off batches",
				s.Components, s.NetworkBytesPerUpdate, s.RemoteBatches, s.LocalCutoffBatches)
		})
	}
}

// TestLateWorker: a worker that joins after ingestion began gets batches.
func TestLateWorker(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.4)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--batch-factor", "0.5", "--labels", labelsPath)
	startWorker(t, addr)
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	late := startWorker(t, addr) // ingestion has begun: 40% of the stream is in the pipe
	f.run(func() error {
		return testwait.For(10*time.Second, 10*time.Millisecond, func() error {
			if n := strings.Count(m.log(), `msg="worker connected"`); n < 2 {
				return fmt.Errorf("%d workers connected", n)
			}
			return nil
		})
	})
	_ = late
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, path, labelsPath)
	if len(s.Workers) != 2 || s.Workers[1].DeltasMerged == 0 {
		t.Errorf("the late worker merged no delta: %+v", s.Workers)
	}
}

// TestWorkerKilled: SIGKILL to a worker mid-stream loses nothing.
func TestWorkerKilled(t *testing.T) {
	skipShort(t)
	s, _ := killOneOfTwo(t, "--batch-factor", "0.5")
	t.Logf("re-sent %d batches: %+v", s.BatchesResent, s.Workers)
}

// killOneOfTwo runs kron12 through a main node with args and two workers,
// of which one is stopped (SIGSTOP) at 30% of the stream, so that it
// answers nothing more while the main node fills its credits with batches
// from the next 30% (some 2,800 batches to share), and killed at 60% with
// those batches unanswered. It checks that the answer is exact, that the
// victim's batches were re-sent and that the survivor worked, and returns
// the summary and the main node.
func killOneOfTwo(t *testing.T, args ...string) (summary, *proc) {
	t.Helper()
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.3, 0.6)
	m, addr := startMain(t, f.r, append([]string{"--stream", "/dev/stdin", "--expect-workers", "2",
		"--local-workers", "0", "--labels", labelsPath}, args...)...)
	victim := startWorker(t, addr, "--name", "victim")
	startWorker(t, addr, "--name", "survivor")
	f.stopThenKill(t, victim, false)
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, path, labelsPath)
	var killed, alive bool
	for _, w := range s.Workers {
		switch w.Name {
		case "victim":
			killed = w.BatchesResent > 0 && w.LastError != ""
		case "survivor":
			alive = w.DeltasMerged > 0 && w.BatchesResent == 0
		}
	}
	if !killed || !alive || s.BatchesResent == 0 {
		t.Errorf("want the victim's batches re-sent and the survivor working: %+v", s)
	}
	checkCounters(t, s)
	return s, m
}

// TestWorkerKilledReaders: with 2 and 4 parallel readers on a stream
// file, a worker stopped as soon as it connects (its batches unanswered)
// and then SIGKILLed, once it holds all its credits, loses nothing: its
// batches are re-sent and the answer is exact.
func TestWorkerKilledReaders(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	const credits = 32
	for _, readers := range []string{"2", "4"} {
		t.Run("readers="+readers, func(t *testing.T) {
			labelsPath := filepath.Join(t.TempDir(), "labels")
			m, addr := startMain(t, nil, "--stream", path, "--readers", readers, "--expect-workers", "2",
				"--local-workers", "0", "--batch-factor", "0.5", "--labels", labelsPath,
				"--credits", strconv.Itoa(credits), "--metrics-listen", "127.0.0.1:0")
			metrics := m.waitLog(`msg="metrics listening" addr=(\S+)`, 10*time.Second)[1]
			victim := startWorker(t, addr, "--name", "victim")
			startWorker(t, addr, "--name", "survivor")
			m.waitLog(`msg="workers connected"`, 10*time.Second)
			if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			// A fixed 300 ms here was not always enough for a batch to
			// reach the victim on a loaded machine: wait until the
			// stopped victim holds every credit, unanswered.
			testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
				fams, _, err := tryScrape(metrics)
				if err != nil {
					return err
				}
				if held, _ := value(fams, "sketchcc_credits_in_use", "worker", "victim"); held < credits {
					return fmt.Errorf("the stopped victim holds %v of its %d credits", held, credits)
				}
				return nil
			})
			if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-victim.done
			s := finish(t, m)
			checkTruth(t, s, path, labelsPath)
			for _, w := range s.Workers {
				if w.Name == "victim" && (w.BatchesResent == 0 || w.LastError == "") {
					t.Errorf("the victim's batches were not re-sent: %+v", w)
				}
			}
			t.Logf("re-sent %d batches: %+v", s.BatchesResent, s.Workers)
		})
	}
}

// TestQueriesWorkerKilled: ten queries during the stream with two remote
// workers, one of which stops answering at 30% of the stream and is killed
// while a query waits for its batches. The query must wait for the
// re-sent batches, not answer without them, and every answer must be
// union-find's over its prefix.
func TestQueriesWorkerKilled(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, path, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "2", "--local-workers", "0",
		"--batch-factor", "0.5", "--queries", "10", "--labels", labelsPath)
	victim := startWorker(t, addr, "--name", "victim")
	startWorker(t, addr, "--name", "survivor")
	// At 30% the victim stops answering, holding a credit's worth of
	// batches; the query at 40% waits for them until the kill, 2 s later.
	const stall = 2 * time.Second
	killed := make(chan error, 1)
	f.run(func() error {
		if err := victim.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			return err
		}
		go func() {
			time.Sleep(stall)
			err := victim.cmd.Process.Signal(syscall.SIGKILL)
			<-victim.done
			killed <- err
		}()
		return nil
	})
	s := finish(t, m)
	f.wait(t)
	if err := <-killed; err != nil {
		t.Fatal(err)
	}
	checkTruth(t, s, path, labelsPath)
	if len(s.Queries) != 10 {
		t.Fatalf("%d answers, want 10", len(s.Queries))
	}
	waited := false
	for _, q := range s.Queries {
		_, want := truthAfter(t, path, q.AfterUpdates)
		if q.Components != want {
			t.Errorf("after %d updates: %d components, union-find %d", q.AfterUpdates, q.Components, want)
		}
		waited = waited || q.FlushSeconds >= stall.Seconds()/2
	}
	if !waited || s.BatchesResent == 0 {
		t.Errorf("want a query that waited for the killed worker's re-sent batches: re-sent %d, queries %+v",
			s.BatchesResent, s.Queries)
	}
}

// TestWrongClusterKey: a worker with another key cannot join; both sides
// say why within 5 s, the worker exits 1 at once rather than retrying,
// and the run completes with the right answer.
func TestWrongClusterKey(t *testing.T) {
	skipShort(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	key := keyFile(t)
	f := newFeeder(t, multiples, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--cluster-key-file", key, "--batch-factor", "0.05", "--labels", labelsPath)
	startWorker(t, addr, "--cluster-key-file", key)
	m.waitLog(`msg="workers connected"`, 10*time.Second)
	t0 := time.Now()
	bad := startWorker(t, addr, "--cluster-key-file", keyFile(t))
	if code := bad.wait(5 * time.Second); code != 1 {
		t.Errorf("worker with the wrong key exited %d, want 1", code)
	}
	bad.waitLog(`cannot join the cluster at .*the cluster key differs .*no installed keys could decrypt.*--cluster-key-file`, time.Second)
	m.waitLog(`level=WARN msg="refused a member with another cluster key.* reason=".*could decrypt`, 5*time.Second-time.Since(t0))
	t.Logf("refused and reported on both sides in %v", time.Since(t0).Round(time.Millisecond))
	f.run(func() error { return nil })
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, multiples, labelsPath)
	if len(s.Workers) != 1 {
		t.Errorf("the wrong-key worker got in: %+v", s.Workers)
	}
	if m.count(`level=ERROR.*decrypt`) > 0 {
		t.Errorf("the main node logged memberlist's decryption errors besides its own warning")
	}
}

// TestExpectWorkersWrongKey: --expect-workers fails naming every refusal
// it saw: one worker has another cluster key, the other none (the main
// node sees it too, and warns of each at once).
func TestExpectWorkersWrongKey(t *testing.T) {
	skipShort(t)
	m, addr := startMain(t, nil, "--stream", multiples, "--expect-workers", "2", "--wait-timeout", "5s",
		"--cluster-key-file", keyFile(t))
	start(t, "worker", nil, "--join", addr, "--listen", "127.0.0.1:0", "--gossip-local", "--cluster-key-file", keyFile(t))
	start(t, "worker", nil, "--join", addr, "--listen", "127.0.0.1:0", "--gossip-local")
	m.waitLog(`level=WARN msg="refused a member with another cluster key.* reason=".*could decrypt`, 5*time.Second)
	m.waitLog(`level=WARN msg="refused a member with another cluster key.* reason=".*not encrypted`, 5*time.Second)
	if code := m.wait(10 * time.Second); code != 1 {
		t.Fatalf("main-node exited %d, want 1", code)
	}
	got := m.waitLog(`0 of 2 workers connected.*refused members with another cluster key or none: (.*)`, time.Second)[1]
	if !strings.Contains(got, "could decrypt") || !strings.Contains(got, "not encrypted") {
		t.Errorf("the failure names %q; want the wrong key's refusal and the keyless worker's", got)
	}
}

// TestGarbagePeer: a member whose data port answers garbage is dropped,
// garbage sent to the gossip and data ports is ignored, and the run
// completes with the right answer.
func TestGarbagePeer(t *testing.T) {
	skipShort(t)
	labelsPath := filepath.Join(t.TempDir(), "labels")
	f := newFeeder(t, multiples, 0.3)
	m, addr := startMain(t, f.r, "--stream", "/dev/stdin", "--expect-workers", "1", "--local-workers", "0",
		"--batch-factor", "0.05", "--labels", labelsPath)
	good := startWorker(t, addr)
	goodAddr := good.waitLog(`msg="worker listening" addr=(\S+)`, time.Second)[1]

	// A fake worker: a member advertising a data port that sends garbage.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write(bytes.Repeat([]byte("\x07garbage\xff"), 1000))
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	fake, err := distributor.NewMembership(distributor.MembershipConfig{Name: "garbage", BindAddr: "127.0.0.1:0",
		Local: true, Meta: distributor.NodeMeta{Role: distributor.RoleWorker, Addr: ln.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Shutdown()

	if _, err := fake.Join(addr); err != nil {
		t.Fatal(err)
	}
	m.waitLog(`msg="worker refused" .*worker=garbage.*not a sketchcc peer`, 10*time.Second)
	for _, a := range []string{addr, goodAddr} {
		for _, network := range []string{"tcp", "udp"} {
			c, err := net.Dial(network, a)
			if err != nil {
				continue
			}
			c.Write(bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, 4096))
			c.Close()
		}
	}
	good.waitLog(`msg="refusing a connection"`, 10*time.Second)
	f.run(func() error { return nil })
	s := finish(t, m)
	f.wait(t)
	checkTruth(t, s, multiples, labelsPath)
	for _, w := range s.Workers {
		if w.Name == "garbage" && (w.Refused == 0 || w.Batches != 0) {
			t.Errorf("garbage peer: %+v", w)
		}
	}
}
