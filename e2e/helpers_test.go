package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sketchcc/internal/testwait"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sketchcc/offline/replay"
	"sketchcc/stream"
)

// bin is the directory of the binaries TestMain built.
var bin string

// proc is a running binary whose stderr is kept, line by line.
type proc struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	stdout bytes.Buffer
	mu     sync.Mutex
	stderr []string
	done   chan struct{}
	err    error
}

// start runs binary name with args; stdin, if not nil, feeds it.
func start(t testing.TB, name string, stdin io.Reader, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, done: make(chan struct{})}
	p.cmd = exec.Command(filepath.Join(bin, name), args...)
	p.cmd.Stdout = &p.stdout
	p.cmd.Stdin = stdin
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines sync.WaitGroup
	lines.Go(func() {
		sc := bufio.NewScanner(errPipe)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.mu.Lock()
			p.stderr = append(p.stderr, sc.Text())
			p.mu.Unlock()
		}
	})
	go func() {
		lines.Wait()
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		if c, ok := stdin.(io.Closer); ok {
			c.Close() // else Wait waits for the copy of stdin
		}
		<-p.done
		if t.Failed() {
			t.Logf("%s stderr:\n%s", p.name, p.log())
		}
	})
	return p
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.stderr, "\n")
}

// waitLog waits until a stderr line matches re and returns its
// submatches.
func (p *proc) waitLog(re string, timeout time.Duration) []string {
	p.t.Helper()
	rx := regexp.MustCompile(re)
	var m []string
	testwait.Until(p.t, timeout, 10*time.Millisecond, func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, l := range p.stderr {
			if m = rx.FindStringSubmatch(l); m != nil {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) before logging %q", p.name, p.err, re)
		default:
		}
		return fmt.Errorf("%s has not logged %q", p.name, re)
	})
	return m
}

// wait waits for the process to exit and returns its exit code.
func (p *proc) wait(timeout time.Duration) int {
	p.t.Helper()
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.t.Fatalf("%s still running after %v:\n%s", p.name, timeout, p.log())
	}
	if p.err == nil {
		return 0
	}
	if ee, ok := p.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	p.t.Fatalf("%s: %v", p.name, p.err)
	return -1
}

// startMain starts main-node on 127.0.0.1:0 with args and returns it and
// its gossip address, read from its log.
func startMain(t testing.TB, stdin io.Reader, args ...string) (*proc, string) {
	t.Helper()
	args = append([]string{"--listen", "127.0.0.1:0", "--gossip-local", "--log-level", "info",
		"--progress", "never", "--json"}, args...)
	p := start(t, "main-node", stdin, args...)
	m := p.waitLog(`msg="main node listening" addr=(\S+)`, 10*time.Second)
	return p, m[1]
}

// startWorker starts a worker joining join and waits until it has.
func startWorker(t testing.TB, join string, args ...string) *proc {
	t.Helper()
	args = append([]string{"--join", join, "--listen", "127.0.0.1:0", "--gossip-local", "--threads", "1",
		"--log-level", "info"}, args...)
	p := start(t, "worker", nil, args...)
	p.waitLog(`msg="worker listening" addr=127\.0\.0\.1:\d+`, 10*time.Second)
	return p
}

// summary is the part of main-node's --json that the tests read.
type summary struct {
	Updates    uint64 `json:"updates"`
	Components int    `json:"components"`
	Workers    []struct {
		Name          string `json:"name"`
		Batches       uint64 `json:"batches"`
		Updates       uint64 `json:"updates"`
		BytesSent     uint64 `json:"bytes_sent"`
		BytesReceived uint64 `json:"bytes_received"`
		DeltasMerged  uint64 `json:"deltas_merged"`
		BatchesResent uint64 `json:"batches_resent"`
		Refused       uint64 `json:"refused"`
		LastError     string `json:"last_error"`
		BatchesLate   uint64 `json:"batches_late"`
		BadFrames     uint64 `json:"bad_frames"`
		Connections   []struct {
			Incarnation   uint64 `json:"incarnation"`
			Batches       uint64 `json:"batches"`
			DeltasMerged  uint64 `json:"deltas_merged"`
			BatchesResent uint64 `json:"batches_resent"`
			BatchesLate   uint64 `json:"batches_late"`
			Duplicates    uint64 `json:"duplicate_deltas"`
			BadFrames     uint64 `json:"bad_frames"`
			Error         string `json:"error"`
		} `json:"connections"`
	} `json:"workers"`
	BatchesLate           uint64  `json:"batches_late"`
	NetworkBytesPerUpdate float64 `json:"network_bytes_per_update"`
	RemoteBatches         uint64  `json:"remote_batches"`
	LocalCutoffBatches    uint64  `json:"local_cutoff_batches"`
	FallbackBatches       uint64  `json:"fallback_batches"`
	BatchesResent         uint64  `json:"batches_resent"`
	WorkersLeft           uint64  `json:"workers_left"`
	WorkersFailed         uint64  `json:"workers_failed"`
	BadFrames             uint64  `json:"bad_frames"`
	Queries               []struct {
		AfterUpdates uint64  `json:"after_updates"`
		Components   int     `json:"components"`
		Greedy       bool    `json:"greedy"`
		FlushSeconds float64 `json:"flush_seconds"`
	} `json:"queries"`
	KConnectivity []kRecord `json:"k_connectivity"`
}

