package distributor

import (
	"context"
	"strings"
	"time"
)

// The main node's waits on its cluster: for the workers it expects before
// reading the stream, and for the batches handed out once the final
// answer is known. Both are bounded by a timeout whose cause the caller
// words (context.WithTimeoutCause), so that the error names the caller's
// setting.

// AwaitWorkers blocks until n workers are connected (WaitWorkers) or
// timeout passes, and logs how long they took. Past timeout its error
// wraps timedOut; a done ctx ends it with ctx's cause.
func (c *Cluster) AwaitWorkers(ctx context.Context, n int, timeout time.Duration, timedOut error) error {
	t0 := time.Now()
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, timedOut)
	defer cancel()
	if err := c.WaitWorkers(wctx, n); err != nil {
		return err
	}
	c.log.Info("workers connected", "workers", n, "duration", time.Since(t0))
	return nil
}

// Drain waits, at most timeout, until settle returns nil: settle is the
// pipeline's wait until every batch handed out has been merged
// (ingest.Engine.Settle), which a final answer that needed no flush did
// not wait for. Past timeout it logs settle's error, which wraps
// timedOut, and who is late (Pool.Late), and closes the Pool, which
// sketches their batches here and counts them as re-sent. When ctx is
// done it returns at once.
func (c *Cluster) Drain(ctx context.Context, settle func(context.Context) error, timeout time.Duration, timedOut error) {
	if c == nil {
		return
	}
	sctx, cancel := context.WithTimeoutCause(ctx, timeout, timedOut)
	defer cancel()
	if err := settle(sctx); err != nil {
		if ctx.Err() != nil {
			return
		}
		c.log.Warn("batches still out after the final answer; sketching them here", "err", err,
			"late", strings.Join(c.pool.Late(), "; "))
		c.pool.Close()
	}
}
