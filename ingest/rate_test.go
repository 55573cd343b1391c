package ingest

import (
	"testing"
	"time"
)

// TestRateMeter checks the progress bar's rate: hidden until its samples
// span a second (a burst in the first milliseconds showed 21 G updates/s),
// then the growth over the last rateWindow.
func TestRateMeter(t *testing.T) {
	var m RateMeter
	t0 := time.Unix(0, 0)
	m.Add(t0, 0)
	m.Add(t0.Add(5*time.Millisecond), 100_000_000)
	if r, ok := m.Rate(); ok {
		t.Fatalf("rate %v shown after 5 ms", r)
	}
	// 10 M updates/s from then on, sampled every 200 ms for 10 s.
	for i := 1; i <= 50; i++ {
		m.Add(t0.Add(5*time.Millisecond+time.Duration(i)*200*time.Millisecond), 100_000_000+uint64(i)*2_000_000)
		r, ok := m.Rate()
		if i < 5 && ok {
			t.Fatalf("rate %v shown after %d samples", r, i+2)
		}
		if i >= 30 && (!ok || r != 10_000_000) {
			t.Fatalf("sample %d: rate %v, %v; want 10 M/s once the burst is out of the window", i, r, ok)
		}
	}
	if len(m.at) > int(rateWindow/(200*time.Millisecond))+2 {
		t.Errorf("%d samples kept for a %v window", len(m.at), rateWindow)
	}
}
