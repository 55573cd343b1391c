package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sketchcc/distributor"
	"sketchcc/ingest"
	"sketchcc/internal/cli"
	"sketchcc/internal/testwait"
)

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runPlain calls run in-process without runMain's --workers.
func runPlain(t *testing.T, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return result{exitCode(err, &errb), out.String(), errb.String()}
}

func TestClusterUsageErrors(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		r := runPlain(t, append([]string{"--stream", multiples}, args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Errorf("main-node %q: want exit 2 and %q on stderr, got %v", args, want, r)
		}
	}
	f("--local-workers=0 needs --listen", "--local-workers", "0")
	f("--expect-workers needs --listen", "--expect-workers", "2")
	f("--cluster-key-file needs --listen", "--cluster-key-file", "/dev/null")
	f("give --workers or --local-workers, not both", "--workers", "2", "--local-workers", "1")
	f(`--listen="nonsense"`, "--listen", "nonsense")
	f("--credits=0", "--listen", "127.0.0.1:0", "--credits", "0")
	f("--local-workers=-5", "--listen", "127.0.0.1:0", "--local-workers", "-5")
	f("--cores=-1", "--cores", "-1")
	f(fmt.Sprintf("--cores=%d, want [0, %d]", runtime.NumCPU()+1, runtime.NumCPU()), "--cores", strconv.Itoa(runtime.NumCPU()+1))
}

// TestCoresLeftToSameHostWorkers: with --cores the main node keeps that
// many; without, it follows the same-host workers from the cores it
// started with (distributor's TestSameHostCores).
func TestCoresLeftToSameHostWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	if f := (&clusterConfig{cores: 3}).sameHost(slog.New(slog.DiscardHandler)); f != nil {
		t.Error("--cores=3: the main node would follow same-host workers")
	}
	(&clusterConfig{}).sameHost(slog.New(slog.DiscardHandler))(startCores + 5)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("same-host threads %d: GOMAXPROCS %d, want 1", startCores+5, got)
	}
}

