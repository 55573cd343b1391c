package distributor

import "github.com/prometheus/client_golang/prometheus"

// Collector returns a Prometheus collector of the worker's Stats, read at
// each scrape: connections, refusals, batches, neighbour ids, wire bytes
// and bad frames, all counters. It registers nothing; the caller does.
func (w *Worker) Collector() prometheus.Collector { return workerCollector{w} }

type workerCollector struct{ w *Worker }

var (
	descConnections = prometheus.NewDesc("sketchcc_worker_connections_total", "Main-node connections accepted.", nil, nil)
	descRefused     = prometheus.NewDesc("sketchcc_worker_refused_total", "Connections dropped before or during the handshake.", nil, nil)
	descBatches     = prometheus.NewDesc("sketchcc_batches_sketched_total", "Batches received and turned into deltas.", nil, nil)
	descIDs         = prometheus.NewDesc("sketchcc_neighbor_ids_sketched_total", "Neighbour ids in those batches: two per stream update, less the equal pairs that cancel within a batch and are not sent.", nil, nil)
	descWire        = prometheus.NewDesc("sketchcc_wire_bytes_total", "Data-plane bytes by direction from this worker.", []string{"direction"}, nil)
	descBadFrames   = prometheus.NewDesc("sketchcc_worker_bad_frames_total", "Frames from main nodes that failed their integrity check (CRC-32C, or AES-GCM under a cluster key); each ended its connection.", nil, nil)
)

func (c workerCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descConnections, descRefused, descBatches, descIDs, descWire, descBadFrames} {
		ch <- d
	}
}

func (c workerCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.w.Stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	counter(descConnections, st.Connections)
	counter(descRefused, st.Refused)
	counter(descBatches, st.Batches)
	counter(descIDs, st.Updates)
	counter(descWire, st.BytesSent, "sent")
	counter(descWire, st.BytesReceived, "received")
	counter(descBadFrames, st.BadFrames)
}
