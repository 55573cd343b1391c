package cli

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

func TestStartProgressNone(t *testing.T) {
	f := func(mode string, total uint64) {
		t.Helper()
		var b bytes.Buffer
		stop := StartProgress(mode, &b, "ingesting", total, func() uint64 {
			t.Errorf("mode %q, total %d: count read, want no bar", mode, total)
			return 0
		})
		stop()
		if b.Len() != 0 {
			t.Errorf("mode %q, total %d: wrote %q, want nothing", mode, total, b.String())
		}
	}
	f("never", 100)
	f("auto", 100) // a bytes.Buffer is not a terminal
	f("always", 0)
}

// TestStartProgressRate runs a bar for 3 s of a bubble's clock over a
// count that grows by 1 M a second: the description shows that rate and
// the time left, and stop clears the bar.
func TestStartProgressRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var b bytes.Buffer
		t0 := time.Now()
		count := func() uint64 { return uint64(time.Since(t0) / time.Microsecond) }
		stop := StartProgress("always", &b, "ingesting", 10e6, count)
		<-time.After(3 * time.Second)
		stop()
		out := b.String()
		if want := "ingesting at 1 M updates/s, 7s left"; !strings.Contains(out, want) {
			t.Errorf("bar output lacks %q:\n%q", want, out)
		}
		if !strings.HasSuffix(out, " \r") {
			t.Errorf("bar output does not end cleared:\n%q", out)
		}
	})
}