func TestClusterRuntimeErrors(t *testing.T) {
	f := func(want string, args ...string) {
		t.Helper()
		r := runPlain(t, append([]string{"--stream", multiples, "--listen", "127.0.0.1:0"}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, want) || r.stdout != "" {
			t.Errorf("main-node %q: want exit 1 and %q on stderr, got %v", args, want, r)
		}
	}
	f("cluster key of 9 raw bytes, not base64: want base64 of 16, 24 or 32 bytes", "--cluster-key-file", writeFile(t, "key", []byte("too short")))
	// Was "cluster key of 28 bytes": the text's length, not the key's.
	f("cluster key is base64 of 20 bytes (28 characters): want base64 of 16, 24 or 32 bytes",
		"--cluster-key-file", writeFile(t, "key20", []byte(base64.StdEncoding.EncodeToString(make([]byte, 20))+"\n")))
	f("cannot read the cluster key", "--cluster-key-file", "/nonexistent/key")
	f("waiting for --expect-workers=1: distributor: 0 of 1 workers connected: --wait-timeout=100ms passed", "--expect-workers", "1", "--wait-timeout", "100ms")
}

// TestLocalWorkersAlias: --local-workers N is --workers N without --listen.
func TestLocalWorkersAlias(t *testing.T) {
	r := runPlain(t, "--stream", multiples, "--local-workers", "3", "--json")
	var s struct {
		Components   int `json:"components"`
		LocalWorkers int `json:"local_workers"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &s); err != nil || r.code != 0 {
		t.Fatalf("%v: %v", r, err)
	}
	if s.Components != 78 || s.LocalWorkers != 3 {
		t.Errorf("got %+v, want 78 components and 3 local workers", s)
	}
	if strings.Contains(r.stdout, `"network_bytes_per_update"`) {
		t.Errorf("cluster fields without --listen: %s", r.stdout)
	}
}

// TestClusterInProcess runs the main node with one in-process worker that
// joins through memberlist, as cmd/worker does.
func TestClusterInProcess(t *testing.T) {
	var out bytes.Buffer
	var errb syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"--stream", multiples, "--listen", "127.0.0.1:0",
			"--gossip-local", "--expect-workers", "1", "--local-workers", "0", "--batch-factor", "0.05",
			"--json", "--log-level", "info"}, &out, &errb)
	}()
	w, served := joinWorker(t, listenAddr(t, &errb))
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	select {
	case <-w.Stopped():
	case <-time.After(10 * time.Second):
		t.Error("the main node did not tell the worker to stop")
	}
	w.Close()
	if err := <-served; !errors.Is(err, distributor.ErrClosed) {
		t.Errorf("Serve: %v", err)
	}
	var s struct {
		Components            int     `json:"components"`
		LocalWorkers          int     `json:"local_workers"`
		NetworkBytesPerUpdate float64 `json:"network_bytes_per_update"`
		Out                   float64 `json:"network_bytes_per_update_out"`
		Back                  float64 `json:"network_bytes_per_update_back"`
		RemoteBatches         uint64  `json:"remote_batches"`
		MainCores             int     `json:"main_cores"`
		Readers               int     `json:"readers"`
		Workers               []struct {
			Batches, Updates, BytesSent, BytesReceived, DeltasMerged, BatchesResent uint64
		} `json:"workers"`
	}
	if err := json.Unmarshal(out.Bytes(), &s); err != nil {
		t.Fatal(err)
	}
	if s.Components != 78 || s.LocalWorkers != 0 || len(s.Workers) != 1 || s.NetworkBytesPerUpdate <= 0 {
		t.Fatalf("summary %s", out.String())
	}
	// The worker is on this machine, with one thread: the main node
	// leaves it a core.
	if want := max(1, startCores-1); s.MainCores != want || s.Readers < 1 {
		t.Errorf("main_cores %d, readers %d: want %d cores (started with %d) and a reader count", s.MainCores, s.Readers, want, startCores)
	}
	if s.Out <= 0 || s.Back <= 0 || math.Abs(s.Out+s.Back-s.NetworkBytesPerUpdate) > 1e-9*s.NetworkBytesPerUpdate {
		t.Errorf("bytes per update out %v + back %v, want both > 0 adding up to %v", s.Out, s.Back, s.NetworkBytesPerUpdate)
	}
	// The JSON keys are snake_case; decode them by name too.
	var raw struct {
		Workers []map[string]any `json:"workers"`
	}
	json.Unmarshal(out.Bytes(), &raw)
	for _, k := range []string{"batches", "updates", "bytes_sent", "bytes_received", "deltas_merged", "batches_resent"} {
		if _, ok := raw.Workers[0][k]; !ok {
			t.Errorf("workers[0] lacks %q: %v", k, raw.Workers[0])
		}
	}
	if raw.Workers[0]["deltas_merged"].(float64) == 0 || raw.Workers[0]["deltas_merged"].(float64) != float64(s.RemoteBatches) {
		t.Errorf("worker merged %v deltas, remote batches %d", raw.Workers[0]["deltas_merged"], s.RemoteBatches)
	}
}

// listenAddr waits for the address of "main node listening" in log.
func listenAddr(t *testing.T, log *syncBuffer) string {
	t.Helper()
	rx := regexp.MustCompile(`msg="main node listening" addr=(\S+)`)
	var addr string
	testwait.Until(t, 10*time.Second, 5*time.Millisecond, func() error {
		m := rx.FindStringSubmatch(log.String())
		if m == nil {
			return fmt.Errorf("no address logged:\n%s", log.String())
		}
		addr = m[1]
		return nil
	})
	return addr
}

// joinWorker starts an in-process worker of one thread that joins the
// main node at addr through memberlist, as cmd/worker does; Serve's
// error arrives on the channel once the worker is closed. The test's
// cleanup leaves the cluster.
func joinWorker(t *testing.T, addr string) (*distributor.Worker, <-chan error) {
	t.Helper()
	w, err := distributor.NewWorker(distributor.WorkerConfig{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- w.Serve(context.Background(), ln) }()
	m, err := distributor.NewMembership(distributor.MembershipConfig{BindAddr: "127.0.0.1:0", Local: true,
		Meta: distributor.NodeMeta{Role: distributor.RoleWorker, Addr: ln.Addr().String()}})
	if err != nil {
		w.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown() })
	if _, err := m.Join(addr); err != nil {
		w.Close()
		t.Fatal(err)
	}
	return w, served
}

// TestClusterStopAfterInterrupt: a cluster stopped once its context is
// done tells its workers that the main node was interrupted. SIGINT also
// closes the stream under a blocked read, so the run can end and stop the
// cluster before the interrupt's watch of the context has dismissed the
// workers; they were then told "main node done" (TestMainSigintStopsWorkers
// in e2e failed so). Each round cancels and stops at once, the order in
// which that race went wrong.
func TestClusterStopAfterInterrupt(t *testing.T) {
	c, err := parseFlags([]string{"--stream", multiples, "--listen", "127.0.0.1:0", "--gossip-local",
		"--expect-workers", "1", "--local-workers", "0", "--log-level", "info"}, io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for round := range 5 {
		e, err := ingest.New(ingest.Config{Vertices: 1024, Remote: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		var errb syncBuffer
		type started struct {
			cl  *distributor.Cluster
			err error
		}
		ch := make(chan started, 1)
		go func() {
			cl, err := startCluster(ctx, c.cluster, e, nil, cli.NewLogger(&errb, c.logFormat, c.logLevel))
			ch <- started{cl, err}
		}()
		w, served := joinWorker(t, listenAddr(t, &errb))
		s := <-ch
		if s.err != nil {
			t.Fatalf("round %d: %v\n%s", round, s.err, errb.String())
		}
		cancel()
		s.cl.Close()
		select {
		case <-w.Stopped():
			if r := w.StopReason(); r != "main node interrupted" {
				t.Errorf("round %d: the worker was told %q, want \"main node interrupted\"\n%s", round, r, errb.String())
			}
		case <-time.After(10 * time.Second):
			t.Errorf("round %d: the worker was not told to stop\n%s", round, errb.String())
		}
		w.Close()
		if err := <-served; !errors.Is(err, distributor.ErrClosed) {
			t.Errorf("round %d: Serve: %v", round, err)
		}
		e.Close()
	}
}

// TestClusterCountersAddUpAfterGreedyFinal: with the greedy forest valid
// the final answer needs no flush and comes while the workers still hold
// batches; the --json counters must still add up on every connection
// (batches = merged + re-sent + late) and across the cluster, and the
// answer must be the union-find's. Before the main node settled the
// batches out before its report, each round was short by the batches in
// flight.
func TestClusterCountersAddUpAfterGreedyFinal(t *testing.T) {
	const vertices, updates = 4096, 120_000
	path := writeLargeStream(t, vertices, updates)
	_, _, truth := oracle(t, path)
	var at []string
	for n := 1000; n < updates; n += 1000 {
		at = append(at, strconv.Itoa(n))
	}
	for round := range 3 {
		var out bytes.Buffer
		var errb syncBuffer
		done := make(chan error, 1)
		go func() {
			done <- run(context.Background(), []string{"--stream", path, "--listen", "127.0.0.1:0",
				"--gossip-local", "--expect-workers", "2", "--local-workers", "0", "--batch-factor", "0.02",
				"--local-cutoff", "-1", "--query-at", strings.Join(at, ","), "--json", "--log-level", "info"}, &out, &errb)
		}()
		addr := listenAddr(t, &errb)
		var served []<-chan error
		var ws []*distributor.Worker
		for range 2 {
			w, s := joinWorker(t, addr)
			ws, served = append(ws, w), append(served, s)
		}
		if err := <-done; err != nil {
			t.Fatalf("round %d: run: %v\n%s", round, err, errb.String())
		}
		for i, w := range ws {
			w.Close()
			<-served[i]
		}
		var s struct {
			Components    int    `json:"components"`
			Greedy        bool   `json:"greedy"`
			RemoteBatches uint64 `json:"remote_batches"`
			Resent        uint64 `json:"batches_resent"`
			Late          uint64 `json:"batches_late"`
			Workers       []struct {
				Connections []struct {
					Batches uint64 `json:"batches"`
					Merged  uint64 `json:"deltas_merged"`
					Resent  uint64 `json:"batches_resent"`
					Late    uint64 `json:"batches_late"`
				} `json:"connections"`
			} `json:"workers"`
		}
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, out.String())
		}
		if s.Components != truth.Sets() {
			t.Errorf("round %d: %d components, union-find says %d", round, s.Components, truth.Sets())
		}
		if !s.Greedy {
			t.Errorf("round %d: the final answer did not come from the greedy DSU; the test needs it to", round)
		}
		var batches, merged, resent, late uint64
		for i, w := range s.Workers {
			for j, c := range w.Connections {
				if c.Batches != c.Merged+c.Resent+c.Late {
					t.Errorf("round %d: worker %d connection %d: %d batches, %d merged + %d re-sent + %d late",
						round, i, j, c.Batches, c.Merged, c.Resent, c.Late)
				}
				batches, merged, resent, late = batches+c.Batches, merged+c.Merged, resent+c.Resent, late+c.Late
			}
		}
		if batches == 0 || merged != s.RemoteBatches || resent != s.Resent || late != s.Late {
			t.Errorf("round %d: connections sum to %d batches, %d merged, %d re-sent, %d late; cluster says %d, %d, %d",
				round, batches, merged, resent, late, s.RemoteBatches, s.Resent, s.Late)
		}
	}
}

// TestMetricsLingerReleasesWorkers (issue 27, item 10): with
// --metrics-linger the workers are told the run is over ("main node
// done") once the result is printed, and only then do the metrics linger;
// the metrics are still served while the main node lingers, and the
// answer is the union-find's.
func TestMetricsLingerReleasesWorkers(t *testing.T) {
	_, _, truth := oracle(t, multiples)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"--stream", multiples, "--listen", "127.0.0.1:0", "--gossip-local",
			"--expect-workers", "1", "--local-workers", "0", "--metrics-listen", "127.0.0.1:0",
			"--metrics-linger", "1m", "--json", "--log-level", "info"}, &out, &errb)
	}()
	w, served := joinWorker(t, listenAddr(t, &errb))
	defer func() { w.Close(); <-served }()
	select {
	case <-w.Stopped():
	case err := <-done:
		t.Fatalf("the run ended (%v) before its linger was over\n%s", err, errb.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the worker was not released while the metrics linger\n%s", errb.String())
	}
	if r := w.StopReason(); r != "main node done" {
		t.Errorf("the worker was told %q, want \"main node done\"", r)
	}
	if got := components(out.String()); got != truth.Sets() {
		t.Errorf("%d components, union-find says %d\n%s", got, truth.Sets(), out.String())
	}
	m := regexp.MustCompile(`msg="metrics listening" addr=(\S+)`).FindStringSubmatch(errb.String())
	if m == nil {
		t.Fatalf("no metrics address logged:\n%s", errb.String())
	}
	resp, err := http.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatalf("the metrics are not served while the main node lingers: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("metrics while lingering: %s", resp.Status)
	}
	select {
	case err := <-done:
		t.Fatalf("the run ended (%v) before its linger was over", err)
	default:
	}
	cancel() // Ctrl-C ends the linger
	if err := <-done; err != nil {
		t.Errorf("run: %v\n%s", err, errb.String())
	}
}

// TestListenAnyLogsIPv4: --listen 0.0.0.0:0 logs an IPv4 address to join
// with, and a worker that joins it gets work; the answer is the
// union-find's.
func TestListenAnyLogsIPv4(t *testing.T) {
	_, _, truth := oracle(t, multiples)
	var out bytes.Buffer
	var errb syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(context.Background(), []string{"--stream", multiples, "--listen", "0.0.0.0:0", "--gossip-local",
			"--expect-workers", "1", "--local-workers", "0", "--json", "--log-level", "info"}, &out, &errb)
	}()
	addr := listenAddr(t, &errb)
	host, _, err := net.SplitHostPort(addr)
	if ip := net.ParseIP(host); err != nil || ip == nil || ip.To4() == nil {
		t.Errorf("--listen 0.0.0.0:0 logged addr=%s, want an IPv4 address", addr)
	}
	w, served := joinWorker(t, addr)
	if err := <-done; err != nil {
		t.Fatalf("run: %v\n%s", err, errb.String())
	}
	w.Close()
	<-served
	if got := components(out.String()); got != truth.Sets() {
		t.Errorf("%d components, union-find says %d", got, truth.Sets())
	}
}
