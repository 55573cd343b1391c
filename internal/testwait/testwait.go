// Package testwait is the tests' one way to wait for a condition that
// another goroutine or process makes true: poll it, on a ticker, until it
// holds or a deadline passes. Tests of several packages share it, so that
// none writes its own loop around time.Sleep (the lint test refuses one).
package testwait

import (
	"testing"
	"time"
)

// Until calls f every `every` until it returns nil, and fails tb (Fatal,
// from the test's goroutine only) with f's last error if total passes
// first. f runs at once, then on each tick.
func Until(tb testing.TB, total, every time.Duration, f func() error) {
	tb.Helper()
	if err := For(total, every, f); err != nil {
		tb.Fatalf("after %v: %v", total, err)
	}
}

// For is Until for callers that handle the failure themselves (a helper
// goroutine, a cleanup that only logs): it returns nil once f does, or
// f's last error once total has passed. Safe from any goroutine.
func For(total, every time.Duration, f func() error) error {
	deadline := time.Now().Add(total)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		err := f()
		if err == nil || !time.Now().Before(deadline) {
			return err
		}
		<-tick.C
	}
}
