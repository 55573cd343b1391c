package distributor

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNewReport: the report carries every counter under its JSON name,
// divides the bytes by the stream updates (not by zero), and lists no
// worker and no connection as [] rather than null.
func TestNewReport(t *testing.T) {
	st := Stats{LocalCutoffBatches: 1, FallbackBatches: 2, RemoteBatches: 3, BatchesResent: 4, BatchesLate: 5,
		DuplicateDeltas: 6, BadFrames: 7, BytesSent: 300, BytesReceived: 100, WorkersLeft: 8, WorkersFailed: 9,
		Workers: []WorkerStats{
			{Name: "w1", Addr: "a:1", Batches: 3, Refused: 1, Conns: []ConnStats{
				{Addr: "a:0", Refused: true, Err: "refused"},
				{Addr: "a:1", Incarnation: 2, Batches: 3, DeltasMerged: 2, DuplicateDeltas: 1, BytesSent: 300}}},
			{Name: "w2"},
		}}
	r := NewReport(st, 200)
	if r.NetworkBytesPerUpdate != 2 || r.NetworkBytesPerUpdateOut != 1.5 || r.NetworkBytesPerUpdateBack != 0.5 {
		t.Errorf("bytes per update %v, %v out, %v back; want 2, 1.5, 0.5",
			r.NetworkBytesPerUpdate, r.NetworkBytesPerUpdateOut, r.NetworkBytesPerUpdateBack)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"local_cutoff_batches":1`, `"fallback_batches":2`, `"remote_batches":3`,
		`"batches_resent":4`, `"batches_late":5`, `"duplicate_deltas":6`, `"bad_frames":7`, `"workers_left":8`,
		`"workers_failed":9`, `"name":"w1","addr":"a:1","batches":3`, `"refused":1`,
		`{"addr":"a:0","refused":true,"batches":0`, `"error":"refused"`,
		`"addr":"a:1","incarnation":2,"batches":3,"deltas_merged":2`, `"duplicate_deltas":1`,
		`"name":"w2","addr":"","batches":0`, `"connections":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("report %s\nlacks %s", b, want)
		}
	}
	if r := NewReport(Stats{}, 0); r.NetworkBytesPerUpdate != 0 || r.Workers == nil {
		t.Errorf("no updates, no workers: %+v", r)
	}
}
