package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVersionAndLogFormat: --version needs no other flag, prints the Go
// version and exits 0; --log-format takes text or json only; json logs are
// one object per line, the error a run ends with included.
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
	bad := filepath.Join(t.TempDir(), "short.bin")
	if err := os.WriteFile(bad, []byte{4, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	r = runMain(t, "--stream", bad, "--log-format", "json", "--log-level", "info")
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	var last struct{ Level, Msg, Err string }
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); r.code != 1 || err != nil ||
		last.Level != "ERROR" || last.Msg != "main-node: error" || !strings.Contains(last.Err, "truncated") {
		t.Errorf("--log-format json, a truncated stream: last line %q (%v), %v", lines[len(lines)-1], err, r)
	}
}
