package distributor

import (
	"sync"
	"sync/atomic"
)

// ConnStats counts the traffic of one connection to a worker: one
// attempt to connect, with the handshake and what followed.
type ConnStats struct {
	// Addr is the data-plane address dialled, Incarnation the worker
	// process's NodeMeta.Incarnation (0 if unknown).
	Addr        string
	Incarnation uint64
	// Connected reports whether the connection is up now; Refused whether
	// the handshake failed (or the dial did: then no byte moved).
	Connected, Refused bool
	// Batches is the number of batches handed to the connection, Updates
	// the neighbour ids in them (each stream update is two neighbour ids,
	// one per endpoint). Every batch ends in exactly one of DeltasMerged,
	// BatchesResent or BatchesLate once the connection is over or idle:
	// Batches = DeltasMerged + BatchesResent + BatchesLate + held.
	Batches, Updates uint64
	// DeltasMerged counts the deltas merged into the sketches.
	DeltasMerged uint64
	// BatchesResent counts batches the worker held when the connection
	// ended: they went to other workers or were sketched on the main node.
	BatchesResent uint64
	// BatchesLate counts batches not answered within
	// Config.AnswerTimeout: they were sketched on the main node.
	BatchesLate uint64
	// DuplicateDeltas counts deltas dropped because their batch had been
	// answered already, was late, or was unknown.
	DuplicateDeltas uint64
	// BadFrames counts frames from the worker that failed their integrity
	// check (ErrIntegrity): the first ended the connection.
	BadFrames uint64
	// BytesSent and BytesReceived count the data-plane bytes, frames and
	// handshake.
	BytesSent, BytesReceived uint64
	// Err is why the connection ended or was refused, if it did.
	Err string
}

// WorkerStats counts the traffic with one worker name: the sums over its
// connections (re-dials, and processes restarted under the name), which
// Conns lists in order.
type WorkerStats struct {
	// Name is the worker's name and Addr its latest data-plane address.
	Name, Addr string
	// Connected reports whether the worker is connected now.
	Connected bool
	// Connections counts the connections that passed the handshake;
	// Refused those that did not.
	Connections, Refused uint64
	// Batches, Updates, BytesSent, BytesReceived, DeltasMerged,
	// BatchesResent, BatchesLate, DuplicateDeltas and BadFrames add up
	// those of Conns (see ConnStats).
	Batches, Updates         uint64
	BytesSent, BytesReceived uint64
	DeltasMerged             uint64
	BatchesResent            uint64
	BatchesLate              uint64
	DuplicateDeltas          uint64
	BadFrames                uint64
	// LastError is why the last connection ended or was refused, if it
	// did.
	LastError string
	// Conns has one entry per connection, oldest first.
	Conns []ConnStats
}

// Stats counts what a Pool has done. The per-worker counters add up to
// the totals: RemoteBatches is the sum of DeltasMerged, BatchesResent,
// BatchesLate, DuplicateDeltas, BytesSent and BytesReceived the sums of
// the workers' own.
type Stats struct {
	// Workers has one entry per worker name, in order of first contact.
	Workers []WorkerStats
	// LocalCutoffBatches counts batches sketched on the main node because
	// they were under Config.LocalCutoff.
	LocalCutoffBatches uint64
	// FallbackBatches counts batches sketched on the main node for any
	// other reason: no worker was connected, a worker's answer was late,
	// a failed worker's batches did not fit the retry queue, or the Pool
	// was closed or abandoned with batches to send again.
	FallbackBatches uint64
	// RemoteBatches counts batches whose delta came from a worker.
	RemoteBatches uint64
	// BatchesResent counts batches handed out again after a worker's
	// connection ended, BatchesLate those sketched here after their
	// deadline.
	BatchesResent, BatchesLate uint64
	// DuplicateDeltas counts deltas dropped as duplicates.
	DuplicateDeltas uint64
	// BadFrames counts frames from workers that failed their integrity
	// check; each ended its connection, whose batches went elsewhere.
	BadFrames uint64
	// BytesSent and BytesReceived add up the workers' data-plane bytes.
	BytesSent, BytesReceived uint64
	// WorkersLeft counts workers that left the cluster (they said so),
	// WorkersFailed those the cluster declared dead; news of a process
	// that a newer one under its name had replaced is not counted.
	WorkersLeft, WorkersFailed uint64
}

// workerStats is the live form of ConnStats: one connection's counters.
type workerStats struct {
	addr                       string
	inc                        uint64
	connected, refused, up     atomic.Bool // up: passed the handshake
	batches, updates           atomic.Uint64
	bytesOut, bytesIn          atomic.Uint64
	merged, resent, duplicates atomic.Uint64
	late, badFrames            atomic.Uint64
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

func (s *workerStats) snapshot() ConnStats {
	s.mu.Lock()
	e := s.err
	s.mu.Unlock()
	return ConnStats{Addr: s.addr, Incarnation: s.inc, Connected: s.connected.Load(), Refused: s.refused.Load(),
		Batches: s.batches.Load(), Updates: s.updates.Load(),
		BytesSent: s.bytesOut.Load(), BytesReceived: s.bytesIn.Load(),
		DeltasMerged: s.merged.Load(), BatchesResent: s.resent.Load(), BatchesLate: s.late.Load(),
		DuplicateDeltas: s.duplicates.Load(), BadFrames: s.badFrames.Load(), Err: e}
}

// statsLocked returns new counters for a connection to the worker called
// name. p.mu must be held.
func (p *Pool) statsLocked(name, addr string, inc uint64) *workerStats {
	if _, ok := p.mu.stats[name]; !ok {
		p.mu.order = append(p.mu.order, name)
	}
	s := &workerStats{addr: addr, inc: inc}
	p.mu.stats[name] = append(p.mu.stats[name], s)
	return s
}

// Stats returns the counters. Safe for concurrent use.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Stats{LocalCutoffBatches: p.counts.localCutoff.Load(), FallbackBatches: p.counts.fallback.Load(),
		WorkersLeft: p.left.Load(), WorkersFailed: p.failed.Load()}
	for _, name := range p.mu.order {
		w := WorkerStats{Name: name}
		for _, s := range p.mu.stats[name] {
			c := s.snapshot()
			w.Conns = append(w.Conns, c)
			w.Addr = c.Addr
			w.Connected = w.Connected || c.Connected
			if c.Refused {
				w.Refused++
			} else if s.up.Load() {
				w.Connections++
			}
			w.Batches += c.Batches
			w.Updates += c.Updates
			w.BytesSent += c.BytesSent
			w.BytesReceived += c.BytesReceived
			w.DeltasMerged += c.DeltasMerged
			w.BatchesResent += c.BatchesResent
			w.BatchesLate += c.BatchesLate
			w.DuplicateDeltas += c.DuplicateDeltas
			w.BadFrames += c.BadFrames
			if c.Err != "" {
				w.LastError = c.Err
			}
		}
		st.Workers = append(st.Workers, w)
		st.RemoteBatches += w.DeltasMerged
		st.BatchesResent += w.BatchesResent
		st.BatchesLate += w.BatchesLate
		st.DuplicateDeltas += w.DuplicateDeltas
		st.BadFrames += w.BadFrames
		st.BytesSent += w.BytesSent
		st.BytesReceived += w.BytesReceived
	}
	return st
}
