package distributor

import (
	"testing"
	"time"
)

func TestPoolOneWorker(t *testing.T) {
	checkNoLeaks(t)
	addr, w := startWorker(t, WorkerConfig{Threads: 2})
	e := newTestEngine(t, 300, 40)
	p, err := NewPool(e, Config{Logger: testLogger(t).With("side", "main"), LocalCutoff: 10})
	requireNoError(t, err)
	p.Add("w1", addr)
	checkFor(t, 5*time.Second, 5*time.Millisecond, func() error { return p.WaitWorkers(t.Context(), 1) })
	us := randomUpdates(1, 300, 20000)
	runStream(t, e, p, us, nil)
	st := p.Stats()
	requireNoError(t, p.Close())
	e.close()
	if st.RemoteBatches == 0 || len(st.Workers) != 1 || st.Workers[0].DeltasMerged != st.RemoteBatches {
		t.Errorf("stats %+v: want remote batches from w1", st)
	}
	t.Logf("stats %+v, worker %+v", st, w.Stats())
}