// finish waits for a main node to exit 0 and returns its summary.
func finish(t testing.TB, m *proc) summary {
	t.Helper()
	if code := m.wait(2 * time.Minute); code != 0 {
		t.Fatalf("main-node exited %d:\n%s", code, m.log())
	}
	var s summary
	if err := json.Unmarshal(m.stdout.Bytes(), &s); err != nil {
		t.Fatalf("main-node --json: %v\n%s", err, m.stdout.String())
	}
	return s
}

// truth replays the stream at path with toggle semantics into an exact
// edge set and returns the union-find's labels (numbered by smallest
// vertex, as main-node's --labels are) and component count.
func truth(t testing.TB, path string) ([]uint32, int) {
	t.Helper()
	return truthAfter(t, path, ^uint64(0))
}

// truthAfter is truth for the first n updates of the stream.
func truthAfter(t testing.TB, path string, n uint64) ([]uint32, int) {
	t.Helper()
	f, err := stream.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, set, err := replay.Run(f.Reader(0, min(n, f.Header().Updates)), replay.Config{Name: path})
	if err != nil {
		t.Fatal(err)
	}
	d := set.Components()
	return d.Labels(), d.Sets()
}

// checkTruth compares a run's component count and its --labels file with
// union-find over the final edge set of the stream at path.
func checkTruth(t testing.TB, s summary, path, labelsPath string) {
	t.Helper()
	labels, want := truth(t, path)
	if s.Components != want {
		t.Fatalf("%d components, union-find %d", s.Components, want)
	}
	checkLabels(t, labelsPath, labels)
}

// checkLabels compares a --labels file with the true labels.
func checkLabels(t testing.TB, path string, want []uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != len(want) {
		t.Fatalf("%s: %d lines, want %d", path, len(lines), len(want))
	}
	bad := 0
	for i, l := range lines {
		f := strings.Fields(l)
		v, _ := strconv.Atoi(f[0])
		c, _ := strconv.Atoi(f[1])
		if v != i || uint32(c) != want[i] {
			if bad++; bad <= 3 {
				t.Errorf("%s line %d: %q, want \"%d %d\"", path, i+1, l, i, want[i])
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d labels differ from the union-find's", bad, len(want))
	}
}

// checkCounters checks that --json's counters add up: each connection's
// batches were merged, re-sent or late; each worker's entry is the sum of
// its connections; the totals are the sums of the entries.
func checkCounters(t testing.TB, s summary) {
	t.Helper()
	var merged, resent, late uint64
	for _, w := range s.Workers {
		var b, m, r, l uint64
		for _, c := range w.Connections {
			if c.Batches != c.DeltasMerged+c.BatchesResent+c.BatchesLate {
				t.Errorf("worker %s, connection %+v: batches != merged + re-sent + late", w.Name, c)
			}
			b, m, r, l = b+c.Batches, m+c.DeltasMerged, r+c.BatchesResent, l+c.BatchesLate
		}
		if w.Batches != b || w.DeltasMerged != m || w.BatchesResent != r || w.BatchesLate != l {
			t.Errorf("worker %s: entry %+v is not the sum of its connections", w.Name, w)
		}
		merged, resent, late = merged+m, resent+r, late+l
	}
	if s.RemoteBatches != merged || s.BatchesResent != resent || s.BatchesLate != late {
		t.Errorf("totals: %d remote, %d re-sent, %d late batches; the workers add up to %d, %d, %d",
			s.RemoteBatches, s.BatchesResent, s.BatchesLate, merged, resent, late)
	}
}
