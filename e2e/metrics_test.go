package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"sketchcc/internal/testwait"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// scrape fetches http://addr/metrics and parses it with the Prometheus
// text parser.
func scrape(t testing.TB, addr string) (map[string]*dto.MetricFamily, string) {
	t.Helper()
	fams, body, err := tryScrape(addr)
	if err != nil {
		t.Fatal(err)
	}
	return fams, body
}

// tryScrape is scrape returning its error.
func tryScrape(addr string) (map[string]*dto.MetricFamily, string, error) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return nil, "", fmt.Errorf("scrape %s: %v", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("scrape %s: %s, %v", addr, resp.Status, err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		return nil, "", fmt.Errorf("scrape %s: the text parser says %v", addr, err)
	}
	return fams, string(body), nil
}

// value returns the value of the sample of family name whose labels
// include labels (name=value pairs), and whether there is one.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if have[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// TestMetricsMatchJSON scrapes main-node --metrics-listen during a run
// with two loopback workers and after it (--metrics-linger), parses the
// scrapes with the Prometheus text parser, and checks the final counters
// against the --json totals and the workers' own counts. The workers are
// released before the linger: they exit while the main node still serves
// its metrics, which then show none connected. With
// SKETCHCC_METRICS_STREAM set it runs on that stream and logs the final
// scrape.
func TestMetricsMatchJSON(t *testing.T) {
	skipShort(t)
	path := os.Getenv("SKETCHCC_METRICS_STREAM")
	if path == "" {
		path = kron12(t)
	}
	key := keyFile(t)
	m, addr := startMain(t, nil, "--stream", path, "--expect-workers", "2", "--local-workers", "0",
		"--cluster-key-file", key, "--batch-factor", "0.5", "--queries", "3",
		"--metrics-listen", "127.0.0.1:0", "--metrics-linger", "2m")
	mainMetrics := m.waitLog(`msg="metrics listening" addr=(\S+)`, 10*time.Second)[1]
	workerMetrics := map[string]string{} // worker name → metrics address
	workers := map[string]*proc{}
	for i := range 2 {
		w := startWorker(t, addr, "--cluster-key-file", key, "--metrics-listen", "127.0.0.1:0")
		name := w.waitLog(`msg="worker listening" .* name=(\S+)`, time.Second)[1]
		workerMetrics[name] = w.waitLog(`msg="metrics listening" addr=(\S+)`, 10*time.Second)[1]
		workers[name] = w
		// --threads 1 keeps the worker to one core.
		wf, _ := scrape(t, workerMetrics[name])
		if got, _ := value(wf, "go_sched_gomaxprocs_threads"); got != 1 {
			t.Errorf("worker %s: go_sched_gomaxprocs_threads %v with --threads 1, want 1", name, got)
		}
		if i == 0 {
			// The main node waits for the second worker: the first is
			// already a member in its metrics.
			testwait.Until(t, 10*time.Second, 10*time.Millisecond, func() error {
				fams, _ := scrape(t, mainMetrics)
				if v, _ := value(fams, "sketchcc_worker_connected", "worker", name); v != 1 {
					return fmt.Errorf("sketchcc_worker_connected{worker=%q} is %v while the main node waits for --expect-workers", name, v)
				}
				return nil
			})
		}
	}

	// During the run: counters only grow, and what is merged was shipped.
	// With both single-thread workers on this machine connected, the main
	// node runs on the cores it started with less two, at least one.
	start := runtime.GOMAXPROCS(0)
	wantCores := max(1, start-2)
	sawCores := false
	scrapes, last := 0, map[string]float64{}
	for {
		fams, _ := scrape(t, mainMetrics)
		scrapes++
		cores, ok := value(fams, "sketchcc_main_cores")
		if !ok || cores < float64(wantCores) || cores > float64(start) {
			t.Errorf("sketchcc_main_cores %v (present %v), want [%d, %d]", cores, ok, wantCores, start)
		}
		if n, _ := value(fams, "sketchcc_workers_connected"); n == 2 && cores == float64(wantCores) {
			sawCores = true
		}
		read, ok := value(fams, "sketchcc_updates_read_total")
		if !ok {
			t.Fatal("no sketchcc_updates_read_total")
		}
		if read < last["read"] {
			t.Errorf("sketchcc_updates_read_total went down from %v to %v", last["read"], read)
		}
		last["read"] = read
		// One scrape reads a worker's counters one after the other, so
		// compare what was merged by the previous scrape with what is
		// shipped by this one.
		for name := range workerMetrics {
			shipped, _ := value(fams, "sketchcc_batches_shipped_total", "worker", name)
			merged, _ := value(fams, "sketchcc_deltas_merged_total", "worker", name)
			if last["merged "+name] > shipped || shipped < last["shipped "+name] || merged < last["merged "+name] {
				t.Errorf("worker %s: merged %v then %v, shipped %v then %v", name,
					last["merged "+name], merged, last["shipped "+name], shipped)
			}
			last["merged "+name], last["shipped "+name] = merged, shipped
		}
		if strings.Contains(m.log(), "serving the final metrics") {
			break
		}
		select {
		case <-m.done:
			t.Fatalf("main-node exited before lingering:\n%s", m.log())
		case <-time.After(20 * time.Millisecond):
		}
	}

	if !sawCores {
		t.Errorf("no scrape with both workers connected showed sketchcc_main_cores %d", wantCores)
	}
	// The workers were released before the linger: each exits, told
	// "main node done", while the main node still serves its metrics.
	sketched := map[string]float64{}
	for name, w := range workers {
		if code := w.wait(10 * time.Second); code != 0 {
			t.Errorf("worker %s exited %d", name, code)
		}
		n, _ := strconv.ParseFloat(w.waitLog(`msg="stopped serving" reason="the main node sent stop: main node done" .*batches=(\d+)`, time.Second)[1], 64)
		sketched[name] = n
	}
	select {
	case <-m.done:
		t.Fatalf("main-node ended its linger early:\n%s", m.log())
	default:
	}
	fams, text := scrape(t, mainMetrics)
	m.cmd.Process.Signal(syscall.SIGINT) // end the linger
	s := finish(t, m)
	var raw struct {
		SketchBytes int64 `json:"sketch_bytes"`
		Queries     []struct {
			FlushSeconds float64 `json:"flush_seconds"`
		} `json:"queries"`
	}
	if err := json.Unmarshal(m.stdout.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}

	f := func(want float64, name string, labels ...string) {
		t.Helper()
		got, ok := value(fams, name, labels...)
		if !ok || got != want {
			t.Errorf("%s%q = %v (present %v), --json says %v", name, labels, got, ok, want)
		}
	}
	f(float64(s.Updates), "sketchcc_updates_read_total")
	f(float64(s.Updates), "sketchcc_stream_updates")
	f(float64(raw.SketchBytes), "sketchcc_sketch_bytes")
	f(0, "sketchcc_workers_connected")
	f(float64(len(raw.Queries)), "sketchcc_query_duration_seconds", "phase", "flush")
	f(float64(len(raw.Queries)), "sketchcc_query_duration_seconds", "phase", "cc")
	f(float64(s.LocalCutoffBatches), "sketchcc_batches_local_total", "reason", "cutoff")
	f(float64(s.FallbackBatches), "sketchcc_batches_local_total", "reason", "fallback")
	if len(s.Workers) != 2 {
		t.Fatalf("--json has %d workers, want 2", len(s.Workers))
	}
	var merged uint64
	for _, w := range s.Workers {
		f(float64(w.Batches), "sketchcc_batches_shipped_total", "worker", w.Name)
		f(float64(w.Updates), "sketchcc_neighbor_ids_shipped_total", "worker", w.Name)
		f(float64(w.DeltasMerged), "sketchcc_deltas_merged_total", "worker", w.Name)
		f(float64(w.BatchesResent), "sketchcc_batches_resent_total", "worker", w.Name)
		// The stop frame each worker is sent on its release, after the
		// result, is in the lingering metrics and not in --json.
		if got, _ := value(fams, "sketchcc_wire_bytes_total", "worker", w.Name, "direction", "sent"); got <= float64(w.BytesSent) || got > float64(w.BytesSent)+100 {
			t.Errorf("worker %s: %v bytes sent in the metrics, %d in --json: want the stop frame's more", w.Name, got, w.BytesSent)
		}
		f(float64(w.BytesReceived), "sketchcc_wire_bytes_total", "worker", w.Name, "direction", "received")
		f(0, "sketchcc_credits_in_use", "worker", w.Name)
		f(0, "sketchcc_worker_connected", "worker", w.Name)
		merged += w.DeltasMerged
		if w.Batches == 0 {
			t.Errorf("worker %s got no batches", w.Name)
		}
		// The worker's own count of the batches it sketched.
		if got := sketched[w.Name]; got != float64(w.Batches) {
			t.Errorf("worker %s: sketched %v batches, main node shipped %d", w.Name, got, w.Batches)
		}
	}
	if merged != s.RemoteBatches {
		t.Errorf("deltas merged %d, remote batches %d", merged, s.RemoteBatches)
	}
	for _, name := range []string{"process_cpu_seconds_total", "process_resident_memory_bytes", "go_goroutines", "sketchcc_batch_queue_depth"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s in the scrape", name)
		}
	}
	t.Logf("%d scrapes during the run; the final one:\n%s", scrapes, grepSketchcc(text))
	t.Logf("--json: %s", m.stdout.String())
}

// grepSketchcc keeps the sketchcc_ lines of a scrape and the process's
// resident memory.
func grepSketchcc(text string) string {
	var b strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "sketchcc_") || strings.HasPrefix(l, "process_resident_memory_bytes") ||
			strings.HasPrefix(l, "process_cpu_seconds_total") {
			fmt.Fprintln(&b, l)
		}
	}
	return b.String()
}
