package main

// --metrics-listen: the worker's Prometheus metrics, read at scrape time
// from distributor.Worker.Stats through Worker.Collector (package
// internal/metrics serves them on a registry of their own).

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"sketchcc/distributor"
	"sketchcc/internal/metrics"
)

// startMetrics serves w's metrics on addr; it returns nil without an
// address. The caller closes the server.
func startMetrics(addr string, w *distributor.Worker, threads int, log *slog.Logger) (*metrics.Server, error) {
	if addr == "" {
		return nil, nil
	}
	reg := metrics.NewRegistry()
	reg.MustRegister(w.Collector(),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_worker_threads",
			Help: "Goroutines computing deltas (--threads)."}, func() float64 { return float64(threads) }))
	srv, err := metrics.Serve(addr, reg, metrics.Config{Logger: log})
	if err != nil {
		return nil, err
	}
	log.Info("metrics listening", "addr", srv.Addr(), "max_conns", srv.MaxConns())
	return srv, nil
}
