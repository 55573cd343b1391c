package cputime

import (
	"os"
	"testing"
	"time"
)

// TestProcessUsage burns about 50 ms of CPU and writes to a file, then
// checks that the process's usage counts at least that user time, a
// system time per update consistent with its system seconds, and a
// positive number of busy cores.
func TestProcessUsage(t *testing.T) {
	before := ProcessUsage(0)
	if before == nil {
		t.Fatal("getrusage failed")
	}
	end := time.Now().Add(50 * time.Millisecond)
	x := uint64(1)
	for time.Now().Before(end) {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if err := os.WriteFile(t.TempDir()+"/f", make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	u := ProcessUsage(1000)
	if u.UserSeconds+u.SystemSeconds < before.UserSeconds+before.SystemSeconds+0.04 {
		t.Fatalf("CPU %.3f s after 50 ms of work from %.3f s (x=%d)", u.UserSeconds+u.SystemSeconds,
			before.UserSeconds+before.SystemSeconds, x)
	}
	if want := u.SystemSeconds * 1e9 / 1000; u.SystemNsPerUpdate != want {
		t.Fatalf("system ns per update %v, want %v", u.SystemNsPerUpdate, want)
	}
	if u.CoresBusy <= 0 {
		t.Fatalf("cores busy %v", u.CoresBusy)
	}
}
