package main

// --metrics-listen: the main node's Prometheus metrics, read at scrape
// time from the engine's accessors and the pool's Stats (package
// internal/metrics serves them on a registry of their own). Queries are
// the one thing observed as they happen: their flush and CC latencies go
// into histograms.

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"sketchcc/distributor"
	"sketchcc/ingest"
	"sketchcc/internal/metrics"
)

type metricsConfig struct {
	listen string
	linger time.Duration
}

func addMetricsFlags(fs *pflag.FlagSet, c *metricsConfig) {
	fs.StringVar(&c.listen, "metrics-listen", "", metrics.ListenUsage)
	fs.DurationVar(&c.linger, "metrics-linger", 0, "keep serving metrics this long after the result is printed, so that a scraper sees the final counts (Ctrl-C ends it)")
}

// mainMetrics is the running metrics endpoint; a nil *mainMetrics is
// none, and its methods do nothing.
type mainMetrics struct {
	srv    *metrics.Server
	pool   atomic.Pointer[distributor.Pool]
	query  *prometheus.HistogramVec
	linger time.Duration
	log    *slog.Logger
}

// startMetrics serves e's metrics on c.listen; streamUpdates is the
// stream header's update count. It returns nil without --metrics-listen.
func startMetrics(c metricsConfig, e *ingest.Engine, streamUpdates uint64, log *slog.Logger) (*mainMetrics, error) {
	if c.listen == "" {
		return nil, nil
	}
	m := &mainMetrics{linger: c.linger, log: log}
	reg := metrics.NewRegistry()
	m.query = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "sketchcc_query_duration_seconds",
		Help: "Latency of connected-components queries by phase: flush (gutters emptied and every delta merged) and cc (Boruvka, or the greedy shortcut).",
		// 1 ms to about 4.4 minutes.
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"phase"})
	reg.MustRegister(m.query,
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sketchcc_updates_read_total",
			Help: "Edge updates read from the stream and inserted into the gutters."},
			func() float64 { return float64(e.Updates()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_stream_updates",
			Help: "Edge updates the stream's header announces."},
			func() float64 { return float64(streamUpdates) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_main_cores",
			Help: "Cores the main node runs on now (GOMAXPROCS; --cores, less same-host workers' threads)."},
			func() float64 { return float64(runtime.GOMAXPROCS(0)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_sketch_bytes",
			Help: "Bytes of the vertex sketches."},
			func() float64 { return float64(e.SketchBytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_batch_queue_depth",
			Help: "Full batches waiting in the work queue for a delta worker or a distributor."},
			func() float64 { return float64(len(e.Gutters().Batches())) }),
		poolCollector{&m.pool},
	)
	var err error
	if m.srv, err = metrics.Serve(c.listen, reg, metrics.Config{Logger: log}); err != nil {
		return nil, err
	}
	// At warn, so that scripts read the address at the default level.
	log.Warn("metrics listening", "addr", m.srv.Addr(), "max_conns", m.srv.MaxConns())
	return m, nil
}

// setPool makes the pool's counters part of the metrics.
func (m *mainMetrics) setPool(p *distributor.Pool) {
	if m != nil {
		m.pool.Store(p)
	}
}

// observeQuery records one query's latencies.
func (m *mainMetrics) observeQuery(q queryRecord) {
	if m == nil {
		return
	}
	m.query.WithLabelValues("flush").Observe(q.FlushSeconds)
	m.query.WithLabelValues("cc").Observe(q.CCSeconds)
}

// lingerThenClose keeps serving for --metrics-linger or until ctx is done,
// then stops the server.
func (m *mainMetrics) lingerThenClose(ctx context.Context) {
	if m == nil {
		return
	}
	if m.linger > 0 {
		m.log.Warn("result printed; serving the final metrics", "addr", m.srv.Addr(), "duration", m.linger)
		select {
		case <-ctx.Done():
		case <-time.After(m.linger):
		}
	}
	m.srv.Close()
}

func (m *mainMetrics) close() {
	if m != nil {
		m.srv.Close()
	}
}

// poolCollector reads distributor.Pool.Stats at each scrape. Before the
// pool exists (or without --listen) it reports nothing.
type poolCollector struct {
	pool *atomic.Pointer[distributor.Pool]
}

var (
	perWorker        = []string{"worker"}
	descShipped      = prometheus.NewDesc("sketchcc_batches_shipped_total", "Batches sent to the worker.", perWorker, nil)
	descShippedIDs   = prometheus.NewDesc("sketchcc_neighbor_ids_shipped_total", "Neighbour ids in the batches sent to the worker (two per stream update).", perWorker, nil)
	descMerged       = prometheus.NewDesc("sketchcc_deltas_merged_total", "The worker's deltas merged into the sketches.", perWorker, nil)
	descResent       = prometheus.NewDesc("sketchcc_batches_resent_total", "Batches sent to the worker, unanswered when its connection ended, and handed out again.", perWorker, nil)
	descInFlight     = prometheus.NewDesc("sketchcc_credits_in_use", "Batches sent to the worker and not yet answered or handed back (credits in use).", perWorker, nil)
	descWire         = prometheus.NewDesc("sketchcc_wire_bytes_total", "Data-plane bytes exchanged with the worker, by direction from the main node.", []string{"worker", "direction"}, nil)
	descConnected    = prometheus.NewDesc("sketchcc_worker_connected", "1 while the worker's data-plane connection is up.", perWorker, nil)
	descWorkers      = prometheus.NewDesc("sketchcc_workers_connected", "Workers connected now.", nil, nil)
	descLocal        = prometheus.NewDesc("sketchcc_batches_local_total", "Batches sketched on the main node by the distributors: cutoff (smaller than --local-cutoff) or fallback (no worker connected, or a failed worker's batches).", []string{"reason"}, nil)
	descDuplicates   = prometheus.NewDesc("sketchcc_duplicate_deltas_total", "Deltas dropped because their batch was answered already.", nil, nil)
	descBadFrames    = prometheus.NewDesc("sketchcc_bad_frames_total", "Frames from the worker that failed their integrity check (CRC-32C, or AES-GCM under a cluster key); each ended the connection and its batches were sent again.", perWorker, nil)
	poolDescriptions = []*prometheus.Desc{descShipped, descShippedIDs, descMerged, descResent, descInFlight, descWire,
		descConnected, descWorkers, descLocal, descDuplicates, descBadFrames}
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range poolDescriptions {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.pool.Load()
	if p == nil {
		return
	}
	st := p.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	connected := 0
	for _, w := range st.Workers {
		counter(descShipped, w.Batches, w.Name)
		counter(descShippedIDs, w.Updates, w.Name)
		counter(descMerged, w.DeltasMerged, w.Name)
		counter(descResent, w.BatchesResent, w.Name)
		counter(descBadFrames, w.BadFrames, w.Name)
		// The three counters are read one after the other: clamp the
		// difference at zero.
		gauge(descInFlight, float64(max(int64(w.Batches)-int64(w.DeltasMerged)-int64(w.BatchesResent), 0)), w.Name)
		counter(descWire, w.BytesSent, w.Name, "sent")
		counter(descWire, w.BytesReceived, w.Name, "received")
		up := 0.0
		if w.Connected {
			up, connected = 1, connected+1
		}
		gauge(descConnected, up, w.Name)
	}
	gauge(descWorkers, float64(connected))
	counter(descLocal, st.LocalCutoffBatches, "cutoff")
	counter(descLocal, st.FallbackBatches, "fallback")
	counter(descDuplicates, st.DuplicateDeltas)
}
