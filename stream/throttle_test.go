package stream

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"time"
)

// TestThrottle: 100 updates at 500 per second take the 0.2 s their rate
// gives (0.18 s at least, for the clock's grain), come in pieces of a
// tenth of a second, and all arrive.
func TestThrottle(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, Header{Vertices: 4, Updates: 100})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		if err := w.Write(Update{Edge: Edge{Src: 1, Dst: 2}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	src := Throttle(r, 500)
	t0 := time.Now()
	dst := make([]Update, 100)
	total := 0
	for {
		n, err := src.Read(dst)
		if n > 50 {
			t.Fatalf("a read of %d updates, more than a tenth of a second's 50", n)
		}
		total += n
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if el := time.Since(t0); total != 100 || el < 180*time.Millisecond {
		t.Errorf("%d updates in %v; want 100 in at least 180ms", total, el)
	}
}
