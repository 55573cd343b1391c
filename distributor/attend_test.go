package distributor

import (
	"slices"
	"testing"
	"time"
)

func TestRejoinWait(t *testing.T) {
	var got []time.Duration
	for i := range 8 {
		got = append(got, rejoinWait(i))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second,
		10 * time.Second, 10 * time.Second, 10 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if d := rejoinWait(1 << 30); d != maxRejoinWait {
		t.Errorf("rejoinWait(2^30) = %v", d)
	}
}
