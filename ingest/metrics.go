package ingest

import "github.com/prometheus/client_golang/prometheus"

// Collectors returns Prometheus collectors of e, read at each scrape:
// sketchcc_updates_read_total (Updates), sketchcc_sketch_bytes
// (SketchBytes), sketchcc_batch_queue_depth (the full batches waiting in
// the work queue) and sketchcc_stream_updates, which is streamUpdates,
// the update count of the stream's header. It registers nothing; the
// caller does.
func (e *Engine) Collectors(streamUpdates uint64) []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "sketchcc_updates_read_total",
			Help: "Edge updates read from the stream and inserted into the gutters."},
			func() float64 { return float64(e.Updates()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_stream_updates",
			Help: "Edge updates the stream's header announces."},
			func() float64 { return float64(streamUpdates) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_sketch_bytes",
			Help: "Bytes of the vertex sketches."},
			func() float64 { return float64(e.SketchBytes()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "sketchcc_batch_queue_depth",
			Help: "Full batches waiting in the work queue for a delta worker or a distributor."},
			func() float64 { return float64(len(e.Gutters().Batches())) }),
	}
}
