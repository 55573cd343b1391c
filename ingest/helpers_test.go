package ingest

import (
	"testing"
	"time"
)

// checkFor calls f every `every` until it returns nil or total has passed,
// and fails the test with f's last error then (nats' checkFor).
func checkFor(t testing.TB, total, every time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(total)
	var err error
	for time.Now().Before(deadline) {
		if err = f(); err == nil {
			return
		}
		time.Sleep(every)
	}
	t.Fatalf("after %v: %v", total, err)
}
