package distributor

import (
	"sync"
	"sync/atomic"
)

// WorkerStats counts the traffic with one worker, over all its
// connections.
type WorkerStats struct {
	// Name is the worker's node name and Addr its data-plane address.
	Name, Addr string
	// Connected reports whether the worker is connected now.
	Connected bool
	// Connections counts the connections that passed the handshake;
	// Refused those that did not.
	Connections, Refused uint64
	// Batches is the number of batches sent to the worker and Updates
	// the neighbour ids in them (each stream update is two neighbour ids,
	// one per endpoint).
	Batches, Updates uint64
	// BytesSent and BytesReceived count the data-plane bytes to and from
	// the worker, frames and handshake.
	BytesSent, BytesReceived uint64
	// DeltasMerged counts the worker's deltas merged into the sketches.
	DeltasMerged uint64
	// BatchesResent counts batches sent to the worker that it did not
	// answer before its connection ended: they went to other workers or
	// were sketched on the main node.
	BatchesResent uint64
	// DuplicateDeltas counts deltas dropped because their batch had been
	// answered already or was unknown.
	DuplicateDeltas uint64
	// BatchesLate counts batches sent to the worker and not answered
	// within Config.AnswerTimeout: they were sketched on the main node.
	BatchesLate uint64
	// LastError is why the last connection ended or was refused, if it
	// did.
	LastError string
}

// Stats counts what a Pool has done.
type Stats struct {
	// Workers has one entry per worker name, in order of first contact.
	Workers []WorkerStats
	// LocalCutoffBatches counts batches sketched on the main node because
	// they were under Config.LocalCutoff.
	LocalCutoffBatches uint64
	// FallbackBatches counts batches sketched on the main node because no
	// worker was connected, or because a failed worker's batches did not
	// fit the retry queue.
	FallbackBatches uint64
	// RemoteBatches counts batches whose delta came from a worker.
	RemoteBatches uint64
	// BatchesResent counts batches handed out again after a worker's
	// connection ended.
	BatchesResent uint64
	// DuplicateDeltas counts deltas dropped as duplicates.
	DuplicateDeltas uint64
	// BytesSent and BytesReceived add up the workers' data-plane bytes.
	BytesSent, BytesReceived uint64
	// WorkersLeft counts workers that left the cluster (they said so),
	// WorkersFailed those the cluster declared dead; news of a process
	// that a newer one under its name had replaced is not counted.
	WorkersLeft, WorkersFailed uint64
}

// workerStats is the live form of WorkerStats.
type workerStats struct {
	name, addr                 string
	connections, refused       atomic.Uint64
	batches, updates           atomic.Uint64
	bytesOut, bytesIn          atomic.Uint64
	merged, resent, duplicates atomic.Uint64
	late                       atomic.Uint64
	mu                         sync.Mutex
	err                        string
}

func (s *workerStats) setErr(err error) {
	if err == nil {
		return
	}
	s.mu.Lock()
	s.err = err.Error()
	s.mu.Unlock()
}

func (s *workerStats) snapshot() WorkerStats {
	s.mu.Lock()
	e := s.err
	s.mu.Unlock()
	return WorkerStats{Name: s.name, Addr: s.addr,
		Connections: s.connections.Load(), Refused: s.refused.Load(),
		Batches: s.batches.Load(), Updates: s.updates.Load(),
		BytesSent: s.bytesOut.Load(), BytesReceived: s.bytesIn.Load(),
		DeltasMerged: s.merged.Load(), BatchesResent: s.resent.Load(),
		DuplicateDeltas: s.duplicates.Load(), BatchesLate: s.late.Load(), LastError: e}
}

// statsLocked returns the counters of the worker called name, creating
// them. p.mu must be held.
func (p *Pool) statsLocked(name, addr string) *workerStats {
	s := p.mu.stats[name]
	if s == nil {
		s = &workerStats{name: name}
		p.mu.stats[name] = s
		p.mu.order = append(p.mu.order, name)
	}
	s.addr = addr
	return s
}

// Stats returns the counters. Safe for concurrent use.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Stats{LocalCutoffBatches: p.localCutoff.Load(), FallbackBatches: p.fallback.Load(),
		BatchesResent: p.resent.Load(), DuplicateDeltas: p.duplicates.Load(),
		WorkersLeft: p.left.Load(), WorkersFailed: p.failed.Load()}
	for _, name := range p.mu.order {
		w := p.mu.stats[name].snapshot()
		if d := p.mu.dists[name]; d != nil {
			w.Connected = d.connected.Load()
		}
		st.Workers = append(st.Workers, w)
		st.RemoteBatches += w.DeltasMerged
		st.BytesSent += w.BytesSent
		st.BytesReceived += w.BytesReceived
	}
	return st
}
