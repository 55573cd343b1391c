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

// PoolCollector returns a Prometheus collector of the Stats of the Pool
// that pool returns at each scrape: per worker, batches and neighbour ids
// shipped, deltas merged, batches re-sent, credits in use, wire bytes,
// bad frames and whether it is connected; in all, workers connected,
// batches sketched on the main node by reason, duplicate deltas. While
// pool returns nil (no Pool yet) it reports nothing. It registers
// nothing; the caller does.
func PoolCollector(pool func() *Pool) prometheus.Collector { return poolCollector{pool} }

type poolCollector struct{ pool func() *Pool }

var (
	perWorker        = []string{"worker"}
	descShipped      = prometheus.NewDesc("sketchcc_batches_shipped_total", "Batches sent to the worker.", perWorker, nil)
	descShippedIDs   = prometheus.NewDesc("sketchcc_neighbor_ids_shipped_total", "Neighbour ids in the batches sent to the worker (two per stream update).", perWorker, nil)
	descMerged       = prometheus.NewDesc("sketchcc_deltas_merged_total", "The worker's deltas merged into the sketches.", perWorker, nil)
	descResent       = prometheus.NewDesc("sketchcc_batches_resent_total", "Batches sent to the worker, unanswered when its connection ended, and handed out again.", perWorker, nil)
	descInFlight     = prometheus.NewDesc("sketchcc_credits_in_use", "Batches sent to the worker and not yet answered or handed back (credits in use).", perWorker, nil)
	descPoolWire     = prometheus.NewDesc("sketchcc_wire_bytes_total", "Data-plane bytes exchanged with the worker, by direction from the main node.", []string{"worker", "direction"}, nil)
	descConnected    = prometheus.NewDesc("sketchcc_worker_connected", "1 while the worker's data-plane connection is up.", perWorker, nil)
	descWorkers      = prometheus.NewDesc("sketchcc_workers_connected", "Workers connected now.", nil, nil)
	descLocal        = prometheus.NewDesc("sketchcc_batches_local_total", "Batches sketched on the main node by the distributors: cutoff (smaller than the local cutoff) or fallback (no worker connected, or a failed worker's batches).", []string{"reason"}, nil)
	descDuplicates   = prometheus.NewDesc("sketchcc_duplicate_deltas_total", "Deltas dropped because their batch was answered already.", nil, nil)
	descPoolBad      = prometheus.NewDesc("sketchcc_bad_frames_total", "Frames from the worker that failed their integrity check (CRC-32C, or AES-GCM under a cluster key); each ended the connection and its batches were sent again.", perWorker, nil)
	poolDescriptions = []*prometheus.Desc{descShipped, descShippedIDs, descMerged, descResent, descInFlight, descPoolWire,
		descConnected, descWorkers, descLocal, descDuplicates, descPoolBad}
)

func (c poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range poolDescriptions {
		ch <- d
	}
}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	p := c.pool()
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
		counter(descPoolBad, w.BadFrames, w.Name)
		// The counters are read one after the other: clamp the
		// difference at zero.
		out := int64(w.Batches) - int64(w.DeltasMerged) - int64(w.BatchesResent) - int64(w.BatchesLate)
		gauge(descInFlight, float64(max(out, 0)), w.Name)
		counter(descPoolWire, w.BytesSent, w.Name, "sent")
		counter(descPoolWire, w.BytesReceived, w.Name, "received")
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
