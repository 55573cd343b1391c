package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"sketchcc/internal/testwait"
)

// TestJSONLogs: with --log-format json every stderr line of the main node
// is a JSON object, and a worker's life shows as one line per event with
// the stable keys component, worker and addr: joined, connected, then
// connection lost with the batches sent elsewhere when it is killed.
func TestJSONLogs(t *testing.T) {
	skipShort(t)
	path := kron12(t)
	m := start(t, "main-node", nil, "--stream", path, "--listen", "127.0.0.1:0", "--gossip-local",
		"--log-level", "info", "--log-format", "json", "--progress", "never", "--json",
		"--expect-workers", "2", "--local-workers", "0", "--batch-factor", "0.05", "--credits", "4")
	addr := m.waitLog(`"msg":"main node listening","addr":"([^"]+)"`, 10*time.Second)[1]
	w1 := startWorker(t, addr, "--metrics-listen", "127.0.0.1:0")
	startWorker(t, addr)
	name1 := w1.waitLog(`msg="worker listening" .* name=(\S+)`, time.Second)[1]
	// Kill the first worker once it has batches.
	batches := workerBatches(w1)
	testwait.Until(t, 10*time.Second, 5*time.Millisecond, func() error {
		if n, err := batches(); err != nil || n == 0 {
			return fmt.Errorf("the worker has sketched %d batches (%v)", n, err)
		}
		return nil
	})
	w1.cmd.Process.Signal(syscall.SIGKILL)
	finish(t, m)

	events := map[string]map[string]any{} // msg → record, for worker name1
	for _, l := range strings.Split(m.log(), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("main-node stderr line is not JSON: %q: %v", l, err)
		}
		for _, k := range []string{"time", "level", "msg"} {
			if _, ok := rec[k]; !ok {
				t.Errorf("log record without %q: %q", k, l)
			}
		}
		if rec["worker"] == name1 {
			events[rec["msg"].(string)] = rec
		}
	}
	for _, msg := range []string{"worker joined", "worker connected"} {
		rec, ok := events[msg]
		if !ok || rec["component"] != "distributor" || rec["addr"] == nil {
			t.Errorf("no %q line with component=distributor, worker=%s and addr: %v", msg, name1, rec)
		}
	}
	lost, ok := events["worker connection lost; sending its batches elsewhere"]
	if !ok {
		lost, ok = events["worker connection lost"]
	}
	if !ok || lost["err"] == nil || lost["addr"] == nil {
		t.Errorf("no 'worker connection lost' line with err and addr for the killed worker %s: %v", name1, events)
	}
}
