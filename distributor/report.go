package distributor

// Report is a Pool's Stats as the main node's JSON summary prints them
// (main-node --json): field names and tags are a stable interface.
type Report struct {
	// Workers is per worker: batches and neighbour ids ("updates", two
	// per stream update) sent, data-plane bytes, deltas merged, batches
	// re-sent elsewhere after its connection ended.
	Workers []WorkerReport `json:"workers"`
	// NetworkBytesPerUpdate is data-plane bytes sent plus received per
	// stream update: the communication factor. Out is the part sent to
	// the workers (batches), Back the part received (deltas); both count
	// frames and handshakes.
	NetworkBytesPerUpdate     float64 `json:"network_bytes_per_update"`
	NetworkBytesPerUpdateOut  float64 `json:"network_bytes_per_update_out"`
	NetworkBytesPerUpdateBack float64 `json:"network_bytes_per_update_back"`
	LocalCutoffBatches        uint64  `json:"local_cutoff_batches"`
	FallbackBatches           uint64  `json:"fallback_batches"`
	RemoteBatches             uint64  `json:"remote_batches"`
	BatchesResent             uint64  `json:"batches_resent"`
	BatchesLate               uint64  `json:"batches_late"`
	DuplicateDeltas           uint64  `json:"duplicate_deltas"`
	// BadFrames counts frames from workers that failed their integrity
	// check (a CRC-32C, or under a cluster key an AES-GCM tag); each
	// ended its connection, whose batches went elsewhere.
	BadFrames uint64 `json:"bad_frames"`
	// WorkersLeft and WorkersFailed count the workers that left the
	// cluster and those it declared dead.
	WorkersLeft   uint64 `json:"workers_left"`
	WorkersFailed uint64 `json:"workers_failed"`
}

// WorkerReport is one worker name in Report.Workers: the sums over its
// connections, which Connections lists (WorkerStats).
type WorkerReport struct {
	Name          string       `json:"name"`
	Addr          string       `json:"addr"`
	Batches       uint64       `json:"batches"`
	Updates       uint64       `json:"updates"`
	BytesSent     uint64       `json:"bytes_sent"`
	BytesReceived uint64       `json:"bytes_received"`
	DeltasMerged  uint64       `json:"deltas_merged"`
	BatchesResent uint64       `json:"batches_resent"`
	BatchesLate   uint64       `json:"batches_late"`
	BadFrames     uint64       `json:"bad_frames"`
	Refused       uint64       `json:"refused,omitempty"`
	LastError     string       `json:"last_error,omitempty"`
	Connections   []ConnReport `json:"connections"`
}

// ConnReport is one connection to a worker (ConnStats): batches =
// deltas_merged + batches_resent + batches_late.
type ConnReport struct {
	Addr          string `json:"addr"`
	Incarnation   uint64 `json:"incarnation,omitempty"`
	Refused       bool   `json:"refused,omitempty"`
	Batches       uint64 `json:"batches"`
	DeltasMerged  uint64 `json:"deltas_merged"`
	BatchesResent uint64 `json:"batches_resent"`
	BatchesLate   uint64 `json:"batches_late"`
	Duplicates    uint64 `json:"duplicate_deltas"`
	BadFrames     uint64 `json:"bad_frames"`
	BytesSent     uint64 `json:"bytes_sent"`
	BytesReceived uint64 `json:"bytes_received"`
	Error         string `json:"error,omitempty"`
}

// NewReport returns st as a Report after updates stream updates, which
// the per-update byte counts divide by (they stay 0 for 0 updates).
// Workers and every Connections are empty, not nil, when there are none.
func NewReport(st Stats, updates uint64) *Report {
	r := &Report{Workers: []WorkerReport{}, LocalCutoffBatches: st.LocalCutoffBatches,
		FallbackBatches: st.FallbackBatches, RemoteBatches: st.RemoteBatches,
		BatchesResent: st.BatchesResent, BatchesLate: st.BatchesLate, DuplicateDeltas: st.DuplicateDeltas,
		BadFrames: st.BadFrames, WorkersLeft: st.WorkersLeft, WorkersFailed: st.WorkersFailed}
	if updates > 0 {
		r.NetworkBytesPerUpdate = float64(st.BytesSent+st.BytesReceived) / float64(updates)
		r.NetworkBytesPerUpdateOut = float64(st.BytesSent) / float64(updates)
		r.NetworkBytesPerUpdateBack = float64(st.BytesReceived) / float64(updates)
	}
	for _, w := range st.Workers {
		wr := WorkerReport{Name: w.Name, Addr: w.Addr, Batches: w.Batches,
			Updates: w.Updates, BytesSent: w.BytesSent, BytesReceived: w.BytesReceived,
			DeltasMerged: w.DeltasMerged, BatchesResent: w.BatchesResent, BatchesLate: w.BatchesLate,
			BadFrames: w.BadFrames, Refused: w.Refused, LastError: w.LastError, Connections: []ConnReport{}}
		for _, c := range w.Conns {
			wr.Connections = append(wr.Connections, ConnReport{Addr: c.Addr, Incarnation: c.Incarnation,
				Refused: c.Refused, Batches: c.Batches, DeltasMerged: c.DeltasMerged, BatchesResent: c.BatchesResent,
				BatchesLate: c.BatchesLate, Duplicates: c.DuplicateDeltas, BadFrames: c.BadFrames, BytesSent: c.BytesSent,
				BytesReceived: c.BytesReceived, Error: c.Err})
		}
		r.Workers = append(r.Workers, wr)
	}
	return r
}
