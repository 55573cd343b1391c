package main

import (
	"strings"
	"testing"
)

// TestVersionAndLogFormat: --version needs no other flag, prints the Go
// version and exits 0; --log-format takes text or json only; json logs are
// one object per line.
func TestVersionAndLogFormat(t *testing.T) {
	for _, r := range []result{runMain(t, "--version"), runBinary(t, "--version")} {
		if r.code != 0 || !strings.HasPrefix(r.stdout, "main-node sketchcc ") || !strings.Contains(r.stdout, " go1.") || r.stderr != "" {
			t.Errorf("--version: %v", r)
		}
	}
	if r := runMain(t, "--stream", multiples, "--log-format", "xml"); r.code != 2 || !strings.Contains(r.stderr, `want text or json, got "xml"`) {
		t.Errorf("--log-format xml: %v", r)
	}
	r := runMain(t, "--stream", multiples, "--log-format", "json", "--log-level", "info", "--json")
	if r.code != 0 {
		t.Fatalf("--log-format json: %v", r)
	}
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		if !strings.HasPrefix(l, `{"time":`) || !strings.Contains(l, `"level":"INFO"`) {
			t.Errorf("--log-format json wrote %q", l)
		}
	}
}
