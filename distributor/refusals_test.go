package distributor

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestRefusals: each distinct refusal (reason and peer host) is kept once,
// whatever port the peer retried from, and logged at once; a repeat is
// logged at most once a second; past maxRefusals the list says there
// were more.
func TestRefusals(t *testing.T) {
	var r refusals
	t0 := time.Unix(1000, 0)
	wrong := "Failed to read remote state: No installed keys could decrypt the message from=127.0.0.1:%d"
	none := "Failed push/pull merge: encryption is configured but remote state is not encrypted from=127.0.0.1:%d"
	v6 := "Failed to read remote state: No installed keys could decrypt the message from=[::1]:%d"
	for i, c := range []struct {
		msg  string
		at   time.Duration
		logs bool
	}{
		{fmt.Sprintf(wrong, 40001), 0, true},
		{fmt.Sprintf(wrong, 40002), 100 * time.Millisecond, false}, // the same peer retrying
		{fmt.Sprintf(none, 40003), 200 * time.Millisecond, true},   // another reason: logged at once
		{fmt.Sprintf(v6, 40004), 300 * time.Millisecond, true},
		{fmt.Sprintf(wrong, 40005), 1400 * time.Millisecond, true}, // a second after the last logged
	} {
		if got := r.add(c.msg, t0.Add(c.at)); got != c.logs {
			t.Errorf("%d: add(%q) says log %v, want %v", i, c.msg, got, c.logs)
		}
	}
	want := "Failed to read remote state: No installed keys could decrypt the message from=127.0.0.1; " +
		"Failed push/pull merge: encryption is configured but remote state is not encrypted from=127.0.0.1; " +
		"Failed to read remote state: No installed keys could decrypt the message from=[::1]"
	if got := r.String(); got != want {
		t.Errorf("refusals %q, want %q", got, want)
	}
	for i := range maxRefusals {
		r.add(fmt.Sprintf("No installed keys could decrypt the message from=10.0.0.%d:7946", i), t0)
	}
	if got := r.String(); !strings.HasSuffix(got, "from=10.0.0.12; and more") || strings.Count(got, "; ") != maxRefusals {
		t.Errorf("past %d refusals: %q", maxRefusals, got)
	}
}
