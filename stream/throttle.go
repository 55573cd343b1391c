package stream

import "time"

// Throttle returns a Source that reads src at most rate updates per
// second (rate > 0), in pieces of a tenth of a second so that the pace
// stays even; it sleeps in Read on the caller's goroutine. It is for
// tests and soak runs that need a slow stream. The clock starts at the
// first Read.
func Throttle(src Source, rate float64) Source { return &throttled{Source: src, rate: rate} }

// throttled is Throttle's Source.
type throttled struct {
	Source
	rate  float64
	start time.Time
	read  uint64
}

func (t *throttled) Read(dst []Update) (int, error) {
	if t.start.IsZero() {
		t.start = time.Now()
	}
	dst = dst[:min(len(dst), max(1, int(t.rate/10)))]
	if ahead := time.Duration(float64(t.read)/t.rate*float64(time.Second)) - time.Since(t.start); ahead > 0 {
		time.Sleep(ahead)
	}
	n, err := t.Source.Read(dst)
	t.read += uint64(n)
	return n, err
}
