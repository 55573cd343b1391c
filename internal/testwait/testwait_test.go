package testwait

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestForReturnsOnceTrue(t *testing.T) {
	var n atomic.Int32
	err := For(5*time.Second, time.Millisecond, func() error {
		if n.Add(1) < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || n.Load() != 3 {
		t.Errorf("For = %v after %d calls, want nil after 3", err, n.Load())
	}
}

func TestForGivesUp(t *testing.T) {
	t0 := time.Now()
	want := errors.New("never")
	err := For(30*time.Millisecond, 5*time.Millisecond, func() error { return want })
	if !errors.Is(err, want) {
		t.Errorf("For = %v, want %v", err, want)
	}
	if d := time.Since(t0); d < 30*time.Millisecond || d > 2*time.Second {
		t.Errorf("For gave up after %v, want 30 ms and a little", d)
	}
}
