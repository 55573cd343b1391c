package main

// --metrics-listen: the main node's Prometheus metrics, read at scrape
// time from the engine (ingest.Engine.Collectors) and the pool's Stats
// (distributor.PoolCollector); package internal/metrics serves them on a
// registry of their own. Queries are the one thing observed as they
// happen: their flush and CC latencies go into histograms.

import (
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

// mainMetrics is the run's metrics; srv is nil without --metrics-listen,
// and then nothing is served (metrics.Server's Close and Linger do
// nothing).
type mainMetrics struct {
	srv   *metrics.Server
	pool  atomic.Pointer[distributor.Pool] // the cluster's, once it has one
	query *prometheus.HistogramVec
}

// startMetrics serves e's metrics on c.listen; streamUpdates is the
// stream header's update count.
func startMetrics(c metricsConfig, e *ingest.Engine, streamUpdates uint64, log *slog.Logger) (*mainMetrics, error) {
	m := &mainMetrics{query: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "sketchcc_query_duration_seconds",
		Help: "Latency of connected-components queries by phase: flush (gutters emptied and every delta merged) and cc (Boruvka, or the greedy shortcut).",
		// 1 ms to about 4.4 minutes.
		Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
	}, []string{"phase"})}
	if c.listen == "" {
		return m, nil
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(e.Collectors(streamUpdates)...)
	reg.MustRegister(m.query, distributor.PoolCollector(m.pool.Load),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_main_cores",
			Help: "Cores the main node runs on now (GOMAXPROCS; --cores, less same-host workers' threads)."},
			func() float64 { return float64(runtime.GOMAXPROCS(0)) }))
	var err error
	if m.srv, err = metrics.Serve(c.listen, reg, metrics.Config{Logger: log}); err != nil {
		return nil, err
	}
	// Scripts read the address at --log-level info when the port is 0.
	log.Info("metrics listening", "addr", m.srv.Addr(), "max_conns", m.srv.MaxConns())
	return m, nil
}

// observeQuery records one query's latencies.
func (m *mainMetrics) observeQuery(q queryRecord) {
	m.query.WithLabelValues("flush").Observe(q.FlushSeconds)
	m.query.WithLabelValues("cc").Observe(q.CCSeconds)
}
