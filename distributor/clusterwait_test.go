package distributor

import (
	"context"
	"errors"
	"testing"
	"time"
)

func startTestCluster(t *testing.T) *Cluster {
	t.Helper()
	e := newTestPipe(t, 16, 4)
	t.Cleanup(e.close)
	c, err := StartCluster(t.Context(), e.gut, e.st, ClusterConfig{Listen: "127.0.0.1:0", GossipLocal: true,
		Logger: testLogger(t)})
	requireNoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// poolClosed reports whether c's Pool has been closed: a wait on it then
// ends with ErrClosed rather than at its deadline.
func poolClosed(c *Cluster) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	return errors.Is(c.Pool().WaitWorkers(ctx, 1), ErrClosed)
}

func TestClusterAwaitWorkers(t *testing.T) {
	c := startTestCluster(t)
	if err := c.AwaitWorkers(t.Context(), 0, time.Minute, nil); err != nil {
		t.Errorf("AwaitWorkers(0) = %v, want nil", err)
	}
	timedOut := errors.New("the wait's limit passed")
	if err := c.AwaitWorkers(t.Context(), 1, 20*time.Millisecond, timedOut); !errors.Is(err, timedOut) {
		t.Errorf("AwaitWorkers(1) with no worker = %v, want it to wrap the timeout's cause", err)
	}
}

func TestClusterDrain(t *testing.T) {
	timedOut := errors.New("the drain's limit passed")
	blocked := func(ctx context.Context) error { <-ctx.Done(); return context.Cause(ctx) }
	t.Run("settled", func(t *testing.T) {
		c := startTestCluster(t)
		c.Drain(t.Context(), func(context.Context) error { return nil }, time.Minute, timedOut)
		if poolClosed(c) {
			t.Error("Drain closed the Pool, although every batch was merged")
		}
	})
	t.Run("timeout", func(t *testing.T) {
		c := startTestCluster(t)
		var cause error
		c.Drain(t.Context(), func(ctx context.Context) error { cause = blocked(ctx); return cause }, 20*time.Millisecond, timedOut)
		if !errors.Is(cause, timedOut) {
			t.Errorf("settle's context ended with %v, want the timeout's cause", cause)
		}
		if !poolClosed(c) {
			t.Error("Drain past its timeout left the Pool open, with batches still out")
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		c := startTestCluster(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		c.Drain(ctx, blocked, time.Minute, timedOut)
		if poolClosed(c) {
			t.Error("Drain of an interrupted run closed the Pool; the run's stop does that")
		}
	})
}

// TestClusterNil: a nil *Cluster is a main node alone, and one that runs
// names nobody late and reports its (empty) fleet.
func TestClusterNil(t *testing.T) {
	var c *Cluster
	if c.Late() != nil || c.Report(10) != nil {
		t.Error("a nil Cluster names late workers or reports a fleet")
	}
	called := false
	c.Drain(t.Context(), func(context.Context) error { called = true; return nil }, time.Minute, nil)
	if called {
		t.Error("a nil Cluster's Drain waited for the pipeline")
	}
	c.Close()

	c = startTestCluster(t)
	if late := c.Late(); len(late) != 0 {
		t.Errorf("Late with no batch out: %q", late)
	}
	if r := c.Report(10); r == nil || len(r.Workers) != 0 {
		t.Errorf("Report with no worker: %+v", r)
	}
}
